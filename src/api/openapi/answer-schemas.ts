import { z } from 'zod';

/**
 * What the JSON routes answer, for the OpenAPI document only (route-document.ts): the
 * routes build their answers themselves and are not serialized through these, so a
 * schema here can never reject or strip an answer. Loose objects: answers may carry
 * more fields (Xinference's extras) than a generator needs to know.
 */

/** The contract's error body (docs/errors.md): `detail` for Xinference's clients, `error` for OpenAI's. */
export const errorAnswer = z
  .object({
    detail: z.string(),
    error: z.object({
      message: z.string(),
      type: z.string().meta({ description: 'invalid_request_error, authentication_error, permission_error, not_found_error, ...' }),
      param: z.string().nullable().meta({ description: 'the request field the error is about' }),
      code: z.string().meta({ description: 'a stable code listed in docs/errors.md' }),
    }),
  })
  .meta({ id: 'Error' });

const usage = z.looseObject({ prompt_tokens: z.int(), completion_tokens: z.int(), total_tokens: z.int() });
const toolCall = z.looseObject({ id: z.string(), type: z.literal('function'), function: z.object({ name: z.string(), arguments: z.string() }) });

/** vLLM's extension (docs/openai-parameters.md, "Answer fields"). */
const stopReason = z.string().nullable().meta({ description: "vLLM's: the stop string that ended the text; null when an end token, the length or a tool call did" });

const chatCompletion = z
  .looseObject({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.int(),
    model: z.string(),
    choices: z.array(
      z.looseObject({
        index: z.int(),
        message: z.looseObject({ role: z.literal('assistant'), content: z.string().nullable(), reasoning_content: z.string().optional(), tool_calls: z.array(toolCall).optional() }),
        finish_reason: z.string(),
        stop_reason: stopReason,
        logprobs: z.unknown().nullable(),
      }),
    ),
    usage: usage.nullable(),
  })
  .meta({ id: 'ChatCompletion' });

const completion = z
  .looseObject({
    id: z.string(),
    object: z.literal('text_completion'),
    created: z.int(),
    model: z.string(),
    choices: z.array(z.looseObject({ index: z.int(), text: z.string(), finish_reason: z.string(), stop_reason: stopReason, logprobs: z.unknown().nullable() })),
    usage: usage.nullable(),
  })
  .meta({ id: 'Completion' });

const outputItem = z.looseObject({ id: z.string(), type: z.string().meta({ description: 'message, function_call or reasoning' }), status: z.string().optional() });
const response = z
  .looseObject({
    id: z.string(),
    object: z.literal('response'),
    created_at: z.int(),
    status: z.enum(['completed', 'incomplete', 'failed', 'in_progress']),
    model: z.string(),
    output: z.array(outputItem),
    output_text: z.string(),
    incomplete_details: z.object({ reason: z.string() }).nullable(),
    previous_response_id: z.string().nullable(),
    store: z.boolean(),
    metadata: z.record(z.string(), z.string()),
    usage: z.looseObject({ input_tokens: z.int(), output_tokens: z.int(), total_tokens: z.int() }).nullable(),
  })
  .meta({ id: 'Response' });

const tokenCount = z.object({ input_tokens: z.int().meta({ description: 'the prompt tokens a Messages call with this body would count' }) }).meta({ id: 'MessageTokensCount' });

const anthropicMessage = z
  .looseObject({
    id: z.string(),
    type: z.literal('message'),
    role: z.literal('assistant'),
    model: z.string(),
    content: z.array(z.looseObject({ type: z.string() })),
    stop_reason: z.string().nullable(),
    usage: z.looseObject({ input_tokens: z.int(), output_tokens: z.int() }),
  })
  .meta({ id: 'AnthropicMessage' });

const embeddings = z
  .looseObject({
    object: z.literal('list'),
    model: z.string(),
    data: z.array(z.looseObject({ object: z.literal('embedding'), index: z.int(), embedding: z.union([z.array(z.number()), z.string()]) })),
    usage: z.looseObject({ prompt_tokens: z.int(), total_tokens: z.int() }),
  })
  .meta({ id: 'Embeddings' });

const rerank = z
  .looseObject({
    id: z.string(),
    results: z.array(z.looseObject({ index: z.int(), relevance_score: z.number(), document: z.unknown().optional() })),
    meta: z.looseObject({}),
  })
  .meta({ id: 'Rerank' });

const modelList = z
  .looseObject({
    object: z.literal('list'),
    data: z.array(z.looseObject({ id: z.string(), object: z.literal('model'), created: z.int(), owned_by: z.string(), model_type: z.string().optional() })),
  })
  .meta({ id: 'ModelList' });

const transcription = z.looseObject({ text: z.string() }).meta({ id: 'Transcription' });
const images = z
  .looseObject({ created: z.int(), data: z.array(z.looseObject({ url: z.string().nullish(), b64_json: z.string().nullish() })) })
  .meta({ id: 'Images' });

/** A JSON answer, or an SSE stream when the request set `stream: true`. */
const orStream = (json: z.ZodType, description: string) => ({
  description,
  content: {
    'application/json': { schema: json },
    'text/event-stream': { schema: z.string().meta({ description: 'server-sent events (stream: true); see docs/responses.md, docs/anthropic.md or OpenAI\'s chunk format' }) },
  },
});

/** The 200 answer of each documented JSON route, by `METHOD url` as the router spells it. */
export const ANSWERS: Readonly<Record<string, unknown>> = {
  'POST /v1/chat/completions': orStream(chatCompletion, 'A chat completion, or chat.completion.chunk events'),
  'POST /v1/completions': orStream(completion, 'A text completion, or its chunks'),
  'POST /v1/responses': orStream(response, 'A Response, or the typed response.* events'),
  'POST /v1/responses/input_tokens': z.object({ object: z.literal('response.input_tokens'), input_tokens: z.int().meta({ description: 'the prompt tokens a Responses call with this body would count' }) }).meta({ id: 'ResponseInputTokens' }),
  'GET /v1/responses/:response_id': response,
  'DELETE /v1/responses/:response_id': z.object({ id: z.string(), object: z.literal('response.deleted'), deleted: z.literal(true) }),
  'GET /v1/responses/:response_id/input_items': z.object({ object: z.literal('list'), data: z.array(outputItem), first_id: z.string().nullable(), last_id: z.string().nullable(), has_more: z.boolean() }),
  'POST /v1/messages': orStream(anthropicMessage, 'An Anthropic message, or its events'),
  'POST /anthropic/v1/messages': orStream(anthropicMessage, 'An Anthropic message, or its events'),
  'POST /v1/messages/count_tokens': tokenCount,
  'POST /anthropic/v1/messages/count_tokens': tokenCount,
  'POST /v1/embeddings': embeddings,
  'POST /v1/rerank': rerank,
  'POST /v2/rerank': rerank,
  'GET /v1/models': modelList,
  'POST /v1/models': z.object({ model_uid: z.string() }),
  'POST /v1/audio/transcriptions': transcription,
  'POST /v1/audio/translations': transcription,
  'POST /v1/images/generations': images,
  'POST /v1/images/variations': images,
  'POST /v1/images/edits': images,
  'GET /metrics': { description: 'Prometheus text format', content: { 'text/plain': { schema: z.string() } } },
};
