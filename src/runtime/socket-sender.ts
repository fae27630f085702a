/**
 * Sends frames on one zeromq socket, one send at a time. zeromq.js allows a single
 * send in progress per socket and throws EBUSY for a second one; a send stays in
 * progress when the peer's queue is full (its high-water mark, 1,000 messages), which
 * a thousand concurrent requests to one runtime reach. Frames that arrive meanwhile
 * wait here, in order, so back-pressure delays calls instead of failing them.
 */
/** The one thing a sender needs of a zeromq socket (a ROUTER here, a runtime's DEALER in the llama.cpp runtime). */
export interface FrameSocket {
  send(frames: Buffer[]): Promise<void>;
}

export class SocketSender {
  private readonly waiting: Buffer[][] = [];
  private busy = false;

  constructor(
    private readonly socket: FrameSocket,
    private readonly onError: (err: unknown) => void,
  ) {}

  send(frames: Buffer[]): void {
    if (this.busy) {
      this.waiting.push(frames);
      return;
    }
    this.start(frames);
  }

  /** Drops what has not gone out yet (the socket is closing). */
  clear(): void {
    this.waiting.length = 0;
  }

  private start(frames: Buffer[]): void {
    this.busy = true;
    let sent: Promise<void>;
    try {
      sent = this.socket.send(frames);
    } catch (err) {
      this.done(err);
      return;
    }
    sent.then(
      () => this.done(null),
      (err: unknown) => this.done(err),
    );
  }

  private done(err: unknown): void {
    this.busy = false;
    if (err) this.onError(err);
    const next = this.waiting.shift();
    if (next) this.start(next);
  }
}
