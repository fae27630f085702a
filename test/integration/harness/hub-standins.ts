import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { repoRoot, venvPython } from './server.js';

export interface Standin {
  url: string;
  process: ChildProcess;
  /** One line per request, `GET <path> range=<header>`, as the stand-in logs them. */
  asked: string[];
}

/**
 * A loopback stand-in hub as a process: test/fixtures/hub_standin.py (the Hugging Face
 * hub's API as huggingface_hub calls it) or modelscope_standin.py (ModelScope's), serving
 * `repos` ({repo id: folder}); `extra` are its other flags (`--cut-once`, `--downloads`).
 */
export async function startStandin(script: 'hub_standin.py' | 'modelscope_standin.py', repos: Record<string, string>, extra: string[] = []): Promise<Standin> {
  const args = [path.join(repoRoot, 'test', 'fixtures', script), ...Object.entries(repos).flatMap(([id, dir]) => ['--repo', `${id}=${dir}`]), ...extra];
  const child = spawn(venvPython, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const asked: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const found = /^port (\d+)$/.exec(line);
      if (found) resolve(Number(found[1]));
      else asked.push(line);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, process: child, asked };
}
