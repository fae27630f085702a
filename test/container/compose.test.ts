import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { repoRoot } from '../integration/harness/server.js';

const image = inject('hangarImage');

/** `docker-compose config` (Debian's Compose; docker/ci-build.sh installs it): schema validation and the merged result. */
function composeConfig(file: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('docker-compose', ['-f', file, 'config'], { encoding: 'utf8', env: { ...process.env, HANGAR_AUTH_CONFIG: '' } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe.skipIf(!image)('compose files', () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'hangar-compose-'));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('the GPU file validates and reserves the GPUs, the port, both volumes and the auth folder', () => {
    const result = composeConfig(path.join(repoRoot, 'docker', 'compose.yaml'));
    expect(result.status, result.stderr).toBe(0);
    const out = result.stdout;
    expect(out).toContain('driver: nvidia');
    expect(out).toContain('- gpu');
    expect(out).toContain('127.0.0.1:9997:9997');
    expect(out).toContain('hangar-home:/var/lib/hangar:rw');
    expect(out).toContain('hangar-cache:/var/lib/hangar/cache:rw');
    expect(out).toContain(':/etc/hangar:ro');
    expect(out).toContain('restart: unless-stopped');
    expect(out).toContain('dockerfile: docker/Dockerfile');
  });

  it('publishes on 127.0.0.1 by default, everywhere only when asked', () => {
    for (const file of ['compose.yaml', 'compose.cpu.yaml', 'compose.cluster.yaml']) {
      const result = composeConfig(path.join(repoRoot, 'docker', file));
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout, file).toContain('127.0.0.1:9997:9997');
    }
    const open = spawnSync('docker-compose', ['-f', path.join(repoRoot, 'docker', 'compose.yaml'), 'config'], { encoding: 'utf8', env: { ...process.env, HANGAR_PUBLISH: '9997' } });
    expect(serviceBlock(open.stdout, 'hangar')).not.toContain('127.0.0.1');
    // The monitoring profile's Prometheus (no login of its own) and Grafana stay on loopback.
    expect(serviceBlock(open.stdout, 'prometheus')).toContain('127.0.0.1:9090:9090');
    expect(serviceBlock(open.stdout, 'grafana')).toContain('127.0.0.1:3000:3000');
  });

  it('has a monitoring profile: Prometheus with the shipped scrape configuration and a key file, Grafana with the dashboard', () => {
    const result = composeConfig(path.join(repoRoot, 'docker', 'compose.yaml'));
    expect(result.status, result.stderr).toBe(0);
    const prometheus = serviceBlock(result.stdout, 'prometheus');
    expect(prometheus).toMatch(/profiles:\n\s+- monitoring/);
    expect(prometheus).toContain(path.join(repoRoot, 'docker', 'monitoring', 'prometheus.yml'));
    expect(prometheus).toContain('/etc/prometheus/hangar-key');
    const grafana = serviceBlock(result.stdout, 'grafana');
    expect(grafana).toMatch(/profiles:\n\s+- monitoring/);
    expect(grafana).toContain(path.join(repoRoot, 'docker', 'monitoring', 'grafana', 'dashboards'));
    // Hangar itself is in no profile: `up` without --profile starts it alone.
    expect(serviceBlock(result.stdout, 'hangar')).not.toContain('profiles:');
  });

  it('passes the users file as a Compose secret with the auth override', async () => {
    const users = path.join(scratch, 'auth.json');
    await writeFile(users, '{}');
    const result = spawnSync('docker-compose', ['-f', path.join(repoRoot, 'docker', 'compose.yaml'), '-f', path.join(repoRoot, 'docker', 'compose.auth.yaml'), 'config'], {
      encoding: 'utf8',
      env: { ...process.env, HANGAR_AUTH_FILE: users },
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('HANGAR_AUTH_CONFIG: /run/secrets/hangar-auth');
    expect(result.stdout).toContain(`file: ${users}`);
    expect(result.stdout).toMatch(/secrets:\n\s+- (source: )?hangar-auth/);
  });

  it('the cluster file gives each worker its own health check and announces only the GPUs it was given', () => {
    const result = composeConfig(path.join(repoRoot, 'docker', 'compose.cluster.yaml'));
    expect(result.status, result.stderr).toBe(0);
    const worker = result.stdout.slice(result.stdout.indexOf('  worker:'));
    expect(worker).toContain("[r]aylet");
    expect(worker).toMatch(/--num-gpus=/);
    expect(worker).toContain('replicas: 1');
  });

  it('the CPU file validates and builds from the same Dockerfile without a GPU reservation', () => {
    const result = composeConfig(path.join(repoRoot, 'docker', 'compose.cpu.yaml'));
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('dockerfile: docker/Dockerfile');
    expect(result.stdout).toContain('hangar-home:/var/lib/hangar:rw');
    expect(result.stdout).not.toContain('nvidia');
  });

  it('passes the documented settings from the shell, and installs the offline engines\' Python modules', () => {
    const env = { ...process.env, HANGAR_AUTH_CONFIG: '', HANGAR_ON_DEMAND: '1', HANGAR_MEMORY_BUDGET: '1GiB', HF_TOKEN: 'hf_probe', HF_HUB_OFFLINE: '1' };
    for (const file of ['compose.yaml', 'compose.cpu.yaml', 'compose.cluster.yaml']) {
      const result = spawnSync('docker-compose', ['-f', path.join(repoRoot, 'docker', file), 'config'], { encoding: 'utf8', env });
      expect(result.status, result.stderr).toBe(0);
      // Before, only HANGAR_AUTH_CONFIG and HANGAR_LOG_LEVEL reached the service.
      const service = serviceBlock(result.stdout, file === 'compose.cluster.yaml' ? 'head' : 'hangar');
      for (const line of ["HANGAR_ON_DEMAND: '1'", 'HANGAR_MEMORY_BUDGET: 1GiB', 'HF_TOKEN: hf_probe', "HF_HUB_OFFLINE: '1'"]) expect(service, `${file}: ${line}`).toContain(line);
      expect(result.stdout, file).toContain('python-runtime/requirements-media.txt');
    }
  });

  it('the validator refuses a file the schema does not allow (so passing means something)', async () => {
    const broken = path.join(scratch, 'compose.yaml');
    const text = await readFile(path.join(repoRoot, 'docker', 'compose.yaml'), 'utf8');
    await writeFile(broken, text.replace('restart: unless-stopped', 'restart: unless-stopped\n    gpus_please: all'));
    const result = composeConfig(broken);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('gpus_please');
  });
});

/** One service's block of `docker-compose config` output (two-space indented under `services:`). */
function serviceBlock(config: string, name: string): string {
  const start = config.indexOf(`\n  ${name}:\n`);
  if (start < 0) return '';
  const rest = config.slice(start + 1);
  const end = rest.slice(1).search(/\n  [a-z][\w-]*:\n|\n[a-z]/);
  return end < 0 ? rest : rest.slice(0, end + 1);
}
