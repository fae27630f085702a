#!/usr/bin/env node
// Bundles the compiled control plane (dist/main.js and everything it imports, our
// files and most of node_modules) into dist/bundle/hangar.mjs and the chunks it loads, which
// bin/hangar.js runs. Why: a start spent most of its ~2 CPU-seconds resolving,
// opening and compiling ~340 of our files and ~70 packages one module at a time;
// from the bundle the service is ready about 0.6 s sooner on a 2-core machine
// (docs/performance.md, "Starting faster"). tsc stays the compiler and dist/ its
// output; this only joins what tsc wrote. Runs after tsc in `npm run build` and the
// set-up.
//
// Left outside (loaded from node_modules as before):
// - native addons, which Node loads by path: better-sqlite3, zeromq, node-llama-cpp;
// - packages that read files beside their own code at run time: @fastify/swagger
//   (its package.json), @fastify/swagger-ui (the UI's static files), pino (its
//   transports start worker threads from file paths).
//
// The bundle sits two folders below the package root, as every file of dist/ does, so
// the paths the code derives from its own location (config.ts's `packageRoot`, the
// Node runtime's entry beside dist/runtime/) resolve the same from it.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const EXTERNAL = ['better-sqlite3', 'zeromq', 'node-llama-cpp', '@fastify/swagger', '@fastify/swagger-ui', 'pino'];

const outdir = path.join(root, 'dist', 'bundle');
rmSync(outdir, { recursive: true, force: true }); // no chunk of an older build stays
await build({
  entryPoints: { hangar: path.join(root, 'dist', 'main.js') },
  outdir,
  // The service is a dynamic import of main.js: split there, a client command
  // (`hangar list`) loads the CLI's chunk and not the server's.
  splitting: true,
  chunkNames: '[name]-[hash]', // beside the entry, two folders below the root
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: EXTERNAL,
  // CommonJS packages inside an ES module bundle call `require` for Node's own
  // modules and for the packages left outside; an ES module has none of its own.
  banner: { js: "import { createRequire as __hangarCreateRequire } from 'node:module'; const require = __hangarCreateRequire(import.meta.url);" },
  logLevel: 'warning',
  // Stack traces name the bundle's lines; each file's section starts with a
  // `// dist/<file>.js` comment to find the source by.
  legalComments: 'none',
});
