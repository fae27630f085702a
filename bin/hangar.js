#!/usr/bin/env node
// The command-line entry: runs the compiled control plane from dist/. The one-file
// bundle (scripts/bundle-control-plane.mjs) starts faster; it is used when it was made
// after tsc last wrote dist/main.js, so a compile without the bundle step is never
// shadowed by an older bundle.
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const bundle = fileURLToPath(new URL('../dist/bundle/hangar.mjs', import.meta.url));
if (!existsSync(main)) {
  process.stderr.write('hangar: the control plane is not built yet. Run `npm ci && npm run setup` in the repository first.\n');
  process.exit(1);
}
const fresh = existsSync(bundle) && statSync(bundle).mtimeMs >= statSync(main).mtimeMs;
await import(fresh ? bundle : main);
