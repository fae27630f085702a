/**
 * The llama.cpp benchmark's floor: node-llama-cpp in this process, with nothing in
 * between (no sockets, no HTTP), on the same GGUF and thread count the runtime uses.
 *
 *   node --import tsx bench/lib/llama-floor.ts <gguf> <threads> <max_tokens> <repeats> <ttft_runs>
 *
 * prints one JSON line: {tokens_per_s (one sequence, best of repeats), ttft_ms (the
 * median time from a prompt to its first text: the first tokens that decode to whole
 * characters, what a stream's first event carries), concurrent_tokens_per_s (8
 * sequences of one context generating together)}. Like the runtime, each run keeps the
 * prompt's prefix already in the sequence's cache and runs past end tokens (the
 * served side sends ignore_eos), so both sides generate the same tokens.
 */
import { getLlama, LlamaLogLevel, type LlamaContextSequence, type Token } from 'node-llama-cpp';

const [file, threadsArg, maxTokensArg, repeatsArg, ttftRunsArg] = process.argv.slice(2);
const threads = Number(threadsArg);
const maxTokens = Number(maxTokensArg);
const PROMPT = 'Once upon a time there was a little robot who liked to count the stars';

const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: file! });
const context = await model.createContext({ contextSize: 512, sequences: 8, threads });
const sequences = Array.from({ length: 8 }, () => context.getSequence());

async function generate(sequence: LlamaContextSequence, prompt: Token[], count: number): Promise<{ tokens: number; firstMs: number }> {
  const started = performance.now();
  // What the runtime does too: keep the cached prefix of the prompt, evaluate the rest
  // (at least its last token).
  const { firstDifferentIndex } = sequence.compareContextTokens(prompt);
  const keep = Math.min(firstDifferentIndex, prompt.length - 1);
  if (keep < sequence.nextTokenIndex) await sequence.eraseContextTokenRanges([{ start: keep, end: sequence.nextTokenIndex }]);
  let firstMs = 0;
  const generated: Token[] = [];
  // Past end tokens, as the served side's ignore_eos: every run generates `count` tokens.
  for await (const token of sequence.evaluate(prompt.slice(keep), { temperature: 0, yieldEogToken: true } as never)) {
    generated.push(token);
    if (firstMs === 0) {
      const text = model.detokenize(generated, false);
      if (text.length > 0 && !text.endsWith('\ufffd')) firstMs = performance.now() - started;
    }
    if (generated.length >= count) break;
  }
  return { tokens: generated.length, firstMs };
}

const prompt = model.tokenize(PROMPT, true);
let best = 0;
for (let i = 0; i <= Number(repeatsArg); i++) {
  const started = performance.now();
  const { tokens } = await generate(sequences[0]!, prompt, maxTokens);
  if (i > 0) best = Math.max(best, tokens / ((performance.now() - started) / 1000));
}
const firsts: number[] = [];
for (let i = 0; i < Number(ttftRunsArg); i++) firsts.push((await generate(sequences[0]!, prompt, 8)).firstMs);
firsts.sort((a, b) => a - b);
const started = performance.now();
const together = await Promise.all(sequences.map((s, i) => generate(s, model.tokenize(`${PROMPT}, number ${i}`, true), 64)));
const concurrent = together.reduce((sum, r) => sum + r.tokens, 0) / ((performance.now() - started) / 1000);
console.log(JSON.stringify({ tokens_per_s: best, ttft_ms: firsts[Math.floor(firsts.length / 2)], concurrent_tokens_per_s: concurrent }));
await context.dispose();
await model.dispose();
