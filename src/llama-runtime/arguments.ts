import { Command, InvalidArgumentError } from 'commander';
import { WRITER_SUFFIX } from '../runtime/wire.js';

/** The runtime's command line: the Python runtime's (docs/runtime-protocol.md, "Processes and sockets"). */
export interface RuntimeArguments {
  data: string;
  control: string;
  replica: string;
  /** 0: no parent check. */
  parentPid: number;
  heartbeatTimeoutMs: number;
}

const MAX_REPLICA_BYTES = 255 - WRITER_SUFFIX.length;

/** Parses argv; a bad command line prints why and exits with code 2, as argparse does. */
export function parseArguments(argv: string[]): RuntimeArguments {
  const program = new Command('node dist/llama-runtime/main.js')
    .description('Hangar llama.cpp runtime: serves one GGUF model replica to the control plane over ZeroMQ.')
    .requiredOption('--data <endpoint>', 'data socket endpoint (ipc:// or tcp://)')
    .requiredOption('--control <endpoint>', 'control socket endpoint')
    .requiredOption('--replica <uid>', 'replica uid, also the socket routing id', (value) => {
      if (value === '' || Buffer.byteLength(value, 'utf8') > MAX_REPLICA_BYTES || value.startsWith('\0')) {
        throw new InvalidArgumentError(`must be 1 to ${MAX_REPLICA_BYTES} bytes of UTF-8 and not start with a NUL`);
      }
      return value;
    })
    .option('--parent-pid <pid>', 'exit when the parent pid is no longer this (0: no check)', (value) => {
      const pid = Number(value);
      if (!Number.isInteger(pid) || pid < 0) throw new InvalidArgumentError('must be 0 or a pid');
      return pid;
    }, 0)
    .option('--heartbeat-timeout <seconds>', 'exit when no PING arrives for this long', (value) => {
      const seconds = Number(value);
      if (!Number.isFinite(seconds) || seconds <= 0) throw new InvalidArgumentError('must be a positive number of seconds');
      return seconds;
    }, 10)
    // Accepted for the Python runtime's command line; a Node process cannot call
    // setpgid itself, so the launcher starts this runtime as a group leader instead.
    .option('--process-group', 'lead a process group (the launcher does it for a Node runtime)')
    .option('--preload <modules>', 'ignored: there is no import to pay for ahead of time')
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
    .parse(argv, { from: 'user' });
  const options = program.opts<{ data: string; control: string; replica: string; parentPid: number; heartbeatTimeout: number }>();
  return {
    data: options.data,
    control: options.control,
    replica: options.replica,
    parentPid: options.parentPid,
    heartbeatTimeoutMs: options.heartbeatTimeout * 1000,
  };
}
