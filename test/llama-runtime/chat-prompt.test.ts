import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Template } from '@huggingface/jinja';
import { TEMPLATE_LIMITS } from '../../src/llama-runtime/engine/bounded-template.js';
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
  // OpenAI's developer role: no family template names it, and it was dropped silently.
  { name: 'a developer instruction', messages: [{ role: 'developer', content: 'Answer only in French.' }, { role: 'user', content: 'Hi' }] },
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

/** How a prompt ends: vLLM's `add_generation_prompt` and `continue_final_message` (Anthropic's prefill). */
type Ending = { addGenerationPrompt?: boolean; continueFinalMessage?: boolean };

/** Prompts that do not open a new assistant turn: a prefill to continue (with and without spaces round it), a chat left as it is. */
const ENDINGS: Array<{ name: string; messages: unknown[]; ending: Ending }> = [
  { name: 'a prefill', messages: [{ role: 'user', content: 'Give me JSON.' }, { role: 'assistant', content: '{"answer":' }], ending: { continueFinalMessage: true } },
  { name: 'a prefill in parts, spaced', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Count.' }, { role: 'assistant', content: [{ type: 'text', text: ' One, two,' }, { type: 'text', text: ' three ' }] }], ending: { continueFinalMessage: true } },
  { name: 'no turn opened', messages: [{ role: 'user', content: 'Hello' }], ending: { addGenerationPrompt: false } },
];

/** The built-in families whose templates the comparison covers (their own chat templates, as registered). */
const FAMILIES = ['qwen2.5-instruct', 'qwen3', 'llama-3.1-instruct', 'llama-3.2-instruct', 'phi-4', 'phi-3.5-mini-instruct', 'gemma-2-it', 'mistral-instruct-v0.3', 'deepseek-r1-distill-qwen'];

/** The Transformers engine's own rendering (chat_format.render_chat, over apply_chat_template) for each case, in one Python process. */
function renderWithTransformers(cases: Array<{ template: string; messages: unknown[]; tools?: unknown[]; ending?: Ending }>): Array<{ text?: string; error?: string }> {
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
        ending = case.get("ending") or {}
        out.append({"text": render_chat(tok, case["messages"], template=case["template"], tools=case.get("tools"),
                                        chat_template_kwargs=${JSON.stringify(SPECIAL)},
                                        add_generation_prompt=ending.get("addGenerationPrompt", True),
                                        continue_final_message=ending.get("continueFinalMessage", False))})
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
    // The developer instruction reaches the prompt, as a system message would, on every family that takes one.
    cases.forEach((c, i) => {
      if (c.name !== 'a developer instruction' || expected[i]!.error !== undefined) return;
      const asSystem = new ChatPrompt(c.template, SPECIAL).render([{ role: 'system', content: 'Answer only in French.' }, { role: 'user', content: 'Hi' }]);
      expect(expected[i]!.text, c.family).toBe(asSystem);
      expect(expected[i]!.text, c.family).toContain('Answer only in French.');
    });
  }, 60_000);

  it('ends a prompt inside a final message to continue it (continue_final_message, a prefill), or with no turn opened, as transformers does', () => {
    const cases = FAMILIES.flatMap((family) => {
      const record = JSON.parse(readFileSync(path.join(repoRoot, 'src', 'registry', 'builtin', 'llm', `${family}.json`), 'utf8')) as { chat_template: string };
      return ENDINGS.map((c) => ({ family, name: c.name, template: record.chat_template, messages: c.messages, ending: c.ending }));
    });
    const expected = renderWithTransformers(cases);
    let continued = 0;
    cases.forEach((c, i) => {
      const want = expected[i]!;
      const prompt = new ChatPrompt(c.template, SPECIAL);
      if (want.error !== undefined) {
        expect(() => prompt.render(c.messages, c.ending), `${c.family}: ${c.name}`).toThrow();
        return;
      }
      const text = prompt.render(c.messages, c.ending);
      expect(text, `${c.family}: ${c.name}`).toBe(want.text);
      if (c.ending.continueFinalMessage) {
        // The prompt ends with the prefill's text: no end of turn after it, no new turn.
        expect(text.trimEnd().endsWith(c.name === 'a prefill' ? '{"answer":' : 'three'), `${c.family}: ${c.name}`).toBe(true);
        continued++;
      }
    });
    expect(continued).toBeGreaterThanOrEqual(FAMILIES.length * 2 - 2);
    // A final message the template drops cannot be continued, nor one of a template that writes no content: said so.
    const droppingSource = "{% for m in messages %}{% if m.role == 'user' %}{{ m.content }}{% endif %}{% endfor %}";
    const dropping = new ChatPrompt(droppingSource, SPECIAL);
    const dropped = [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'prefix' }];
    expect(() => dropping.render(dropped, { continueFinalMessage: true })).toThrow(/does not appear in the chat/);
    // In the same words on the Transformers engine (transformers' own quoted the whole rendered chat).
    const [python] = renderWithTransformers([{ template: droppingSource, messages: dropped, ending: { continueFinalMessage: true } }]);
    expect(python!.error).toBe('continue_final_message: the final message does not appear in the chat after the chat template renders it, so it cannot be continued');
    expect(() => new ChatPrompt('{{ bos_token }}', SPECIAL).render([{ role: 'assistant', content: 'x' }], { continueFinalMessage: true })).toThrow(/writes no message content/);
  }, 60_000);

  it('strips as Python strips: only the characters asked for (Qwen3 writes a reply as content.lstrip("\\n"))', () => {
    const probe = "[{{ x.lstrip('\\n') }}][{{ x.rstrip('\\n ') }}][{{ x.strip('\\n') }}][{{ x.strip() }}][{{ x.lstrip(none) }}][{{ x.strip('') }}][{{ y.strip('é') }}]";
    const rendered = new ChatPrompt(probe, SPECIAL).render([{ role: 'user', content: 'x' }], { chatTemplateKwargs: { x: '\n a b \n ', y: 'ééaé' } });
    // What Python's str methods give for the same calls.
    expect(rendered).toBe("[ a b \n ][\n a b][ a b \n ][a b][a b \n ][\n a b \n ][a]");
  });

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

  it('renders hostile templates under limits: a refused request, never an exhausted runtime', () => {
    const user = [{ role: 'user', content: 'hi' }];
    const refused = (source: string): string => {
      try {
        new ChatPrompt(source, SPECIAL).render(user);
      } catch (err) {
        return (err as Error).message;
      }
      return 'rendered';
    };
    // Each of these ran node out of heap, or held its event loop for a minute, with the library's own render.
    expect(refused('{% for i in range(100000000) %}x{% endfor %}')).toMatch(/rejected the messages: range\(\) of 100000000 items; templates may range over at most 100000/);
    expect(refused('{% for i in range(3000) %}{% for j in range(3000) %}{% endfor %}{% endfor %}')).toMatch(/more than 1000000 steps/);
    expect(refused("{% set ns = namespace(s='ab') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}")).toMatch(/more than 67108864 bytes of text and lists/);
    expect(refused("{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = ns.l + ns.l %}{% endfor %}")).toMatch(/more than 67108864 bytes of text and lists/);
    // The caps sit where Python's sandbox has its range: up to it renders.
    expect(TEMPLATE_LIMITS.maxRange).toBe(100_000);
    expect(new ChatPrompt('{% for i in range(100000) %}{% endfor %}{{ messages[0].content }}', SPECIAL).render(user)).toBe('hi');
    // The globals behave as the library's own: range's forms, strftime_now, raise_exception, the constants.
    const probe = '{{ range(5)|join(",") }}|{{ range(2, 9, 3)|join(",") }}|{{ range(5, 0, -2)|join(",") }}|{{ range(3, 1)|length }}|{{ strftime_now("%Y-%m-%d %b %B %%") }}|{{ true }}{{ True }}{{ none is none }}';
    expect(new ChatPrompt(probe, SPECIAL).render(user)).toBe(new Template(probe).render({}));
    expect(refused('{{ range(1, 5, 0) }}')).toMatch(/step must not be zero/);
    expect(refused("{{ raise_exception('no system role') }}")).toMatch(/no system role/);
    // The context cannot replace a global, as before.
    expect(() => new ChatPrompt('{{ range(3)|length }}', SPECIAL).render(user, { chatTemplateKwargs: { range: 7 } })).toThrow(/already declared: range/);
  });
});
