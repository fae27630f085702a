import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseEngine } from '../../src/llama-runtime/engine/llama-server-binary.js';

/**
 * Which engine process a llama.cpp LLM replica gets (docs/decisions.md, "llama.cpp:
 * llama-server as the engine process"): the built llama-server by default, the binding
 * where none is built, and what HANGAR_LLAMA_ENGINE / HANGAR_LLAMA_SERVER ask.
 */
describe('the llama.cpp engine process', () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'hangar-engine-choice-'));
  const built = path.join(folder, 'llama-server');
  writeFileSync(built, '#!/bin/sh\n');
  chmodSync(built, 0o755);
  const missing = path.join(folder, 'not-built', 'llama-server');
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  const asked: boolean[] = [];
  const at = (where: string) => (gpu: boolean) => {
    asked.push(gpu);
    return where;
  };

  it('is the built llama-server when there is one, for the replica\'s variant', () => {
    expect(chooseEngine({}, false, at(built))).toEqual({ binary: built, why: 'built by scripts/build-llama-server.mjs' });
    expect(chooseEngine({}, true, at(built)).binary).toBe(built);
    expect(asked.slice(-2)).toEqual([false, true]);
  });

  it('falls back to node-llama-cpp where none is built, and says how to build one', () => {
    const cpu = chooseEngine({}, false, at(missing));
    expect(cpu.binary).toBeNull();
    expect(cpu.why).toContain('node scripts/build-llama-server.mjs');
    expect(chooseEngine({}, true, at(missing)).why).toContain('build-llama-server.mjs --cuda');
  });

  it('follows HANGAR_LLAMA_ENGINE and HANGAR_LLAMA_SERVER', () => {
    expect(chooseEngine({ HANGAR_LLAMA_ENGINE: 'binding' }, false, at(built)).binary).toBeNull();
    expect(() => chooseEngine({ HANGAR_LLAMA_ENGINE: 'server' }, false, at(missing))).toThrow(/no llama-server at .*not-built/);
    expect(() => chooseEngine({ HANGAR_LLAMA_ENGINE: 'fast' }, false, at(built))).toThrow(/"server" or "binding"/);
    expect(chooseEngine({ HANGAR_LLAMA_SERVER: built }, false, at(missing))).toEqual({ binary: built, why: 'HANGAR_LLAMA_SERVER' });
    expect(() => chooseEngine({ HANGAR_LLAMA_SERVER: missing }, false, at(built))).toThrow(/HANGAR_LLAMA_SERVER, but there is no llama-server/);
  });
});
