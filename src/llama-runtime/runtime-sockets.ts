import { Dealer } from 'zeromq';
import { SocketSender } from '../runtime/socket-sender.js';
import { MessageType, PROTOCOL_VERSION, decodeMessage, encodeMessage, type Message, type MessageTypeCode } from '../runtime/wire.js';
import type { RuntimeArguments } from './arguments.js';
import type { CurveClientOptions } from './curve-keys.js';
import type { RuntimeLog } from './runtime-log.js';

// How long HELLO waits for the control connection: until it is up, the control
// plane's ROUTER would silently drop a PING or SHUTDOWN sent right after HELLO.
const CONTROL_HANDSHAKE_WAIT_MS = 5_000;

/** What arrives, handed on as it comes (docs/runtime-protocol.md, "Frames"). */
export interface Inbound {
  onData(message: Message): void;
  onAbort(id: number): void;
  onShutdown(): void;
  /** The PONG's `stats` map. */
  stats(): Record<string, number>;
}

/**
 * The runtime's two DEALERs, with the replica uid as routing id on both. PINGs are
 * answered here, at once, whatever the engine is doing: its work runs on llama.cpp's
 * own threads, so this thread stays free for the protocol. The Python runtime sends
 * the work loop's messages from a third DEALER because its work loop is another
 * thread; here there is one thread, so they go out on the data DEALER, from which the
 * control plane accepts every data message as well.
 */
export class RuntimeSockets {
  private readonly data: Dealer;
  private readonly control: Dealer;
  private readonly dataOut: SocketSender;
  private readonly controlOut: SocketSender;
  private lastPing: number | null = null;

  constructor(private readonly args: RuntimeArguments, curve: CurveClientOptions | null, private readonly inbound: Inbound, private readonly log: RuntimeLog) {
    const options = { routingId: args.replica, linger: 0, ...(curve ?? {}) };
    this.data = new Dealer(options);
    this.control = new Dealer(options);
    const onError = (err: unknown) => log.warn(`send failed: ${(err as Error).message}`);
    this.dataOut = new SocketSender(this.data, onError);
    this.controlOut = new SocketSender(this.control, onError);
  }

  /** Connects, sends HELLO once the control socket is up, and starts reading. */
  async start(): Promise<void> {
    const handshake = new Promise((resolve) => this.control.events.on('handshake', resolve));
    this.control.connect(this.args.control);
    this.data.connect(this.args.data);
    const timer = new Promise((resolve) => setTimeout(resolve, CONTROL_HANDSHAKE_WAIT_MS, 'timeout'));
    if ((await Promise.race([handshake, timer])) === 'timeout') {
      this.log.warn(`control socket not connected after ${CONTROL_HANDSHAKE_WAIT_MS} ms; sending HELLO anyway`);
    }
    this.send(MessageType.HELLO, { protocol: PROTOCOL_VERSION, pid: process.pid, replica: this.args.replica, python: `node ${process.versions.node}`, runtime: 'node' });
    this.lastPing = performance.now(); // the heartbeat timeout counts from HELLO
    void this.read(this.control, (message) => this.onControl(message));
    void this.read(this.data, (message) => this.inbound.onData(message));
  }

  /** How long no PING has come; 0 before HELLO. */
  silentForMs(): number {
    return this.lastPing === null ? 0 : performance.now() - this.lastPing;
  }

  send(type: MessageTypeCode, body: Record<string, unknown>): void {
    this.dataOut.send([encodeMessage(type, body)]);
  }

  sendFrame(frame: Buffer): void {
    this.dataOut.send([frame]);
  }

  sendControl(type: MessageTypeCode, body: Record<string, unknown>): void {
    this.controlOut.send([encodeMessage(type, body)]);
  }

  /** Closes both sockets, after giving a last message up to `lingerMs` to leave. */
  async close(lingerMs: number): Promise<void> {
    for (const socket of [this.data, this.control]) socket.linger = lingerMs;
    if (lingerMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(lingerMs, 200)));
    this.data.close();
    this.control.close();
  }

  private onControl(message: Message): void {
    switch (message.type) {
      case MessageType.PING:
        this.lastPing = performance.now();
        this.sendControl(MessageType.PONG, { ts: message.body.ts, stats: this.inbound.stats() });
        break;
      case MessageType.ABORT: {
        const id = message.body.id;
        if (typeof id === 'number' && Number.isSafeInteger(id)) this.inbound.onAbort(id);
        else this.log.warn(`ignoring ABORT without an integer id: ${JSON.stringify(id)}`);
        break;
      }
      case MessageType.SHUTDOWN:
        this.log.info('SHUTDOWN received');
        this.inbound.onShutdown();
        break;
      default:
        this.log.warn(`ignoring message type 0x${message.type.toString(16)} on the control socket`);
    }
  }

  private async read(socket: Dealer, handle: (message: Message) => void): Promise<void> {
    try {
      for await (const frames of socket) {
        if (frames.length !== 1) {
          this.log.warn(`ignoring a message of ${frames.length} frames (the protocol uses one)`);
          continue;
        }
        let message: Message;
        try {
          message = decodeMessage(frames[0]!);
        } catch (err) {
          this.log.warn(`ignoring a malformed message: ${(err as Error).message}`);
          continue;
        }
        handle(message);
      }
    } catch (err) {
      // Closing the socket ends the loop; anything else is logged, the watchdog decides.
      if (!socket.closed) this.log.warn(`socket read ended: ${(err as Error).message}`);
    }
  }
}
