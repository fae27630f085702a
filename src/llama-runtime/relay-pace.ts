import type { Socket } from 'node:net';
import type { ReadGate } from './engine/server-stream.js';

/**
 * The relay's pace (docs/decisions.md, "llama.cpp: the relay's pace"). A token costs
 * the relay a wake-up of this runtime, a ZeroMQ send, a wake-up of the control plane
 * and a write to the client; on a host whose cores llama.cpp's threads keep busy, that
 * CPU is taken from them. So while tokens come faster than one per interval, they go
 * out a step at a time, at most one step per interval: after a step leaves, every
 * stream's socket to llama-server stops being read (in the kernel: no wake-up at all)
 * until the interval is over, then what came meanwhile is read, parsed and sent as
 * one frame. A token that comes after a quiet interval (any token of a model slower
 * than the pace) goes out at once, and so do an answer's first token and its end
 * (StepOutbox), so the pace adds nothing to the time to first token or to the whole
 * answer's, and at most the interval to a token in between.
 */
export class RelayPace implements ReadGate {
  private readonly streams = new Set<Socket>();
  private lastStep = -Infinity;
  private timer: NodeJS.Timeout | null = null;

  constructor(readonly intervalMs: number) {}

  /** How long a step ready now waits: 0 once the last one left an interval ago. */
  wait(now = performance.now()): number {
    return Math.max(0, this.lastStep + this.intervalMs - now);
  }

  /**
   * A step left: the streams' reads stop until the interval is over. Steps that do not
   * wait for the pace (a first token, an end) may come closer together than that; they
   * hold the streams until the interval that is already running ends, never longer, so
   * a busy replica's many short answers cannot keep a long one waiting.
   */
  stepSent(now = performance.now()): void {
    this.lastStep = now;
    if (this.intervalMs <= 0 || this.streams.size === 0) return;
    for (const socket of this.streams) socket.pause();
    this.timer ??= setTimeout(() => this.open(), this.intervalMs);
  }

  /** A stream whose first token went out: its later reads wait for the pace. */
  add(socket: Socket): void {
    this.streams.add(socket);
  }

  remove(socket: Socket): void {
    this.streams.delete(socket);
  }

  private open(): void {
    this.timer = null;
    for (const socket of this.streams) socket.resume();
  }
}
