/**
 * The level of one line a runtime writes to stderr, for the control plane's log. Both
 * runtimes write `[<replica>] <time> <LEVEL> <logger>: <message>` (the Python runtime's
 * logging_setup.py, the Node runtime's runtime-log.ts); a line in another shape (a
 * native library's own output) is info. Every line was info before, so a log filtered
 * by level (pino's `level >= 40`) never showed a runtime's warnings and errors.
 */
export type RuntimeLineLevel = 'info' | 'warn' | 'error';

const LEVEL_WORD = /^\[[^\]]*\] (?:\S+ ){1,2}(DEBUG|INFO|WARNING|ERROR|CRITICAL) /;
// A runtime writes DEBUG lines only when HANGAR_RUNTIME_LOG_LEVEL asks for them: shown
// at info, or the control plane's own level (info by default) would drop what was asked.
const LEVELS: Record<string, RuntimeLineLevel> = { DEBUG: 'info', INFO: 'info', WARNING: 'warn', ERROR: 'error', CRITICAL: 'error' };

export function runtimeLineLevel(line: string): RuntimeLineLevel {
  const word = LEVEL_WORD.exec(line.slice(0, 400))?.[1];
  return word ? LEVELS[word]! : 'info';
}
