#!/usr/bin/env node
// The llama.cpp runtime: one GGUF model replica, served to the control plane over
// ZeroMQ with runtime protocol v3 (docs/runtime-protocol.md), the Python runtime's
// protocol, command line and exit codes.
import { engineSocketOf } from '../runtime/endpoints.js';
import { MessageType } from '../runtime/wire.js';
import { parseArguments } from './arguments.js';
import { CallServer } from './call-server.js';
import { takeCurveKeys } from './curve-keys.js';
import { loadEngine } from './engine/load-engine.js';
import { ExitCode } from './exit-codes.js';
import { RuntimeLog } from './runtime-log.js';
import { RuntimeSockets } from './runtime-sockets.js';
import { relayPaceMs } from '../config/relay-pace-setting.js';
import { RelayPace } from './relay-pace.js';
import { StepOutbox } from './step-outbox.js';
import { startWatchdog } from './watchdog.js';

const args = parseArguments(process.argv.slice(2));
let pace: RelayPace;
try {
  pace = new RelayPace(relayPaceMs(process.env));
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(2);
}
// First, before any model code runs: the keys leave the environment here.
const curve = takeCurveKeys(process.env);
// Ctrl-C in a terminal reaches the whole process group; the control plane stops its
// runtimes itself (SHUTDOWN, then SIGTERM).
process.on('SIGINT', () => {});
const log = new RuntimeLog(args.replica);

let exiting = false;
async function exit(code: number, lingerMs: number): Promise<void> {
  if (exiting) return;
  exiting = true;
  outbox.flush();
  await server.close();
  await sockets.close(lingerMs);
  log.info(`exiting with code ${code}`);
  process.exit(code);
}

const sockets: RuntimeSockets = new RuntimeSockets(args, curve, {
  onData: (message) => server.onData(message),
  onAbort: (id) => server.onAbort(id),
  onShutdown: () => {
    // The doc gives 2 s from SHUTDOWN to exit: an engine that will not close in time is left behind.
    setTimeout(() => process.exit(ExitCode.SHUTDOWN), 1500).unref();
    void exit(ExitCode.SHUTDOWN, 0);
  },
  stats: () => server.stats(),
}, log);
const outbox = new StepOutbox((frame) => sockets.sendFrame(frame), pace);
const server = new CallServer(sockets, outbox, (spec, progress) => loadEngine(spec, progress, log, pace, engineSocketOf(args.data)), log, (code, linger) => void exit(code, linger));

process.on('uncaughtException', (err) => {
  log.error(`work loop died: ${err.stack ?? String(err)}`);
  sockets.sendControl(MessageType.DEAD, { message: `Work loop died: ${err.message}` });
  void exit(ExitCode.WORK_LOOP_DIED, 1000);
});

await sockets.start();
startWatchdog({ parentPid: args.parentPid, heartbeatTimeoutMs: args.heartbeatTimeoutMs, silentForMs: () => sockets.silentForMs() }, log);
log.info(`runtime started (pid ${process.pid})`);
