import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { StreamingSettings } from '../../config/config.js';
import type { ImageFetchSettings } from '../../config/image-fetch.js';
import { HangarError } from '../../errors/hangar-error.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { CHAT_ABILITY, needs } from '../auth/route-permission.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { checkedChatBody } from '../chat/checked-chat-body.js';
import type { ChatBody } from '../chat/schema.js';
import { prepareChatWithImages } from '../chat/serving.js';
import { CHAT_RULES, checkParameters } from '../llm/parameter-support.js';
import { countTokensKwargs, promptTokens } from '../llm/prompt-count.js';
import { serveGeneration } from '../llm/serve-generation.js';
import { toChatRequest } from './chat-request.js';
import { type ChatOrigins, type OriginNames, withOriginalNames, withOriginalNamesNow } from '../llm/param-origins.js';
import { anthropicMessage } from './message-response.js';
import { countTokensBody, messagesBody, type MessagesBody } from './schema.js';
import { anthropicStreamFormat } from './stream-events.js';
import { anthropicModel, anthropicModelList } from './model-list.js';
import { keyAllowsModel, requireKeyModel } from '../auth/key-admission.js';

const modelParams = z.object({ model_id: z.string().min(1) });

/**
 * Anthropic's Messages API over the chat engines (docs/anthropic.md), at both paths
 * Xinference serves it: `/v1/messages` and `/anthropic/v1/messages`, and the model
 * list Anthropic's SDKs read. Credentials may come as `x-api-key` (guard.ts).
 */
export const anthropicRoutes: FastifyPluginAsync<{ supervisor: Supervisor; streaming: StreamingSettings; images: ImageFetchSettings }> = async (fastify, { supervisor, streaming, images }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['inference'];

  for (const url of ['/v1/messages', '/anthropic/v1/messages']) {
    app.post(url, { ...needs('models:read', ['LLM'], CHAT_ABILITY), schema: { body: messagesBody, tags } }, async (request, reply) => {
      const body = request.body;
      const budget = body.thinking?.type === 'enabled' ? (body.thinking as { budget_tokens: number }).budget_tokens : null;
      if (budget !== null && budget >= body.max_tokens) {
        throw new HangarError('invalid_field', [`thinking.budget_tokens: must be less than max_tokens (${body.max_tokens}), got ${budget}`], { param: 'thinking.budget_tokens' });
      }
      refuseUnservable(supervisor, body);
      const names: OriginNames = { origins: [], image: 'source' };
      return withOriginalNames(serveGeneration(supervisor, streaming, request, reply, {
        ...(await withOriginalNames(prepareChatWithImages(supervisor, asChatBody(body, names.origins), images, abortOnDisconnect(reply)), names)),
        method: 'chat',
        stream: body.stream === true,
        answer: (value) => anthropicMessage(body.model, value, body.stop_sequences ?? []),
        streamInterval: null,
        format: () => anthropicStreamFormat(body.model, body.stop_sequences ?? []),
      }), names);
    });
  }

  for (const url of ['/v1/messages/count_tokens', '/anthropic/v1/messages/count_tokens']) {
    app.post(url, { ...needs('models:read', ['LLM']), schema: { body: countTokensBody, tags } }, async (request, reply) => {
      // max_tokens only satisfies the chat schema: nothing is generated. A forced tool
      // choice and an output format change how the answer is held, not the prompt: left
      // out of the count, so an engine that cannot hold an answer so does not refuse it
      // (agents count on start, with the body they will send).
      const names: OriginNames = { origins: [], image: 'source' };
      const { output_config: _format, ...body } = request.body;
      const toolChoice = body.tool_choice && body.tool_choice.type !== 'none' ? { tool_choice: { type: 'auto' as const } } : {};
      const chat = await withOriginalNames(prepareChatWithImages(supervisor, asChatBody({ ...body, ...toolChoice, max_tokens: 1 }, names.origins), images, abortOnDisconnect(reply)), names);
      const result = await withOriginalNames(supervisor.call({ ...chat.target, route: url }, 'count_tokens', chat.args, countTokensKwargs(chat.kwargs), abortOnDisconnect(reply)), names);
      return { input_tokens: promptTokens(result.value) };
    });
  }

  // On-demand entries not loaded are models to call too, as in OpenAI's list.
  app.get('/anthropic/v1/models', { ...needs('models:list'), schema: { tags } }, async (request) => anthropicModelList(supervisor, (uid) => keyAllowsModel(request, uid)));
  app.get('/anthropic/v1/models/:model_id', { ...needs('models:list'), schema: { params: modelParams, tags } }, async (request) => {
    requireKeyModel(request, request.params.model_id);
    return anthropicModel(supervisor, request.params.model_id);
  });
};

/** The chat request a Messages body maps to, checked by the chat route's own schema, so both APIs refuse alike. */
function asChatBody(body: MessagesBody, origins: ChatOrigins): ChatBody {
  const chat = toChatRequest(body, origins);
  return withOriginalNamesNow(() => checkedChatBody(chat), { origins, image: 'source' });
}


/** Anthropic's names for what chat checks under its own: a refusal names the field the client sent. */
const MESSAGES_RULES = { 'output_config.format': CHAT_RULES.response_format! };

/**
 * Structured output where the engine has no constrained decoding, refused by Anthropic's
 * field name before anything runs: until 2026-11-29 `output_config` was ignored, and the
 * SDK's messages.parse failed on free text. (`thinking` on a model that does not reason
 * is accepted and changes nothing, as Xinference does: Claude Code sends it by setting.)
 */
function refuseUnservable(supervisor: Supervisor, body: MessagesBody): void {
  // Anthropic's MCP connector: its servers are reached from Anthropic's side. Ignored,
  // the model answered without the tools the client thought it had.
  const mcp = (body as { mcp_servers?: unknown }).mcp_servers;
  if (Array.isArray(mcp) ? mcp.length > 0 : mcp !== undefined && mcp !== null) {
    throw new HangarError('field_unsupported', ['mcp_servers', 'this service reaches no MCP server; give their tools as client tools and run them yourself'], { param: 'mcp_servers' });
  }
  const instance = supervisor.require(body.model);
  checkParameters(body as Record<string, unknown>, MESSAGES_RULES, instance.resolved.engine, body.model);
}
