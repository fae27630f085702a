import { Reply } from 'zeromq';

/**
 * The process's ZAP handler (ZeroMQ RFC 27): libzmq asks it about every peer that
 * completes a CURVE handshake with one of our CURVE-server sockets, and we let in only
 * the cluster's client keys. Without it, anyone who learned the server's public key
 * (it is public) could connect; the server sockets also set ZAP_ENFORCE_DOMAIN, so
 * while no handler is bound they refuse every peer (fail closed).
 *
 * libzmq looks for the handler at one fixed inproc address per context, so there is
 * one gate per process, shared by every connection.
 */
const ZAP_ENDPOINT = 'inproc://zeromq.zap.01';
/** The ZAP domain our CURVE sockets announce; requests for any other domain are refused. */
export const CLUSTER_ZAP_DOMAIN = 'hangar-cluster';

export class CurveGate {
  private static opening: Promise<CurveGate> | null = null;
  private readonly allowed = new Set<string>();
  private readonly refusalListeners: Array<(address: string) => void> = [];

  private constructor(private readonly socket: Reply) {}

  /** The process's gate, bound on first use. */
  static open(): Promise<CurveGate> {
    CurveGate.opening ??= (async () => {
      const socket = new Reply();
      socket.linger = 0;
      await socket.bind(ZAP_ENDPOINT);
      const gate = new CurveGate(socket);
      void gate.serve();
      return gate;
    })();
    return CurveGate.opening;
  }

  /** Lets in peers holding the secret key of this Z85 public key. */
  allow(publicKeyZ85: string): void {
    this.allowed.add(z85Decode(publicKeyZ85).toString('hex'));
  }

  /** Called with the peer's address for each refusal (for a log line an operator can act on). */
  onRefusal(listener: (address: string) => void): void {
    this.refusalListeners.push(listener);
  }

  private async serve(): Promise<void> {
    try {
      for await (const frames of this.socket) {
        // version, request id, domain, address, routing id, mechanism, credentials...
        const [version, requestId, domain, address, , mechanism, key] = frames;
        const ok =
          version?.toString() === '1.0' &&
          domain?.toString() === CLUSTER_ZAP_DOMAIN &&
          mechanism?.toString() === 'CURVE' &&
          key !== undefined &&
          this.allowed.has(key.toString('hex'));
        if (!ok) for (const listener of this.refusalListeners) listener(address?.toString() ?? '');
        await this.socket.send(['1.0', requestId ?? '', ok ? '200' : '400', ok ? 'OK' : 'not a key of this cluster', '', '']);
      }
    } catch {
      // The socket closes only when the process ends.
    }
  }
}

const Z85_CHARS = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#';
const Z85_VALUES = new Map([...Z85_CHARS].map((c, i) => [c, i]));

/** Z85 (ZeroMQ RFC 32) text to bytes: ZAP hands us raw 32-byte keys, we keep Z85 text. */
export function z85Decode(text: string): Buffer {
  if (text.length % 5 !== 0) throw new Error('a Z85 string has a length divisible by 5');
  const out = Buffer.alloc((text.length / 5) * 4);
  for (let i = 0; i < text.length; i += 5) {
    let value = 0;
    for (let j = 0; j < 5; j++) {
      const digit = Z85_VALUES.get(text[i + j]!);
      if (digit === undefined) throw new Error(`not a Z85 character: ${JSON.stringify(text[i + j])}`);
      value = value * 85 + digit;
    }
    out.writeUInt32BE(value, (i / 5) * 4);
  }
  return out;
}
