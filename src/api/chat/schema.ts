import { z } from 'zod';
import { chatTemplateKwargs } from '../llm/chat-template-kwargs.js';
import { samplingShape, streamOptionsNeedStream } from '../llm/generate-config.js';

/**
 * A part of a message's content, of the kinds OpenAI's chat takes (and Xinference's
 * omni models' `video_url` and `audio_url`). Whether a model can serve a kind is its
 * engine's call (an image to a model without vision is `ability_missing`), but a part
 * of no known kind, or a text part without its text, is the body's fault on every
 * engine, the simulator included. `image_url`'s value is checked where images are
 * fetched (images-in-chat/), which names it.
 */
const contentPart = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text'), text: z.string() }),
  ...(['image_url', 'input_audio', 'file', 'refusal', 'video_url', 'audio_url'] as const).map((type) => z.looseObject({ type: z.literal(type) })),
]);

const messageShape = z
  .looseObject({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
    content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
    name: z.string().optional(),
    tool_calls: z.array(z.unknown()).optional(),
    tool_call_id: z.string().optional(),
  })
  // Only an assistant's turn may go without content (its tool calls are the turn), as
  // OpenAI refuses the rest: a user message of null content reached the template as
  // the text "None" or an empty turn the model was never shown.
  .refine((m) => m.role === 'assistant' || (m.content !== null && m.content !== undefined), {
    message: 'is required for this role: only an assistant message may leave it out (its tool_calls are the turn)',
    path: ['content'],
  });
/**
 * An answer's message sent back as history the way SDKs dump it (`message.model_dump()`
 * writes `tool_calls: null`, `name: null`): a null there means "none", and is dropped
 * before a chat template could read it as a list.
 */
const NULL_MEANS_NONE = ['name', 'tool_calls', 'tool_call_id', 'function_call', 'audio', 'refusal', 'annotations'];
const message = z.preprocess((value) => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  if (!NULL_MEANS_NONE.some((key) => record[key] === null)) return value;
  return Object.fromEntries(Object.entries(record).filter(([key, v]) => !(v === null && NULL_MEANS_NONE.includes(key))));
}, messageShape);

/**
 * A function tool as OpenAI defines it (and the Responses route checks it): a name of 1
 * to 64 characters, its `parameters` a JSON Schema object. An empty name or a schema that
 * is not an object reached the engines before, where a chat template or grammar failed on
 * it, or a tool call came back that named nothing.
 */
const functionDefinition = z.looseObject({
  // OpenAI allows letters, digits, `_` and `-`; names with dots or colons (MCP tools)
  // pass here as on Xinference, but none with a space or a control character, which a
  // template writes into the prompt and a tool call could not name back.
  name: z.string().min(1).max(64).regex(/^[^\s\p{Cc}]+$/u, 'must hold no spaces or control characters'),
  description: z.string().nullish(),
  // A record, refined: a shape would reorder the schema's keys (its known ones first), and
  // the template writes the tools into the prompt as they come.
  parameters: z
    .record(z.string(), z.unknown())
    .refine((p) => p.properties === undefined || (typeof p.properties === 'object' && p.properties !== null && !Array.isArray(p.properties)), {
      message: 'must be an object of JSON Schemas, one per argument',
      path: ['properties'],
    })
    .nullish(),
  strict: z.boolean().nullish(),
});

/** POST /v1/chat/completions (OpenAI chat, contract §4). Unknown fields are accepted. */
export const chatBody = z.looseObject({
  model: z.string({ error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : undefined) }).min(1),
  messages: z.array(message).min(1, 'Invalid input. Please specify the prompt: `messages` must not be empty.'),
  ...samplingShape,
  max_completion_tokens: z.int().min(1).nullish(),
  tools: z.array(z.looseObject({ type: z.literal('function'), function: functionDefinition })).nullish(),
  tool_choice: z.union([z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.literal('function') })]).nullish(),
  chat_template_kwargs: chatTemplateKwargs,
  enable_thinking: z.boolean().nullish(),
  // vLLM's: where the prompt ends (chat-ending.ts).
  add_generation_prompt: z.boolean().nullish(),
  continue_final_message: z.boolean().nullish(),
  logprobs: z.boolean().nullish(),
  // OpenAI's structured output; vLLM's structured outputs do it (parameter-support.ts).
  response_format: z
    .discriminatedUnion('type', [
      z.looseObject({ type: z.literal('text') }),
      z.looseObject({ type: z.literal('json_object') }),
      z.looseObject({ type: z.literal('json_schema'), json_schema: z.looseObject({ name: z.string().min(1), schema: z.record(z.string(), z.unknown()).optional(), strict: z.boolean().nullish() }) }),
    ])
    .nullish(),
  top_logprobs: z.int().min(0).max(20).nullish(),
}).refine((body) => body.top_logprobs === undefined || body.top_logprobs === null || body.logprobs === true, {
  // As vLLM's server answers, and OpenAI's: alternatives come only with each token's own log-probability.
  message: 'top_logprobs needs logprobs: true (the alternatives are listed beside each token\'s own log-probability)',
  path: ['top_logprobs'],
}).refine(...streamOptionsNeedStream);
export type ChatBody = z.infer<typeof chatBody>;
