import { z } from 'zod';

/** Anthropic's Messages API request (docs/anthropic.md), as its SDKs send it. */

const textBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
const imageBlock = z.looseObject({
  type: z.literal('image'),
  source: z.union([
    z.looseObject({ type: z.literal('base64'), media_type: z.string(), data: z.string() }),
    z.looseObject({ type: z.literal('url'), url: z.string() }),
  ]),
});
const toolUseBlock = z.looseObject({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: z.unknown() });
const toolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.union([textBlock, imageBlock]))]).optional(),
  is_error: z.boolean().optional(),
});
const thinkingBlock = z.looseObject({ type: z.enum(['thinking', 'redacted_thinking']) });
export const contentBlock = z.union([textBlock, imageBlock, toolUseBlock, toolResultBlock, thinkingBlock], {
  error: 'content blocks must be text, image, tool_use, tool_result or thinking',
});
export type ContentBlock = z.infer<typeof contentBlock>;

/**
 * A client tool (a name and an input_schema). Anthropic's server tools (`web_search_…`,
 * `code_execution_…`, `bash_…`, `text_editor_…`) run on Anthropic's servers: refused by
 * their type, where before they failed as a client tool without `input_schema`.
 */
const tool = z.preprocess(
  (value, ctx) => {
    const type = (value as { type?: unknown } | null)?.type;
    if (typeof type === 'string' && type !== 'custom') {
      ctx.issues.push({ code: 'custom', input: value, path: ['type'], message: `${type} is one of Anthropic's server tools, which run on Anthropic's servers; this service serves client tools (a name and an input_schema)` });
      return z.NEVER;
    }
    return value;
  },
  z.looseObject({ name: z.string().min(1), description: z.string().optional(), input_schema: z.record(z.string(), z.unknown()) }),
);

export const messagesBody = z.looseObject({
  model: z.string({ error: (issue) => (issue.input === undefined ? 'is required' : undefined) }).min(1),
  max_tokens: z.int({ error: (issue) => (issue.input === undefined ? 'is required: the most tokens to generate' : undefined) }).min(1),
  messages: z
    .array(z.looseObject({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(contentBlock)]) }), {
      error: (issue) => (issue.input === undefined ? 'is required' : undefined),
    })
    .min(1, 'must hold at least one message'),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  // Ours, as on chat: the LoRA adapter that answers (also `model: "<uid>:<adapter>"`).
  lora_name: z.string().nullish(),
  stop_sequences: z.array(z.string().min(1, 'stop sequences must not be empty')).max(16).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().gt(0).max(1).optional(),
  top_k: z.int().min(0).optional(),
  stream: z.boolean().optional(),
  tools: z.array(tool).optional(),
  tool_choice: z
    .union([
      z.looseObject({ type: z.enum(['auto', 'any', 'none']) }),
      z.looseObject({ type: z.literal('tool'), name: z.string().min(1) }),
    ])
    .optional(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).optional(),
  // Anthropic's own bounds (Xinference checks the same): at least 1024, and below max_tokens (routes.ts).
  thinking: z
    .union([z.looseObject({ type: z.literal('enabled'), budget_tokens: z.int().min(1024, 'must be at least 1024') }), z.looseObject({ type: z.literal('disabled') })])
    .optional(),
  // Structured outputs (the SDK's messages.parse): the answer follows a JSON Schema, as
  // chat's response_format json_schema; `effort` (how hard a Claude model thinks) has no
  // counterpart here and is accepted as a hint that changes nothing.
  output_config: z
    .looseObject({ format: z.looseObject({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) }).nullish() })
    .nullish(),
});
export type MessagesBody = z.infer<typeof messagesBody>;

/**
 * `POST /v1/messages/count_tokens`: a Messages request without what only generation
 * needs (Anthropic's MessageCountTokensParams). Sampling fields a client leaves in are
 * accepted and ignored, as other unknown fields are.
 */
export const countTokensBody = messagesBody.omit({ max_tokens: true, stream: true });
export type CountTokensBody = z.infer<typeof countTokensBody>;
