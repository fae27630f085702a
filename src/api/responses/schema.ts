import { z } from 'zod';
import { chatTemplateKwargs } from '../llm/chat-template-kwargs.js';

const text = z.string();

/** A content part of an input message (OpenAI's `input_text`, `input_image`, and an assistant's `output_text`). */
export const contentPart = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('input_text'), text }),
  z.looseObject({ type: z.literal('output_text'), text }),
  z.looseObject({ type: z.literal('refusal'), refusal: text }),
  z.looseObject({
    type: z.literal('input_image'),
    image_url: z.string().nullish(),
    file_id: z.string().nullish(),
    detail: z.enum(['low', 'high', 'auto', 'original']).nullish(),
  }),
  z.looseObject({ type: z.literal('input_file') }),
  z.looseObject({ type: z.literal('input_audio') }),
]);
export type ContentPart = z.infer<typeof contentPart>;

/** Input items other than messages, checked one by one (input-items.ts) so a refusal names its path. */
export const functionCallItem = z.looseObject({
  type: z.literal('function_call'),
  id: z.string().nullish(),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});

export const functionCallOutputItem = z.looseObject({
  type: z.literal('function_call_output'),
  id: z.string().nullish(),
  call_id: z.string().min(1),
  output: z.union([text, z.array(z.looseObject({ type: z.string() }))]),
});

const functionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1).max(64),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

const textFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    name: z.string().min(1).max(64),
    schema: z.record(z.string(), z.unknown()),
    description: z.string().nullish(),
    strict: z.boolean().nullish(),
  }),
]);

/**
 * POST /v1/responses (OpenAI's Responses API, docs/responses.md). Unknown fields are
 * accepted, as on chat; the fields OpenAI defines that nothing here does are refused
 * by name in chat-request.ts rather than ignored, and chat's sampling extras are handed on to chat.
 */
/** What `include` may name (OpenAI's list). */
const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
const REASONING_SUMMARIES = ['auto', 'concise', 'detailed'] as const;
const INCLUDABLE = [
  'message.output_text.logprobs',
  'reasoning.encrypted_content',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'code_interpreter_call.outputs',
] as const;

export const responsesBody = z.looseObject({
  model: z.string({ error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : undefined) }).min(1),
  // Required, but checked after chat's names (chat-request.ts): a chat body sent here
  // (`messages`, no `input`) is told to send `input`, not that `input` is missing.
  input: z.union([text, z.array(z.unknown())]).optional(),
  instructions: z.string().nullish(),
  tools: z.array(z.looseObject({ type: z.string() })).nullish(),
  tool_choice: z
    .union([z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.string(), name: z.string().optional() })])
    .nullish(),
  max_output_tokens: z.int().min(1).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  top_logprobs: z.int().min(0).max(20).nullish(),
  text: z.looseObject({ format: textFormat.nullish(), verbosity: z.string().nullish() }).nullish(),
  // OpenAI: at most 16 pairs, keys up to 64 characters, values up to 512.
  metadata: z
    .record(z.string().max(64), z.string().max(512))
    .refine((m) => Object.keys(m).length <= 16, 'at most 16 keys')
    .nullish(),
  store: z.boolean().nullish(),
  // Typed so that `"yes"` or `1` is refused, not read as false; `true` is refused by name (routes.ts).
  background: z.boolean().nullish(),
  max_tool_calls: z.int().min(0).nullish(),
  previous_response_id: z.string().min(1).max(256).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_obfuscation: z.boolean().nullish() }).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  // OpenAI's values (its API refuses others); only the logprobs one changes an answer
  // here, the rest name outputs of tools this service refuses or runs none of.
  include: z.array(z.enum(INCLUDABLE, { error: `must be one of ${INCLUDABLE.join(', ')}` })).nullish(),
  truncation: z.enum(['auto', 'disabled']).nullish(),
  user: z.string().nullish(),
  // OpenAI's values (its API refuses others); a summary is asked for and not made here (docs/responses.md).
  reasoning: z
    .looseObject({
      effort: z.enum(REASONING_EFFORTS, { error: `must be one of ${REASONING_EFFORTS.join(', ')}` }).nullish(),
      summary: z.enum(REASONING_SUMMARIES, { error: `must be one of ${REASONING_SUMMARIES.join(', ')}` }).nullish(),
    })
    .nullish(),
  // Ours, as on chat: the LoRA adapter that answers, and extra chat template variables.
  lora_name: z.string().nullish(),
  chat_template_kwargs: chatTemplateKwargs,
  seed: z.int().nullish(),
});
export type ResponsesBody = z.infer<typeof responsesBody>;

export const functionToolSchema = functionTool;

export const responseIdParams = z.object({ response_id: z.string().min(1) });

/**
 * GET /v1/responses/{id}: OpenAI's retrieve options. `stream=true` replays a background
 * response's events, and none runs in the background here: refused, not answered with
 * JSON that a streaming SDK reads as no events at all.
 */
export const retrieveQuery = z.looseObject({
  stream: z.enum(['true', 'false']).optional(),
  starting_after: z.coerce.number().int().min(0).optional(),
  include: z.union([z.string(), z.array(z.string())]).optional(),
  include_obfuscation: z.enum(['true', 'false']).optional(),
});

export const inputItemsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(['asc', 'desc']).default('desc'),
  after: z.string().optional(),
  include: z.union([z.string(), z.array(z.string())]).optional(),
});
