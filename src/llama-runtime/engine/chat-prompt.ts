import { InvalidInput } from '../invalid-input.js';
import { BoundedTemplate } from './bounded-template.js';

type Message = Record<string, unknown>;

/** The special tokens a chat template may name, as transformers passes them (`bos_token`, `eos_token`, ...). */
export type SpecialTokens = Record<string, string>;

/**
 * OpenAI chat messages to the prompt text through a chat template: the
 * registration's `chat_template` when it gives one, else the GGUF's own
 * (`tokenizer.chat_template`). The same rendering transformers'
 * `apply_chat_template` does for the Transformers engine (python-runtime's
 * chat_format.py): the same message normalisation, `add_generation_prompt`, `tools`
 * and special tokens; @huggingface/jinja (the port of Jinja made for chat templates)
 * brings `raise_exception`, `strftime_now`, `tojson` and Jinja's `trim_blocks` and
 * `lstrip_blocks`, as transformers sets them, rendered under limits (bounded-template.ts).
 * Compiled templates are kept: a template is parsed once per model.
 */
export class ChatPrompt {
  private readonly template: BoundedTemplate;
  /** Whether the template names the `developer` role (gpt-oss's do); else it is `system` (developerAsSystem). */
  private readonly knowsDeveloper: boolean;

  constructor(private readonly source: string, private readonly specialTokens: SpecialTokens) {
    this.knowsDeveloper = source.includes('developer');
    try {
      this.template = new BoundedTemplate(source);
    } catch (err) {
      throw new InvalidInput(`The chat template does not parse: ${(err as Error).message}`);
    }
  }

  /**
   * `continueFinalMessage` (vLLM's `continue_final_message`, Anthropic's prefill) ends
   * the prompt inside the last message, for the answer to go on with it;
   * `addGenerationPrompt: false` ends it after the last message, no assistant turn opened.
   */
  render(messages: unknown, options: { tools?: unknown; chatTemplateKwargs?: unknown; addGenerationPrompt?: boolean; continueFinalMessage?: boolean } = {}): string {
    const kwargs = options.chatTemplateKwargs ?? {};
    if (typeof kwargs !== 'object' || kwargs === null || Array.isArray(kwargs)) {
      throw new InvalidInput(`chat_template_kwargs must be a map, got ${Array.isArray(kwargs) ? 'list' : typeof kwargs}`);
    }
    const tools = options.tools;
    if (tools !== undefined && tools !== null && (!Array.isArray(tools) || !tools.every((t) => typeof t === 'object' && t !== null && !Array.isArray(t)))) {
      throw new InvalidInput('tools must be a list of maps');
    }
    const toolList = Array.isArray(tools) && tools.length > 0 ? tools : null;
    const continuing = options.continueFinalMessage === true;
    const normalized = normalizeMessages(messages);
    const finalText = String(normalized.at(-1)!.content);
    if (continuing) {
      if (!this.source.includes('content')) throw new InvalidInput('continue_final_message: this chat template writes no message content, so there is none to continue', 'messages');
      normalized[normalized.length - 1] = { ...normalized.at(-1)!, content: `${finalText}${CONTINUE_TAG}` };
    }
    try {
      // Ours win over same-named chat_template_kwargs: the prompt must be text ending
      // where the assistant's reply starts.
      const text = this.template.render({
        ...this.specialTokens,
        ...(kwargs as Record<string, unknown>),
        messages: this.knowsDeveloper ? normalized : developerAsSystem(normalized),
        tools: toolList,
        add_generation_prompt: options.addGenerationPrompt !== false && !continuing,
      });
      return continuing ? cutAtTag(text, finalText) : text;
    } catch (err) {
      // Templates reject what they cannot render (raise_exception, a role they do not
      // know): the request is at fault, not the engine.
      if (err instanceof InvalidInput) throw err;
      throw new InvalidInput(`The chat template rejected the messages: ${(err as Error).message}`);
    }
  }
}

