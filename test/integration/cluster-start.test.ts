import { describe, expect, it } from 'vitest';
import { removeHome, makeHome, startServer } from './harness/server.js';

// `--cluster` without Ray, or with an address that is not one, stops the start with
// a message a person can act on; local mode (every other test) never needs Ray.
describe('hangar start --cluster', () => {
  it('says how to install Ray when the runtime environment lacks it', async () => {
    const home = await makeHome();
    try {
      // The system interpreter has no Ray (nor anything else of the runtime).
      const start = startServer({ home, args: ['--cluster', 'auto'], env: { HANGAR_PYTHON: '/usr/bin/python3' } });
      await expect(start).rejects.toThrow(/Ray is not installed.*pip install -r python-runtime\/requirements-cluster\.txt/);
    } finally {
      await removeHome(home);
    }
  });

  it('refuses an address that is not ray://host:port, host:port or auto', async () => {
    const home = await makeHome();
    try {
      await expect(startServer({ home, args: ['--cluster', 'http://head'] })).rejects.toThrow(/--cluster must be ray:\/\/<host>:<port>, <host>:<port> or auto/);
    } finally {
      await removeHome(home);
    }
  });
});
