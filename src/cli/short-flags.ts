/**
 * Xinference's CLI (click) has multi-letter short flags: `-en`, `-mp`, `-ak`, `-ev`,
 * and a few underscore spellings (`--max_tokens`). commander reads `-en` as `-e n`
 * (endpoint "n") and has no aliases for long flags, so before parsing we rewrite these
 * exact tokens to the names our commands define. Only the client commands are
 * rewritten (`start` has no such flags), and nothing after a `--` terminator.
 */
export const FLAG_SPELLINGS: Readonly<Record<string, string>> = {
  '-en': '--model-engine',
  '-mp': '--model-path',
  '-ak': '--api-key',
  '-ev': '--env',
  '-lm': '--lora-modules',
  '-ld': '--image-lora-load-kwargs',
  '-fd': '--image-lora-fuse-kwargs',
  '-qc': '--quantization-config',
  '-vp': '--virtual-env-package',
  '--max_tokens': '--max-tokens',
  '--model_name': '--model-name',
  '--model_version': '--model-version',
};

export function expandShortFlags(argv: string[], clientCommands: ReadonlySet<string>): string[] {
  // argv[0] is node, argv[1] the script; the command is the first operand after them.
  const commandIndex = argv.findIndex((arg, i) => i >= 2 && !arg.startsWith('-'));
  if (commandIndex < 0 || !clientCommands.has(argv[commandIndex]!)) return argv;
  const out = argv.slice(0, commandIndex + 1);
  for (let i = commandIndex + 1; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const long = FLAG_SPELLINGS[flag];
    out.push(long ? long + (eq > 0 ? arg.slice(eq) : '') : arg);
  }
  return out;
}
