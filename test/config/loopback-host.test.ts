import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../src/config/loopback-host.js';

describe('isLoopbackHost', () => {
  it('knows the addresses that stay on this machine', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST', 'api.localhost', '::ffff:127.0.0.1']) expect(isLoopbackHost(host), host).toBe(true);
  });
  it('takes everything else as reachable by others', () => {
    for (const host of ['0.0.0.0', '::', '[::]', '192.168.1.5', '10.0.0.1', 'example.com', '128.0.0.1', '::ffff:10.0.0.1', '']) expect(isLoopbackHost(host), host).toBe(false);
  });
});
