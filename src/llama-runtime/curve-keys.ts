import { ExitCode } from './exit-codes.js';

const NAMES = ['HANGAR_CURVE_SERVER_KEY', 'HANGAR_CURVE_PUBLIC_KEY', 'HANGAR_CURVE_SECRET_KEY'] as const;

/** The DEALER options of a cluster runtime (docs/runtime-protocol.md, "Transport and security"). */
export interface CurveClientOptions {
  curveServerKey: string;
  curvePublicKey: string;
  curveSecretKey: string;
}

/**
 * Takes the CURVE keys out of the environment, before anything else runs: all three
 * or none; a partial or malformed set is a command-line error (exit code 2).
 */
export function takeCurveKeys(env: NodeJS.ProcessEnv): CurveClientOptions | null {
  const given = NAMES.filter((name) => env[name] !== undefined);
  const values = NAMES.map((name) => env[name] ?? '');
  for (const name of NAMES) delete env[name];
  if (given.length === 0) return null;
  const fail = (why: string): never => {
    process.stderr.write(`error: ${why}\n`);
    process.exit(ExitCode.BAD_COMMAND_LINE);
  };
  if (given.length !== NAMES.length) fail(`the CURVE keys come as a set of three (${NAMES.join(', ')}); got ${given.join(', ')}`);
  NAMES.forEach((name, i) => {
    if (values[i]!.length !== 40) fail(`${name} must be a 40-character Z85 key, got ${values[i]!.length} characters`);
  });
  const [curveServerKey, curvePublicKey, curveSecretKey] = values as [string, string, string];
  return { curveServerKey, curvePublicKey, curveSecretKey };
}
