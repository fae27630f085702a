import { rm } from 'node:fs/promises';
import { Router } from 'zeromq';
import type { Logger } from '../logging/logger.js';
import { ChunkQueue } from './chunk-queue.js';
import type { ConnectionTimings, SecureBinding } from './connection-options.js';
import { CLUSTER_ZAP_DOMAIN } from './curve-gate.js';
import { allocateEndpoints, type EndpointPair } from './endpoints.js';
import type { LoadProgress, LoadSpec, ReadyInfo, RuntimeStats } from './runtime.js';
import { parseStats } from './runtime-stats.js';
import { RuntimeFailure, failureKind } from './runtime-failure.js';
import { RuntimeLiveness } from './runtime-liveness.js';
import { SocketSender } from './socket-sender.js';
import { MessageType, PROTOCOL_VERSION, WRITER_SUFFIX, batchItems, decodeMessage, encodeMessage, protocolMismatch, type Message, type MessageTypeCode } from './wire.js';

interface PendingCall {
  resolve: (value: unknown) => void;
  reject: (error: RuntimeFailure) => void;
}

interface Handshake {
  spec: LoadSpec;
  onProgress: (p: LoadProgress) => void;
  resolve: (info: ReadyInfo) => void;
  reject: (error: RuntimeFailure) => void;
  /** HELLO's deadline, then, once loading, the stall deadline (reset by each PROGRESS). */
  deadline: NodeJS.Timeout;
}

/**
 * The control plane's end of one runtime's two sockets (docs/runtime-protocol.md):
 * handshake, the call-id map, streams, heartbeat, abort and shutdown. It knows
 * nothing of processes; the launcher tells it when the process exits.
 */
export class RuntimeConnection {
  private readonly data = new Router();
  private readonly control = new Router();
  private readonly senders: Map<Router, SocketSender>;
  private endpoints: EndpointPair | null = null;
  private readonly identity: Buffer;
  /** The runtime work loop's own DEALER, which sends the data messages (protocol v3). */
  private readonly writerIdentity: Buffer;
  private readonly calls = new Map<number, PendingCall>();
  private readonly streams = new Map<number, ChunkQueue<unknown>>();
  private nextCallId = 1;
  private handshake: Handshake | null = null;
  private readonly liveness: RuntimeLiveness;
  private helloSeen = false;
  /** From the latest PONG (docs/runtime-protocol.md, "Stats"); null until one carried them. */
  stats: RuntimeStats | null = null;
  private deadReason: string | null = null;
  private readonly deathListeners: Array<(reason: string, output: string) => void> = [];
  private readonly connectionLostListeners: Array<() => void> = [];
  private closed = false;
  private closing: Promise<void> | null = null;
  /** Peers that failed the security handshake (no or wrong cluster key), for the hello-timeout message. */
  private refusedPeers = 0;

  constructor(
    readonly replicaUid: string,
    private readonly timings: ConnectionTimings,
    private readonly logger: Logger,
  ) {
    this.identity = Buffer.from(replicaUid, 'utf8');
    this.writerIdentity = Buffer.from(`${replicaUid}${WRITER_SUFFIX}`, 'utf8');
    for (const socket of [this.data, this.control]) {
      socket.linger = 0;
      // A ROUTER silently drops messages to a peer past its high-water mark (1,000 by
      // default), and a call whose CALL is dropped would wait forever. The queue is
      // bounded anyway by the requests in flight, so it is left unbounded here.
      socket.sendHighWaterMark = 0;
    }
    // A failure here means the socket is closing; the death path handles it.
    const onError = (err: unknown): void => this.logger.debug({ err, replica: this.replicaUid }, 'send to runtime failed');
    this.senders = new Map([this.data, this.control].map((socket) => [socket, new SocketSender(socket, onError)]));
    this.liveness = new RuntimeLiveness(timings, {
      ping: () => this.send(this.control, MessageType.PING, { ts: Date.now() }),
      dead: (reason) => this.markDead(reason),
      lost: () => {
        for (const listener of this.connectionLostListeners) listener();
      },
      stranger: () => this.logger.warn({ replica: this.replicaUid }, 'a peer other than the runtime connected to its socket and left; the runtime still answers'),
    });
    this.control.heartbeatInterval = timings.connectionHeartbeatMs;
    this.control.heartbeatTimeout = timings.connectionTimeoutMs;
    // A disconnect after HELLO may be the runtime's control DEALER leaving (it stopped,
    // died, or missed ZMTP heartbeats), or any other peer that reached the socket: a
    // stray ZeroMQ client on the ipc file, a port scan, a keyless peer refused by CURVE.
    // The event does not say which peer left, so the runtime is asked (RuntimeLiveness.probe).
    this.control.events.on('disconnect', () => {
      const wanted = (): boolean => !this.closed && !this.deadReason;
      if (this.helloSeen && wanted()) this.liveness.probe(wanted);
    });
    for (const socket of [this.data, this.control]) {
      for (const event of ['handshake:error:auth', 'handshake:error:protocol'] as const) {
        socket.events.on(event, ({ address }) => {
          this.refusedPeers++;
          this.logger.warn({ replica: this.replicaUid, address }, 'a peer was refused: it does not hold the cluster\'s CURVE key');
        });
      }
    }
  }

