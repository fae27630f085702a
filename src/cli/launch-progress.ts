import { SingleBar } from 'cli-progress';
import { createInterface } from 'node:readline/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { CliError } from './cli-error.js';
import type { HttpClient } from './http-client.js';
import { err, printable } from './terminal.js';

const POLL_MS = 500;

interface InstanceRecord {
  status: string;
  error_message?: string | null;
}

/**
 * Follows a launch sent with `wait_ready=false` (as Xinference's CLI does): a progress
 * bar on stderr fed by `/v1/models/{uid}/progress`, the instance status from
 * `/v1/models/instances`, until READY (returns) or ERROR/TERMINATED (throws with the
 * server's reason). Ctrl-C asks whether to cancel the launch; "no" goes on following.
 */
export async function followLaunch(http: HttpClient, uid: string, options: { quiet: boolean }): Promise<void> {
  const bar = new SingleBar({
    format: `Launching ${printable(uid)} [{bar}] {percentage}% | {status}`,
    stream: process.stderr,
    // Without a terminal (logs, CI, tests) cli-progress prints one line per update instead.
    noTTYOutput: true,
    notTTYSchedule: 1000,
    gracefulExit: false,
    hideCursor: false,
  });
  let interrupted = false;
  // A poll waiting on the server (hung, or a network gone) is given up at Ctrl-C too:
  // before, the flag was read only between polls, and fetch waits minutes for headers.
  let polling = new AbortController();
  const onSigint = (): void => {
    interrupted = true;
    polling.abort();
  };
  process.on('SIGINT', onSigint);
  if (!options.quiet) bar.start(100, 0, { status: 'CREATING' });
  try {
    for (;;) {
      if (interrupted) {
        bar.stop();
        process.off('SIGINT', onSigint);
        await askToCancel(http, uid);
        interrupted = false;
        polling = new AbortController();
        process.on('SIGINT', onSigint);
        if (!options.quiet) bar.start(100, 0, { status: 'CREATING' });
      }
      try {
        if (await poll(http, uid, bar, polling.signal)) return;
      } catch (error) {
        if (!interrupted) throw error;
      }
    }
  } finally {
    bar.stop();
    process.off('SIGINT', onSigint);
  }
}

/** One look at the launch: true once READY; throws when it failed or is gone. */
async function poll(http: HttpClient, uid: string, bar: SingleBar, signal: AbortSignal): Promise<boolean> {
  const path = encodeURIComponent(uid);
  const [instance] = await http.get<InstanceRecord[]>(`/v1/models/instances?model_uid=${path}`, signal);
  if (!instance) throw new CliError(`the launch of ${uid} is gone from the server (terminated meanwhile?)`);
  if (instance.status === 'READY') {
    bar.update(100, { status: 'READY' });
    return true;
  }
  if (instance.status !== 'CREATING') {
    throw new CliError(`the launch of ${uid} failed (${instance.status}): ${instance.error_message ?? 'no reason given'}`);
  }
  const { progress } = await http.get<{ progress: number }>(`/v1/models/${path}/progress`, signal);
  bar.update(Math.floor(Math.min(1, Math.max(0, progress)) * 100), { status: instance.status });
  await sleep(POLL_MS, undefined, { signal });
  return false;
}

/** Ctrl-C during a launch: cancel it on the server, or keep following. A second Ctrl-C leaves without cancelling. */
async function askToCancel(http: HttpClient, uid: string): Promise<void> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const abandon = new AbortController();
  rl.once('SIGINT', () => abandon.abort());
  // stdin at its end (nobody to answer) counts as leaving without cancelling.
  rl.once('close', () => abandon.abort());
  let answer: string;
  try {
    answer = await rl.question(printable(`\nCancel the launch of ${uid}? [y/N] `), { signal: abandon.signal });
  } catch {
    throw new CliError(`stopped following the launch of ${uid}; it goes on on the server (\`hangar terminate --model-uid ${uid}\` stops it)`, null, 130);
  } finally {
    rl.close();
  }
  if (/^y(es)?$/i.test(answer.trim())) {
    await http.post(`/v1/models/${encodeURIComponent(uid)}/cancel`);
    // The server leaves a finished launch alone: say so rather than claim a cancel.
    const [instance] = await http.get<InstanceRecord[]>(`/v1/models/instances?model_uid=${encodeURIComponent(uid)}`);
    if (instance?.status === 'READY') {
      err(`too late to cancel: ${uid} had finished launching and is running\n`);
      return;
    }
    throw new CliError(`the launch of ${uid} was cancelled`, null, 130);
  }
}
