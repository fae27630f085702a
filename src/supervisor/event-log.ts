export type EventType = 'INFO' | 'WARNING' | 'ERROR';

export interface ModelEvent {
  event_type: EventType;
  /** Unix time in seconds, as Xinference reports it. */
  event_ts: number;
  event_content: string;
}

/** How many failed calls are kept beside the lifecycle events. */
const CALL_FAILURES_KEPT = 50;

/**
 * A model's recent events, oldest first; older ones fall off past the cap (Xinference
 * keeps 100). Failed calls are kept apart, in a smaller ring of their own: anyone who
 * may call the model can make its calls fail (a prompt too long is enough), and before
 * 2026-11-29 a hundred such 400s pushed out the launch, the crash and the restart an
 * operator reads the log for.
 */
export class EventLog {
  private readonly lifecycle: Array<ModelEvent & { seq: number }> = [];
  private readonly calls: Array<ModelEvent & { seq: number }> = [];
  private seq = 0;

  constructor(private readonly cap = 100) {}

  /** A lifecycle event: launch, ready, a replica's death, a restart, an unload. */
  add(type: EventType, content: string): void {
    this.push(this.lifecycle, this.cap, type, content);
  }

  /** A call that failed (its route and error), in the ring of its own. */
  addCallFailure(content: string): void {
    this.push(this.calls, Math.min(CALL_FAILURES_KEPT, this.cap), 'ERROR', content);
  }

  list(): ModelEvent[] {
    return [...this.lifecycle, ...this.calls].sort((a, b) => a.seq - b.seq).map(({ seq: _, ...event }) => event);
  }

  private push(ring: Array<ModelEvent & { seq: number }>, cap: number, type: EventType, content: string): void {
    ring.push({ event_type: type, event_ts: Math.floor(Date.now() / 1000), event_content: content, seq: this.seq++ });
    if (ring.length > cap) ring.splice(0, ring.length - cap);
  }
}
