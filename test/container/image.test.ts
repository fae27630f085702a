import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { docker, IMAGE_UID } from './harness.js';

const image = inject('hangarImage');

// The image as a user gets it: its configuration, and the service started with no
// settings at all. The container has no network but its own loopback (`none`), so its
// default address (0.0.0.0:9997) is exposed nowhere while we look at it from inside.
describe.skipIf(!image)('the CPU image: defaults', () => {
  let container: StartedTestContainer;
  const exec = async (cmd: string[]): Promise<string> => {
    const result = await container.exec(cmd);
    expect(result.exitCode, result.output).toBe(0);
    return result.output;
  };

  beforeAll(async () => {
    container = await new GenericContainer(image).withNetworkMode('none').withWaitStrategy(Wait.forHealthCheck()).withStartupTimeout(120_000).start();
  });

  afterAll(async () => {
    await container?.stop({ timeout: 60_000 });
  });

  it('declares a non-root user, the home volume, port 9997, a health check on /status and tini as pid 1', () => {
    const [config] = JSON.parse(docker(['image', 'inspect', image])) as Array<{ Config: Record<string, any> }>;
    const c = config!.Config;
    expect(c.User).toBe('hangar');
    expect(Object.keys(c.Volumes ?? {})).toEqual(['/var/lib/hangar']);
    expect(Object.keys(c.ExposedPorts ?? {})).toEqual(['9997/tcp']);
    expect(c.Env).toEqual(expect.arrayContaining(['HANGAR_HOME=/var/lib/hangar', 'HANGAR_HOST=0.0.0.0', 'HANGAR_PORT=9997']));
    expect(c.Healthcheck.Test.join(' ')).toContain('/status');
    expect(c.Entrypoint).toEqual(['/usr/bin/tini', '--', '/app/docker/entrypoint.sh']);
  });

  it('runs the service as uid 10001 under tini, listening on 0.0.0.0:9997', async () => {
    expect((await exec(['id', '-u'])).trim()).toBe(String(IMAGE_UID));
    expect((await exec(['cat', '/proc/1/comm'])).trim()).toBe('tini');
    // /proc/net/tcp: local address 00000000:270D (0.0.0.0, port 9997) in state 0A (LISTEN).
    const sockets = (await exec(['cat', '/proc/net/tcp'])).split('\n').map((line) => line.trim().split(/\s+/));
    expect(sockets.some((cols) => cols[1] === '00000000:270D' && cols[3] === '0A')).toBe(true);
    const status = await exec(['node', '-e', "fetch('http://127.0.0.1:9997/status').then(async (r) => console.log(r.status, await r.text()))"]);
    expect(status.trim().startsWith('200')).toBe(true);
  });

  it('warns in its log that it listens on 0.0.0.0 with authentication off, and says to publish on 127.0.0.1', () => {
    const logs = docker(['logs', container.getId()]);
    expect(logs).toContain('beyond this machine, with authentication off');
    // In a container 0.0.0.0 is how a published port gets in: the advice is where to publish.
    expect(logs).toContain('-p 127.0.0.1:9997:9997');
  });

  it('has the offline engines\' Python modules (espeak-ng and tesseract are served through them)', async () => {
    // Before, the image had espeak-ng and tesseract but not soundfile, pocketsphinx or
    // Pillow: launching espeak-ng or tesseract-ocr was 400 engine_unavailable.
    await exec(['/app/python-runtime/.venv/bin/python', '-c', 'import soundfile, pocketsphinx, PIL, pypdfium2']);
  });

  it('refuses --port and --host as arguments: the health check reads HANGAR_PORT', () => {
    let refused: { status?: number; stderr?: string } = {};
    try {
      docker(['run', '--rm', '--network', 'none', image, '--port', '9998']);
    } catch (err) {
      refused = err as { status?: number; stderr?: string };
    }
    expect(refused.status).toBe(2);
    expect(String(refused.stderr)).toContain('HANGAR_PORT');
  });

  it('keeps its home folder writable by the service (the volume inherits the image folder)', async () => {
    const owner = await exec(['stat', '-c', '%u', '/var/lib/hangar', '/var/lib/hangar/cache']);
    expect(owner.trim().split('\n')).toEqual([String(IMAGE_UID), String(IMAGE_UID)]);
  });
});
