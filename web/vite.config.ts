import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const outDir = path.join(import.meta.dirname, 'dist');

/**
 * Writes `<file>.br` and `<file>.gz` beside every text file of the build, at the
 * highest settings, once: the server sends them as they are (@fastify/static's
 * `preCompressed`) instead of compressing on every request.
 */
function precompress(): Plugin {
  return {
    name: 'hangar-precompress',
    apply: 'build',
    closeBundle() {
      const walk = (dir: string): string[] =>
        readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
      for (const file of walk(outDir).filter((f) => /\.(html|js|css|svg|json)$/.test(f))) {
        const data = readFileSync(file);
        writeFileSync(`${file}.br`, brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.length } }));
        writeFileSync(`${file}.gz`, gzipSync(data, { level: 9 }));
      }
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [react(), precompress()],
  // Nothing outside src/ is copied as is: every file the page loads has a hashed name.
  publicDir: false,
  // The dashboards' chunk is ECharts (about 570 kB, 190 kB gzipped), loaded only when a dashboard opens.
  build: { outDir, emptyOutDir: true, assetsDir: 'assets', sourcemap: false, chunkSizeWarningLimit: 700 },
  logLevel: 'warn',
});
