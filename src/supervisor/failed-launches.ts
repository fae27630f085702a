/**
 * A failed launch's record stays in the table in ERROR (contract §3.1: the uid is free
 * again), so `GET /v1/models/instances` and its events say why it failed. A client that
 * retries a launch that cannot work, under a new uid each time, added one per try for
 * as long as the service ran: only the newest are kept. A model that failed after it
 * was READY is not a failed launch and is never dropped here.
 */
export const KEPT_FAILED_LAUNCHES = 32;

interface Entry {
  readonly uid: string;
  /** When its launch failed (ms); null for one that has not. */
  readonly launchFailedAt: number | null;
}

/** Drops all but the newest `keep` failed launches' records from `instances`. */
export function forgetOldFailedLaunches(instances: Map<string, Entry>, keep = KEPT_FAILED_LAUNCHES): string[] {
  const failed = [...instances.values()].filter((i) => i.launchFailedAt !== null).sort((a, b) => a.launchFailedAt! - b.launchFailedAt!);
  const dropped = failed.slice(0, Math.max(0, failed.length - keep)).map((i) => i.uid);
  for (const uid of dropped) instances.delete(uid);
  return dropped;
}