  /** Binds both sockets and starts reading; returns the endpoints for the runtime's command line. */
  async bind(runDir: string): Promise<{ data: string; control: string }> {
    return this.bindTo(allocateEndpoints(runDir));
  }

  /** Binds both sockets on tcp:// as CURVE servers (see SecureBinding). */
  async bindSecure({ host, server }: SecureBinding): Promise<{ data: string; control: string }> {
    for (const socket of [this.data, this.control]) {
      socket.curveServer = true;
      socket.curveSecretKey = server.secretKey;
      socket.zapDomain = CLUSTER_ZAP_DOMAIN;
      // No ZAP handler means no entry, never an open door.
      socket.zapEnforceDomain = true;
    }
    const at = host.includes(':') ? `[${host}]` : host;
    return this.bindTo({ data: `tcp://${at}:*`, control: `tcp://${at}:*`, files: [] });
  }

  private async bindTo(endpoints: EndpointPair): Promise<{ data: string; control: string }> {
    this.endpoints = endpoints;
    await this.data.bind(this.endpoints.data);
    await this.control.bind(this.endpoints.control);
    void this.readLoop(this.data);
    void this.readLoop(this.control);
    return { data: this.data.lastEndpoint ?? this.endpoints.data, control: this.control.lastEndpoint ?? this.endpoints.control };
  }

  /**
   * Waits for HELLO (unless it came already: a warm spare says hello long before its
   * load is known), sends LOAD, and resolves on READY.
   */
  load(spec: LoadSpec, onProgress: (p: LoadProgress) => void): Promise<ReadyInfo> {
    if (this.deadReason) return Promise.reject(new RuntimeFailure('dead', this.deadReason));
    return new Promise<ReadyInfo>((resolve, reject) => {
      const deadline = setTimeout(
        () => {
          const refused = this.refusedPeers > 0 ? ` (${this.refusedPeers} connection(s) refused for lacking the cluster's CURVE key)` : '';
          this.markDead(`the runtime did not say hello within ${this.timings.helloTimeoutMs} ms${refused}`);
        },
        this.timings.helloTimeoutMs,
      );
      this.handshake = { spec, onProgress, resolve, reject, deadline };
      if (this.helloSeen) this.sendLoad();
    });
  }

  /** Calls and streams sent and not yet answered (the control plane's view of the queue). */
  get pendingCalls(): number {
    return this.calls.size + this.streams.size;
  }

