import type { Logger } from '../logging/logger.js';
import type { RuntimeConnection } from './runtime-connection.js';
import type { OutputTarget, RuntimeProcess } from './runtime-process.js';
import type { StartOptions } from './runtime.js';

/** A runtime process started before any launch asked for it, waiting for its LOAD. */
export interface SpareRuntime {
  name: string;
  connection: RuntimeConnection;
  process: RuntimeProcess;
  output: OutputTarget;
}

export interface WarmSpareOptions {
  /** Starts one spare runtime (bound sockets, process, `--preload`). */
  spawn: (name: string) => Promise<SpareRuntime>;
  logger: Logger;
}

/**
 * Keeps one spare runtime that has already imported the heavy libraries (torch,
 * transformers), so a launch pays for loading its model and nothing else. The next
 * spare is warmed only once the launch that took the last one has finished loading:
 * on a small machine two processes importing torch at once slow each other down.
 *
 * A spare is a runtime like any other for the orphan rules: it has the control plane's
 * pid and is heartbeaten from HELLO, so it exits by itself if the control plane dies;
 * `shutdown()` stops it with the usual escalation.
 */
export class WarmSpare {
  private spare: SpareRuntime | null = null;
  private warming: Promise<void> | null = null;
  private closed = false;
  private count = 0;

  constructor(private readonly options: WarmSpareOptions) {}

  /**
   * Hands over the spare when it suits this start: a spare is started with no GPU
   * visible and no extra environment, so only a CPU launch without `envs` fits.
   */
  take(start: StartOptions): SpareRuntime | null {
    if (this.closed || start.gpuIndexes.length > 0 || Object.keys(start.envs).length > 0) return null;
    const spare = this.spare;
    if (!spare || spare.connection.isDead) return null;
    this.spare = null;
    return spare;
  }

  /**
   * As `take`, but when the spare is still starting, waits for it: a cold start beside
   * a spare importing torch is slower than the spare itself (measured: a scikit-learn
   * model's cold start went from 1.2 s to about 5 s beside one), and loads on demand
   * come back to back, right after the last launch began warming the next spare.
   */
  async takeWhenWarm(start: StartOptions): Promise<SpareRuntime | null> {
    if (this.closed || start.gpuIndexes.length > 0 || Object.keys(start.envs).length > 0) return null;
    if (!this.spare && this.warming) await this.warming;
    return this.take(start);
  }

  /** A spare taken for a launch that was cancelled before using it: the spare again, if there is none. */
  giveBack(spare: SpareRuntime): void {
    if (this.closed || this.spare || spare.connection.isDead) {
      void spare.process.stop();
      return;
    }
    this.spare = spare;
  }

  /** Starts a spare in the background unless one is there or on its way. */
  warm(): void {
    if (this.closed || this.warming || (this.spare && !this.spare.connection.isDead)) return;
    this.warming = this.startOne().finally(() => {
      this.warming = null;
    });
  }

  private async startOne(): Promise<void> {
    const name = `spare-${++this.count}`;
    let spare: SpareRuntime;
    try {
      spare = await this.options.spawn(name);
    } catch (err) {
      this.options.logger.warn({ err, spare: name }, 'could not start a warm spare runtime; launches start cold');
      return;
    }
    if (this.closed) {
      await spare.process.stop();
      return;
    }
    this.spare = spare;
    // A spare that dies (crash, missed heartbeats) is dropped and its process stopped;
    // the next launch starts cold and warms a new one, so a broken environment
    // cannot become a restart loop.
    spare.connection.onDeath((reason) => {
      if (this.spare !== spare) return;
      this.spare = null;
      this.options.logger.warn({ spare: name, reason }, 'the warm spare runtime died');
      void spare.process.stop();
    });
    this.options.logger.debug({ spare: name, pid: spare.process.pid }, 'warm spare runtime started');
  }

  /** Stops the spare (and one still starting); no new one is started after this. */
  async shutdown(): Promise<void> {
    this.closed = true;
    await this.warming;
    const spare = this.spare;
    this.spare = null;
    if (spare) await spare.process.stop();
  }
}
