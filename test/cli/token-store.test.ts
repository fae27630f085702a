import { describe, expect, it } from 'vitest';
import { normalizeEndpoint, tokenFile } from '../../src/cli/token-store.js';

describe("the endpoint a saved token is kept under", () => {
  it('is the same for spellings of one server, and leaves one the connection refuses as given', () => {
    const env = { HANGAR_HOME: '/tmp/hangar-cli-test' };
    const one = tokenFile('http://127.0.0.1:9997', env);
    for (const spelling of ['http://127.0.0.1:9997/', 'HTTP://127.0.0.1:9997', 'http://127.0.0.1:9997//']) expect(tokenFile(spelling, env), spelling).toBe(one);
    expect(normalizeEndpoint('HTTP://Example.COM:80/hangar/')).toBe('http://example.com/hangar');
    expect(tokenFile('http://127.0.0.1:9998', env)).not.toBe(one);
    // Refused when connecting, by the spelling given.
    for (const refused of ['http://u:p@127.0.0.1:9997', 'http://127.0.0.1:9997?x=1', 'localhost:9997', 'ftp://127.0.0.1']) expect(normalizeEndpoint(refused)).toBe(refused);
  });
});
