/**
 * Log lines for the control plane, which forwards each stderr line to its own JSON
 * log with the model uid and replica: one human-readable line per record, prefixed
 * with the replica uid, as the Python runtime writes them. `HANGAR_RUNTIME_LOG_LEVEL`
 * (default INFO) sets the level.
 */
const LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR'] as const;
type Level = (typeof LEVELS)[number];

export class RuntimeLog {
  private readonly threshold: number;

  constructor(private readonly replica: string, env: NodeJS.ProcessEnv = process.env) {
    const wanted = (env.HANGAR_RUNTIME_LOG_LEVEL ?? 'INFO').toUpperCase();
    const at = LEVELS.indexOf((wanted === 'WARN' ? 'WARNING' : wanted) as Level);
    this.threshold = at >= 0 ? at : 1;
    if (at < 0) this.warn(`ignoring HANGAR_RUNTIME_LOG_LEVEL=${wanted}: not a log level`);
  }

  debug(message: string): void {
    this.write('DEBUG', message);
  }

  info(message: string): void {
    this.write('INFO', message);
  }

  warn(message: string): void {
    this.write('WARNING', message);
  }

  error(message: string): void {
    this.write('ERROR', message);
  }

  private write(level: Level, message: string): void {
    if (LEVELS.indexOf(level) < this.threshold) return;
    // A stack spread over many lines would reach the control plane as many records.
    process.stderr.write(`[${this.replica}] ${new Date().toISOString()} ${level} hangar_llama: ${message.replace(/\r?\n/g, '\\n')}\n`);
  }
}