/** Marks where the final message's text ends (transformers' own tag, so both engines cut alike). */
const CONTINUE_TAG = 'CONTINUE_FINAL_MESSAGE_TAG ';

/**
 * The rendered chat up to the end of its last message's text, without what the template
 * writes after it (the end-of-turn token): transformers' `continue_final_message`, done
 * as it does it (render_jinja_template): the message's text is rendered with a tag after
 * it, and the prompt is cut at the tag's last place; a template that trimmed the text's
 * trailing spaces has them trimmed here too.
 */
function cutAtTag(rendered: string, final: string): string {
  if (!rendered.includes(final.trim()) || !rendered.includes(CONTINUE_TAG.trim())) {
    throw new InvalidInput('continue_final_message: the final message does not appear in the chat after the chat template renders it, so it cannot be continued', 'messages');
  }
  const at = rendered.lastIndexOf(CONTINUE_TAG.trim());
  return rendered.startsWith(CONTINUE_TAG, at) ? rendered.slice(0, at) : rendered.slice(0, at).trimEnd();
}

/**
 * OpenAI's `developer` role is its `system` role by another name (its docs now prefer it).
 * A template that does not name it has no branch for it and dropped the message
 * silently: the instruction never reached the model. So it is `system` there, as the
 * Responses route maps it (chat_format.py does the same for Transformers and vLLM).
 */
export function developerAsSystem(messages: Message[]): Message[] {
  return messages.map((m) => (m.role === 'developer' ? { ...m, role: 'system' } : m));
}

/** Copies of the messages in the shape chat templates expect (chat_format.py's normalize_messages). */
export function normalizeMessages(messages: unknown): Message[] {
  if (!Array.isArray(messages) || messages.length === 0) throw new InvalidInput('messages must be a non-empty list');
  return messages.map((raw, index) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || typeof (raw as Message).role !== 'string') {
      throw new InvalidInput(`messages[${index}] must be a map with a string role`);
    }
    const message: Message = { ...(raw as Message) };
    message.content = textContent(message.content, index, message.role);
    if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
      message.tool_calls = message.tool_calls.map(templateToolCall);
    }
    return message;
  });
}

function textContent(content: unknown, index: number, role: unknown): string {
  // OpenAI allows a list of typed parts; a text-only model can take the text ones, and
  // an assistant's refusal part (history of an answer that refused) is its text.
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part, at) => {
        const p = part as { type?: unknown; text?: unknown; refusal?: unknown } | null;
        if (typeof p === 'object' && p !== null && p.type === 'text' && typeof p.text !== 'string') {
          throw new InvalidInput(`messages[${index}].content[${at}].text must be a string (a text part's text)`, `messages.${index}.content.${at}.text`);
        }
        if (role === 'assistant' && typeof p === 'object' && p !== null && p.type === 'refusal' && typeof p.refusal === 'string') return p.refusal;
        if (typeof p !== 'object' || p === null || p.type !== 'text') {
          const kind = typeof p === 'object' && p !== null ? String(p.type) : typeof p;
          throw new InvalidInput(`messages[${index}].content[${at}]: this model takes text only, not ${kind} parts`, `messages.${index}.content.${at}`);
        }
        return p.text;
      })
      .join('');
  }
  throw new InvalidInput(`messages[${index}].content must be a string or a list of text parts`);
}

function templateToolCall(call: unknown): unknown {
  // OpenAI sends arguments as a JSON string; templates (Qwen's and others) render them
  // with `tojson`, which would quote that string a second time.
  if (typeof call !== 'object' || call === null || Array.isArray(call)) throw new InvalidInput('tool_calls items must be maps');
  const copy = { ...(call as Message) };
  const fn = copy.function as Message | undefined;
  if (typeof fn === 'object' && fn !== null && typeof fn.arguments === 'string') {
    try {
      copy.function = { ...fn, arguments: JSON.parse(fn.arguments) as unknown };
    } catch {
      // not JSON: the template gets the string as it is
    }
  }
  return copy;
}
