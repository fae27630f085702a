import { chmod, mkdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { curveKeyPair } from 'zeromq';
import { writeFileAtomic } from '../storage/atomic-file.js';

/** A CURVE key pair in Z85 text (40 characters each). */
export interface CurveKeyPair {
  publicKey: string;
  secretKey: string;
}

/**
 * The cluster's CURVE keys (docs/runtime-protocol.md, "Transport and security"): the
 * control plane's ROUTERs are CURVE servers with `server`; every runtime is a CURVE
 * client with `client` and knows the server's public key. The control plane lets in
 * only the cluster's client key, so nobody else on the network can talk to a runtime
 * socket, and all traffic is encrypted.
 */
export interface ClusterKeys {
  server: CurveKeyPair;
  client: CurveKeyPair;
}

const Z85_KEY = /^[0-9a-zA-Z.\-:+=^!/*?&<>()[\]{}@%$#]{40}$/;

/** `<home>/cluster/curve-keys.json`, readable by its owner only. */
export function clusterKeysFile(home: string): string {
  return path.join(home, 'cluster', 'curve-keys.json');
}

/**
 * The keys of this home folder's cluster: read when present, made and written (mode
 * 0600, atomically) the first time. Kept across restarts so runtimes still running
 * on other nodes after a control-plane restart hold keys it accepts.
 */
export async function loadOrCreateClusterKeys(home: string): Promise<ClusterKeys> {
  const file = clusterKeysFile(home);
  let text: string | null = null;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (text !== null) {
    const keys = parseClusterKeys(text, file);
    // A copy made by hand with a loose mode is tightened rather than refused.
    if (((await stat(file)).mode & 0o077) !== 0) await chmod(file, 0o600);
    return keys;
  }
  const keys: ClusterKeys = { server: curveKeyPair(), client: curveKeyPair() };
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFileAtomic(file, `${JSON.stringify(keys, null, 2)}\n`, 0o600);
  return keys;
}

function parseClusterKeys(text: string, file: string): ClusterKeys {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not JSON; remove it to make new cluster keys (running remote runtimes will then be refused)`);
  }
  const pair = (v: unknown, name: string): CurveKeyPair => {
    const p = v as Partial<CurveKeyPair> | null;
    if (!p || typeof p.publicKey !== 'string' || typeof p.secretKey !== 'string' || !Z85_KEY.test(p.publicKey) || !Z85_KEY.test(p.secretKey)) {
      throw new Error(`${file}: "${name}" must hold a Z85 publicKey and secretKey (40 characters each)`);
    }
    return { publicKey: p.publicKey, secretKey: p.secretKey };
  };
  const v = value as Record<string, unknown>;
  return { server: pair(v?.server, 'server'), client: pair(v?.client, 'client') };
}
