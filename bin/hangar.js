#!/usr/bin/env node
// The command-line entry: runs the compiled control plane from dist/.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
if (!existsSync(main)) {
  process.stderr.write('hangar: the control plane is not built yet. Run `npm ci && npm run setup` in the repository first.\n');
  process.exit(1);
}
await import(main);
