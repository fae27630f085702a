import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChatPrompt } from '../../src/llama-runtime/engine/chat-prompt.js';
import { fieldOf, type InvalidInput } from '../../src/llama-runtime/invalid-input.js';
import { repoRoot, venvPython } from '../integration/harness/server.js';

const SPECIAL = { bos_token: '<s>', eos_token: '</s>' };

const TOOLS = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { enum: ['c', 'f'] } }, required: ['city'] } } },
];

const CONVERSATIONS: Array<{ name: string; messages: unknown[]; tools?: unknown[] }> = [
  { name: 'one user turn', messages: [{ role: 'user', content: 'Hello there, how are you?' }] },
  {
    name: 'system and turns',
    messages: [
      { role: 'system', content: 'You are brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello! ünïcödé and "quotes"' },
      { role: 'user', content: [{ type: 'text', text: 'Two ' }, { type: 'text', text: 'parts' }] },
    ],
  },
  {
    name: 'a tool round trip',
    tools: TOOLS,
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris", "unit": "c"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp": 21}' },
    ],
  },
];

/** The built-in families whose templates the comparison covers (their own chat templates, as registered). */
const FAMILIES = ['qwen2.5-instruct', 'qwen3', 'llama-3.1-instruct', 'llama-3.2-instruct', 'phi-4', 'phi-3.5-mini-instruct', 'gemma-2-it', 'mistral-instruct-v0.3', 'deepseek-r1-distill-qwen'];

/** The Transformers engine's own rendering (chat_format.render_chat, over apply_chat_template) for each case, in one Python process. */
function renderWithTransformers(cases: Array<{ template: string; messages: unknown[]; tools?: unknown[] }>): Array<{ text?: string; error?: string }> {
  const script = `
import json, sys
sys.path.insert(0, ${JSON.stringify(path.join(repoRoot, 'test', 'fixtures'))})
sys.path.insert(0, ${JSON.stringify(path.join(repoRoot, 'python-runtime'))})
from tiny_models import build_tokenizer
from hangar_runtime.engines.transformers_llm.chat_format import render_chat
tok = build_tokenizer()
out = []
for case in json.load(sys.stdin):
    try:
        out.append({"text": render_chat(tok, case["messages"], template=case["template"], tools=case.get("tools"),
                                        chat_template_kwargs=${JSON.stringify(SPECIAL)})})
    except Exception as exc:
        out.append({"error": str(exc)})
print(json.dumps(out))
`;
  const stdout = execFileSync(venvPython, ['-c', script], { input: JSON.stringify(cases), encoding: 'utf8', env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' } });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Array<{ text?: string; error?: string }>;
}

// The llama.cpp engine renders chat templates in Node (@huggingface/jinja); the
// Transformers engine in Python (jinja2 through apply_chat_template). The same template
// and messages must give the same prompt text, byte for byte.
describe('chat prompts: the llama.cpp engine renders what the Transformers engine renders', () => {
  it('gives the same text for every built-in family template and conversation', () => {
    const cases = FAMILIES.flatMap((family) => {
      const record = JSON.parse(readFileSync(path.join(repoRoot, 'src', 'registry', 'builtin', 'llm', `${family}.json`), 'utf8')) as { chat_template: string; model_ability: string[] };
      return CONVERSATIONS.filter((c) => !c.tools || record.model_ability.includes('tools')).map((c) => ({ family, name: c.name, template: record.chat_template, messages: c.messages, tools: c.tools }));
    });
    const expected = renderWithTransformers(cases);
    let compared = 0;
    cases.forEach((c, i) => {
      const want = expected[i]!;
      const prompt = new ChatPrompt(c.template, SPECIAL);
      if (want.error !== undefined) {
        // A template that refuses the conversation refuses it on both sides.
        expect(() => prompt.render(c.messages, { tools: c.tools }), `${c.family}: ${c.name}`).toThrow();
        return;
      }
      expect(prompt.render(c.messages, { tools: c.tools }), `${c.family}: ${c.name}`).toBe(want.text);
      compared++;
    });
    expect(compared).toBeGreaterThanOrEqual(FAMILIES.length * 2);
  }, 60_000);

  it('refuses what a template rejects, and messages of the wrong shape, as invalid input', () => {
    const prompt = new ChatPrompt("{% for m in messages %}{% if m.role == 'tool' %}{{ raise_exception('no tools here') }}{% endif %}{{ m.content }}{% endfor %}", SPECIAL);
    expect(() => prompt.render([{ role: 'tool', content: 'x' }])).toThrow(/no tools here/);
    expect(() => prompt.render([])).toThrow(/non-empty list/);
    expect(() => prompt.render([{ content: 'no role' }])).toThrow(/string role/);
    expect(() => prompt.render([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }])).toThrow(/text only, not image_url/);
    const textless = (() => {
      try {
        prompt.render([{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text' }] }]);
      } catch (err) {
        return err as InvalidInput;
      }
      return null;
    })();
    expect(textless?.message).toBe("messages[0].content[1].text must be a string (a text part's text)");
    expect(fieldOf(textless)).toBe('messages.0.content.1.text');
    expect(() => new ChatPrompt('{% if %}', SPECIAL)).toThrow(/does not parse/);
  });
});