  call(method: string, args: unknown[], kwargs: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    if (this.deadReason) return Promise.reject(new RuntimeFailure('dead', this.deadReason));
    if (signal?.aborted) return Promise.reject(new RuntimeFailure('aborted', 'The request was aborted'));
    const id = this.nextCallId++;
    const alone = this.isIdle();
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.calls.delete(id);
        this.send(this.control, MessageType.ABORT, { id });
        reject(new RuntimeFailure('aborted', 'The request was aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.calls.set(id, {
        resolve: (v) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(v);
        },
        reject: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
      this.send(this.data, MessageType.CALL, { id, method, args, kwargs, stream: false, alone });
    });
  }

  stream(method: string, args: unknown[], kwargs: Record<string, unknown>): ChunkQueue<unknown> {
    const id = this.nextCallId++;
    // A consumer that stops early (client gone) aborts the generation in the runtime.
    const queue = new ChunkQueue<unknown>(() => {
      if (this.streams.delete(id)) this.send(this.control, MessageType.ABORT, { id });
    });
    if (this.deadReason) {
      queue.fail(new RuntimeFailure('dead', this.deadReason));
      return queue;
    }
    const alone = this.isIdle();
    this.streams.set(id, queue);
    this.send(this.data, MessageType.CALL, { id, method, args, kwargs, stream: true, alone });
    return queue;
  }

  /**
   * No call of ours is open on this runtime. Sent with a CALL as `alone`: a batching
   * engine then serves it at once instead of gathering a window nobody will join.
   * Read before the new call is registered, so it does not count itself.
   */
  private isIdle(): boolean {
    return this.pendingCalls === 0;
  }

  /** `output`: the runtime's last lines (the operator's: the log and the events, never a caller). */
  onDeath(listener: (reason: string, output: string) => void): void {
    this.deathListeners.push(listener);
  }

  /** The control connection dropped after HELLO (see the constructor); the runtime is not yet marked dead. */
  onConnectionLost(listener: () => void): void {
    this.connectionLostListeners.push(listener);
  }

  get isDead(): boolean {
    return this.deadReason !== null;
  }

  requestShutdown(): void {
    this.send(this.control, MessageType.SHUTDOWN, {});
  }

  /**
   * The runtime is gone (process exit, missed heartbeats, DEAD message) or is being
   * stopped: every call in flight fails at once, and listeners hear about it once.
   */
  markDead(reason: string, detail = ''): void {
    if (this.deadReason) return;
    this.deadReason = reason;
    this.liveness.stop();
    const failure = new RuntimeFailure('dead', reason);
    if (this.handshake) {
      clearTimeout(this.handshake.deadline);
      // Whoever launched it reads why the load died (a traceback's last lines, CUDA out of memory).
      this.handshake.reject(detail ? new RuntimeFailure('dead', reason + detail) : failure);
      this.handshake = null;
    }
    // A caller of the model reads only that it died: its output is the operator's, in the log and the events.
    for (const call of this.calls.values()) call.reject(failure);
    this.calls.clear();
    for (const queue of this.streams.values()) queue.fail(failure);
    this.streams.clear();
    for (const listener of this.deathListeners) listener(reason, detail);
  }

  /** Fails a pending handshake with a specific failure (cancel), then marks the connection dead. */
  failLoad(failure: RuntimeFailure): void {
    if (this.handshake) {
      clearTimeout(this.handshake.deadline);
      this.handshake.reject(failure);
      this.handshake = null;
    }
    this.markDead(failure.message);
  }

  /**
   * Closes both sockets and removes their files. Every caller gets the one closing:
   * the runtime's exit closes it without waiting, and a stop that awaits it after that
   * exit must still wait for the files to go (the control plane may exit next).
   */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    this.closed = true;
    this.markDead('the runtime was stopped');
    for (const sender of this.senders.values()) sender.clear();
    this.data.close();
    this.control.close();
    await Promise.all((this.endpoints?.files ?? []).map((f) => rm(f, { force: true, recursive: true })));
  }

  private send(socket: Router, type: MessageTypeCode, body: Record<string, unknown>): void {
    if (this.closed) return;
    this.senders.get(socket)!.send([this.identity, encodeMessage(type, body)]);
  }

  private async readLoop(socket: Router): Promise<void> {
    try {
      for await (const [sender, frame] of socket) {
        if (!sender || !frame || !(sender.equals(this.identity) || (socket === this.data && sender.equals(this.writerIdentity)))) {
          this.logger.warn({ replica: this.replicaUid }, 'message from an unexpected peer ignored');
          continue;
        }
        let message: Message;
        try {
          message = decodeMessage(frame);
        } catch (err) {
          this.logger.warn({ err, replica: this.replicaUid }, 'undecodable message from runtime ignored');
          continue;
        }
        this.dispatch(message);
      }
    } catch (err) {
      if (!this.closed) this.logger.warn({ err, replica: this.replicaUid }, 'runtime socket failed');
    }
  }

  private dispatch({ type, body }: Message): void {
    switch (type) {
      case MessageType.HELLO:
        return this.onHello(body);
      case MessageType.PROGRESS:
        this.armStallTimer();
        this.handshake?.onProgress({
          progress: Math.min(1, Math.max(0, Number(body.progress) || 0)),
          stage: String(body.stage ?? 'load'),
          message: String(body.message ?? ''),
        });
        return;
      case MessageType.READY:
        return this.onReady(body);
      case MessageType.LOAD_FAILED:
        if (this.handshake) {
          const kind = body.kind === 'invalid' || body.kind === 'unavailable' ? body.kind : 'internal';
          const failure = new RuntimeFailure(kind, String(body.message ?? 'load failed'));
          this.failLoad(failure);
        }
        return;
      case MessageType.RESULT:
        return this.settle(body, (call) => call.resolve(body.value));
      case MessageType.ERROR:
        return this.onError(body);
      case MessageType.CHUNK:
        this.streams.get(Number(body.id))?.push(body.value);
        return;
      case MessageType.END:
        return this.onEnd(body);
      case MessageType.BATCH:
        return this.onBatch(body);
      case MessageType.PONG:
        this.liveness.pong();
        this.stats = parseStats(body.stats) ?? this.stats;
        return;
      case MessageType.DEAD:
        return this.markDead(`the runtime's work loop died: ${String(body.message ?? '')}`);
      default:
        this.logger.warn({ replica: this.replicaUid, type }, 'unknown message type from runtime ignored');
    }
  }

  private onEnd(body: Record<string, unknown>): void {
    const id = Number(body.id);
    this.streams.get(id)?.end();
    this.streams.delete(id);
  }

  /**
   * One engine step's answers (protocol v2). Each stream's chunks are queued first and
   * its reader woken once at the end, so it gets the whole step in one read.
   */
  private onBatch(body: Record<string, unknown>): void {
    const { items, malformed } = batchItems(body);
    if (malformed > 0) this.logger.warn({ replica: this.replicaUid, malformed }, 'malformed BATCH items ignored');
    const touched: ChunkQueue<unknown>[] = [];
    for (const { type, body: itemBody } of items) {
      if (type === MessageType.CHUNK) {
        const queue = this.streams.get(Number(itemBody.id));
        if (queue) {
          queue.pushQuietly(itemBody.value);
          touched.push(queue);
        }
      } else if (type === MessageType.RESULT || type === MessageType.END || type === MessageType.ERROR) {
        this.dispatch({ type, body: itemBody });
      } else {
        this.logger.warn({ replica: this.replicaUid, type }, 'message type not allowed in a BATCH ignored');
      }
    }
    for (const queue of touched) queue.wake();
  }

  private onHello(body: Record<string, unknown>): void {
    if (this.helloSeen) return;
    this.helloSeen = true;
    if (body.protocol !== PROTOCOL_VERSION) {
      this.requestShutdown();
      this.failLoad(new RuntimeFailure('internal', protocolMismatch(body.protocol)));
      return;
    }
    // From HELLO on the runtime's watchdog counts missed pings, with or without a load.
    this.liveness.start();
    if (this.handshake) this.sendLoad();
  }

  private sendLoad(): void {
    const hs = this.handshake;
    if (!hs) return;
    clearTimeout(hs.deadline);
    this.armStallTimer();
    this.send(this.data, MessageType.LOAD, hs.spec as unknown as Record<string, unknown>);
  }

  private armStallTimer(): void {
    const hs = this.handshake;
    if (!hs) return;
    clearTimeout(hs.deadline);
    const ms = this.timings.loadStallTimeoutMs;
    hs.deadline = setTimeout(() => {
      // Only the load it was armed for: a runtime that is READY is no longer loading.
      if (this.handshake === hs) this.failLoad(new RuntimeFailure('internal', `the load made no progress for ${Math.round(ms / 1000)} s (HANGAR_LOAD_STALL_TIMEOUT_MS)`));
    }, ms);
  }

  private onReady(body: Record<string, unknown>): void {
    const hs = this.handshake;
    if (!hs) return;
    // The stall deadline ends with the load: left running, it killed every healthy
    // replica HANGAR_LOAD_STALL_TIMEOUT_MS (15 minutes) after it became ready.
    clearTimeout(hs.deadline);
    this.handshake = null;
    hs.resolve({
      pid: Number(body.pid),
      engine: String(body.engine ?? hs.spec.engine),
      abilities: Array.isArray(body.abilities) ? body.abilities.map(String) : [],
      description: (body.description && typeof body.description === 'object' ? body.description : {}) as Record<string, unknown>,
    });
  }

  private onError(body: Record<string, unknown>): void {
    const id = Number(body.id);
    const param = typeof body.param === 'string' && body.param.length > 0 && body.param.length <= 200 ? body.param : null;
    const failure = new RuntimeFailure(failureKind(body.kind), String(body.message ?? 'runtime error'), param);
    const queue = this.streams.get(id);
    if (queue) {
      this.streams.delete(id);
      queue.fail(failure);
      return;
    }
    this.settle(body, (call) => call.reject(failure));
  }

  private settle(body: Record<string, unknown>, action: (call: PendingCall) => void): void {
    const id = Number(body.id);
    const call = this.calls.get(id);
    // Absent: the caller aborted and stopped waiting; the late answer is dropped.
    if (!call) return;
    this.calls.delete(id);
    action(call);
  }
}
