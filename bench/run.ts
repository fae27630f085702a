/** `npm run bench`: every benchmark, one after another; each prints its figures and writes bench/results/<name>.json. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const benches = ['gateway-overhead.ts', 'auth-limits.ts', 'footprint.ts', 'launch.ts', 'llm-streaming.ts', 'llm-relay.ts', 'embeddings-batching.ts', 'cpu-replicas.ts', 'llamacpp.ts', 'on-demand.ts', 'stats-series.ts'];
let failed = 0;
for (const bench of benches) {
  console.log(`\n== ${bench}`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(here, bench)], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
