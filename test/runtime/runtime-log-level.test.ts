import { describe, expect, it } from 'vitest';
import { runtimeLineLevel } from '../../src/runtime/runtime-log-level.js';

describe("a runtime's stderr lines keep their level in the control plane's log", () => {
  it.each([
    ['[qwen-0-1] 2026-11-29 17:30:00,123 WARNING hangar_runtime.work: call 5 refused (invalid input: ValueError)', 'warn'],
    ['[qwen-0-1] 2026-11-29 17:30:00,123 ERROR hangar_runtime.work: call 6 failed (internal)\\nTraceback ...', 'error'],
    ['[qwen-0-1] 2026-11-29 17:30:00,123 CRITICAL root: out of memory', 'error'],
    // Asked for with HANGAR_RUNTIME_LOG_LEVEL=DEBUG: shown at the control plane's default level.
    ['[qwen-0-1] 2026-11-29 17:30:00,123 DEBUG hangar_runtime.batch: step of 3', 'info'],
    ['[qwen-0-1] 2026-11-29 17:30:00,123 INFO hangar_runtime: loaded', 'info'],
    // The Node runtime's shape: an ISO time in one word.
    ['[gguf-0-1] 2026-11-29T17:30:00.123Z WARNING hangar_llama: slow step', 'warn'],
    // Another shape (a native library's own output), or a message that only mentions a level: info.
    ['llama_model_loader: - kv   0: ERROR in the name of a key', 'info'],
    ['[x] 2026-11-29 17:30:00,123 INFO root: the word ERROR in a message', 'info'],
    ['', 'info'],
  ])('%s', (line, level) => {
    expect(runtimeLineLevel(line)).toBe(level);
  });
});
