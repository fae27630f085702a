import type { FastifyInstance } from 'fastify';
import { PassThrough, type Readable, type Transform } from 'node:stream';
import zlib from 'node:zlib';
import { HangarError } from '../errors/hangar-error.js';
import { isMultipartBody } from './multipart/multipart-body.js';

type Decoder = () => Transform;

/** Request bodies compressed as HTTP clients and proxies compress them (RFC 9110 `Content-Encoding`). */
const DECODERS: Record<string, Decoder> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

/**
 * Decompresses a request body sent with `Content-Encoding` gzip, deflate or br before it
 * is parsed. The body limit (64 MiB) applies to the decompressed bytes, so a small
 * "zip bomb" is refused like a large body; a body that does not decompress is a 400
 * naming its encoding; an encoding this server does not read is a 415.
 */
export function installRequestDecoding(app: FastifyInstance): void {
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const header = request.headers['content-encoding'];
    const encoding = typeof header === 'string' ? header.trim().toLowerCase() : '';
    if (encoding === '' || encoding === 'identity') return done(null, payload);
    // The multipart parser reads the raw request, not this hook's stream: a compressed
    // form would be read as garbage, or (the decoder never drained) never answered.
    if (isMultipartBody(request)) {
      return done(new HangarError('compressed_form', [String(header)]), payload);
    }
    const decoder = DECODERS[encoding];
    if (!decoder) return done(new HangarError('unsupported_content_encoding', [header as string]), payload);
    done(null, decoded(payload, decoder(), encoding));
  });
}

function decoded(payload: Readable, decoder: Transform, encoding: string): Readable {
  // What fastify counts against Content-Length: the bytes as they came on the wire.
  const out = new PassThrough() as PassThrough & { receivedEncodedLength: number };
  out.receivedEncodedLength = 0;
  payload.on('data', (chunk: Buffer) => {
    out.receivedEncodedLength += chunk.length;
  });
  payload.on('error', (err) => out.destroy(err));
  decoder.on('error', (err) => out.destroy(new HangarError('invalid_body_encoding', [encoding, err.message], { cause: err })));
  // fastify stops listening to the body once it has answered (413 for a bomb, 400 for
  // a wrong Content-Length); the client hanging up afterwards ends the compressed
  // stream mid-way, and that late error must not be an unhandled 'error' event, which
  // would end the whole process. While fastify reads, its own listener gets it too.
  out.on('error', () => {});
  // Nobody reads a body that was answered: stop inflating it.
  out.on('close', () => {
    payload.unpipe(decoder);
    decoder.destroy();
  });
  payload.pipe(decoder).pipe(out);
  return out;
}
