import { keepAliveText } from '../config/keep-alive.js';
import type { ModelInstance } from './model-instance.js';

export interface IdleUnloadParts {
  instances: () => Iterable<ModelInstance>;
  /** Unloads a model (terminate, with an event and a metric); its failure is logged by the caller. */
  unload: (instance: ModelInstance, reason: string) => Promise<void>;
  /** How often idle models are looked for (HANGAR_IDLE_CHECK_MS, default 1000). */
  checkEveryMs: number;
}

/**
 * Unloads models idle for their `keep_alive` (docs/on-demand.md, "Idle unload"): READY,
 * no request holding them, no call in flight, and the last one let go at least
 * `keep_alive` ago. A model with `keep_alive: 0` goes as soon as its last request is done.
 */
export class IdleUnload {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly parts: IdleUnloadParts) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.sweep(), this.parts.checkEveryMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** A request let go of the model: with keep_alive 0 it goes now. */
  released(instance: ModelInstance): void {
    if (instance.keepAliveMs === 0) this.check(instance, Date.now());
  }

  sweep(): void {
    const now = Date.now();
    for (const instance of this.parts.instances()) this.check(instance, now);
  }

  private check(instance: ModelInstance, now: number): void {
    const keepAlive = instance.keepAliveMs;
    if (keepAlive === null || instance.state !== 'READY' || !instance.idle) return;
    const idleFor = now - instance.lastUsedAt;
    if (idleFor < keepAlive) return;
    void this.parts.unload(instance, `idle for ${keepAliveText(idleFor)} (keep_alive ${keepAliveText(keepAlive)})`);
  }
}
