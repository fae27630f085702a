import type { Socket } from 'node:net';
import type { ReadGate } from './engine/server-stream.js';

/**
 * How long a step waits, once llama-server paces its streams itself, for the other
 * streams' writes of the same tick: they come within about a millisecond of each other.
 */
const GATHER_MS = 2;

/**
 * The relay's pace (docs/decisions.md, "llama.cpp: the relay's pace"). A token costs
 * the relay a wake-up of this runtime, a ZeroMQ send, a wake-up of the control plane
 * and a write to the client; on a host whose cores llama.cpp's threads keep busy, that
 * CPU is taken from them. So while tokens come faster than one per interval, they go
 * out a step at a time, at most one step per interval.
 *
 * Hangar's build of llama-server keeps the pace itself (an engine patch, told the
 * interval in HANGAR_STREAM_PACE_MS): a stream's thread writes its first token at once,
 * then what came meanwhile at each tick of a grid all streams share, and an end or an
 * error at once; its answers say so in a header (`pacedByServer`). A step then waits
 * only for the rest of its tick's writes (GATHER_MS), and no socket is held.
 *
 * Another server (HANGAR_LLAMA_SERVER) is paced here: after a step leaves, every
 * stream's socket stops being read until the interval is over, then what came is read,
 * parsed and sent as one frame. An answer's end that comes while its socket is held
 * waits for the interval too.
 *
 * Either way a token that comes after a quiet interval (any token of a model slower
 * than the pace) goes out at once, and so does an answer's first token (StepOutbox).
 */
export class RelayPace implements ReadGate {
  private readonly streams = new Set<Socket>();
  /**
   * Streams the last interval's end resumed that have not been read since. A step that
   * leaves before their read (another call's first token, an end, or the outbox's own
   * timer, due in the same turn as ours) must not pause them again: they would wait a
   * whole further interval, and a busy replica could keep one waiting many (seen: 124 ms
   * on a 30 ms pace).
   */
  private readonly owed = new Set<Socket>();
  private lastStep = -Infinity;
  private timer: NodeJS.Timeout | null = null;
  private serverPaces = false;

  constructor(readonly intervalMs: number) {}

  /** How long a step ready now waits: 0 once the last one left an interval ago. */
  wait(now = performance.now()): number {
    const left = Math.max(0, this.lastStep + this.intervalMs - now);
    return this.serverPaces ? Math.min(left, GATHER_MS) : left;
  }

  /**
   * A step left: the held streams' reads stop until the interval is over. Steps that do
   * not wait for the pace (a first token, an end) may come closer together than that;
   * they hold the streams until the interval that is already running ends, never
   * longer, so a busy replica's many short answers cannot keep a long one waiting.
   */
  stepSent(now = performance.now()): void {
    this.lastStep = now;
    if (this.intervalMs <= 0 || this.streams.size === 0) return;
    for (const socket of this.streams) if (!this.owed.has(socket)) socket.pause();
    this.timer ??= setTimeout(() => this.open(), this.intervalMs);
  }

  /** A stream's socket was read: one owed its read is held again until the running interval ends. */
  read(socket: Socket): void {
    if (this.owed.delete(socket) && this.timer) socket.pause();
  }

  /** A stream whose first token went out: its later reads wait for the pace. */
  add(socket: Socket): void {
    this.streams.add(socket);
  }

  remove(socket: Socket): void {
    this.streams.delete(socket);
    this.owed.delete(socket);
  }

  pacedByServer(): void {
    this.serverPaces = true;
  }

  private open(): void {
    this.timer = null;
    for (const socket of this.streams) {
      socket.resume();
      this.owed.add(socket);
    }
  }
}
