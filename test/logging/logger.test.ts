import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, stream };
}

describe('logger redaction', () => {
  it('blanks credentials, passwords, keys and launch envs wherever they are logged', () => {
    const { lines, stream } = capture();
    const log = createLogger('info', stream);
    log.info({ req: { headers: { authorization: 'Bearer sk-72tkvudyGLPMi', cookie: 'session=abc' } } }, 'request');
    log.info({ body: { username: 'u', password: 'hunter22' } }, 'login');
    log.info({ user: { api_keys: ['sk-3sjLbdwqAhhAF'] }, auth: { secret_key: 'deadbeef'.repeat(8) } }, 'config');
    log.info({ launch: { envs: { HF_TOKEN: 'hf_secret' } } }, 'launch');
    const text = lines.join('');
    for (const secret of ['sk-72tkvudyGLPMi', 'session=abc', 'hunter22', 'sk-3sjLbdwqAhhAF', 'deadbeef', 'hf_secret']) expect(text).not.toContain(secret);
    expect(text.match(/\[redacted\]/g)?.length).toBeGreaterThanOrEqual(6);
  });
});
