import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { StreamingSettings } from '../../config/config.js';
import type { ImageFetchSettings } from '../../config/image-fetch.js';
import { HangarError } from '../../errors/hangar-error.js';
import type { ResponseStore, StoredResponse } from '../../storage/response-store.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { keyAllowsModel } from '../auth/key-admission.js';
import { checkCallPairing } from './tool-pairing.js';
import { ownerOf } from '../auth/request-owner.js';
import { CHAT_ABILITY, needs } from '../auth/route-permission.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { chatBody } from '../chat/schema.js';
import { prepareChatWithImages } from '../chat/serving.js';
import { checkParameters } from '../llm/parameter-support.js';
import { countTokensKwargs, promptTokens } from '../llm/prompt-count.js';
import { serveGeneration } from '../llm/serve-generation.js';
import { RESPONSES_RULES, refuseUnsupported, toChatRequest } from './chat-request.js';
import { responsesParam, withResponsesNames } from './error-names.js';
import { type Item, chatMessages, itemId, normalizeInput } from './input-items.js';
import { type ResponseContext, finalResponse } from './response-object.js';
import { inputItemsQuery, responseIdParams, responsesBody, retrieveQuery, type ResponsesBody } from './schema.js';
import { responsesStreamFormat } from './stream-events.js';
import { specificIssue } from '../validation-issue.js';
import { type OriginNames, originalParam, withOriginalNames } from '../llm/param-origins.js';

interface Options {
  supervisor: Supervisor;
  streaming: StreamingSettings;
  images: ImageFetchSettings;
  store: ResponseStore;
}

/** Whose stored responses a request may see: the user it came as ('' while auth is off). */

/**
 * OpenAI's Responses API over the chat engines (docs/responses.md): POST
 * /v1/responses, answered or streamed, and the stored responses: GET and DELETE
 * /v1/responses/{id}, GET /v1/responses/{id}/input_items.
 */
export const responsesRoutes: FastifyPluginAsync<Options> = async (fastify, { supervisor, streaming, images, store }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['inference'];

  /**
   * The caller's stored response, if their key may use the model that answered it: a key
   * limited to one model must not read, continue or delete what its owner asked another
   * (404, as for no response: ids are not probed).
   */
  const readable = (request: FastifyRequest, id: string): StoredResponse | null => {
    const stored = store.get(id, ownerOf(request));
    return stored && keyAllowsModel(request, String(stored.response.model ?? ''), stored.modelName) ? stored : null;
  };

  /** The Responses request as the chat request the engines serve, checked; with the items it holds. */
  const asChat = (request: FastifyRequest, body: ResponsesBody) => {
    const owner = ownerOf(request);
    const instance = supervisor.require(body.model);
    refuseUnsupported(body, instance.abilities);
    checkParameters(body, RESPONSES_RULES, instance.resolved.engine, body.model);
    let history: Item[] = [];
    if (body.previous_response_id) {
      const previous = readable(request, body.previous_response_id);
      if (!previous) throw new HangarError('response_not_found', [body.previous_response_id], { param: 'previous_response_id' });
      history = [...(previous.inputItems as Item[]), ...(previous.response.output as Item[])];
    }
    const items = normalizeInput(body.input!, (id) => store.item(id, owner)); // refuseUnsupported: present
    // Said in this API's words: chat's refusal named `messages`, a field this body has not.
    if (items.length === 0 && history.length === 0) throw new HangarError('invalid_field', ['input: must hold at least one item (or continue a response with previous_response_id)'], { param: 'input' });
    // Errors about a message name the input item (and part) it came from (param-origins.ts);
    // the previous response's items are named by previous_response_id, a string input by `input`.
    const names: OriginNames = { origins: [], image: 'image_url', fallback: 'input' };
    const itemPath = (i: number): string => (i < history.length ? 'previous_response_id' : typeof body.input === 'string' ? 'input' : `input.${i - history.length}`);
    checkCallPairing([...history, ...items], itemPath);
    const chat = chatBody.safeParse(toChatRequest(body, chatMessages(body.instructions, [...history, ...items], names.origins, itemPath)));
    if (!chat.success) {
      const issue = specificIssue(chat.error.issues[0]!);
      const param = responsesParam(originalParam(issue.path.join('.'), names));
      throw new HangarError('invalid_field', [`${param}: ${issue.message}`], { param });
    }
    return { chat: chat.data, names, items, history, owner };
  };

  // OpenAI's `responses.input_tokens.count`: the prompt a Responses call with this body
  // would count, nothing generated (was a 405 naming GET and DELETE, as if it were an id).
  app.post('/v1/responses/input_tokens', { ...needs('models:read', ['LLM']), schema: { body: responsesBody, tags } }, async (request, reply) => {
    const { chat, names } = asChat(request, request.body);
    const call = await withResponsesNames(withOriginalNames(prepareChatWithImages(supervisor, chat, images, abortOnDisconnect(reply)), names));
    const result = await withResponsesNames(withOriginalNames(supervisor.call({ ...call.target, route: '/v1/responses/input_tokens' }, 'count_tokens', call.args, countTokensKwargs(call.kwargs), abortOnDisconnect(reply)), names));
    return { object: 'response.input_tokens', input_tokens: promptTokens(result.value) };
  });

  app.post('/v1/responses', { ...needs('models:read', ['LLM'], CHAT_ABILITY), schema: { body: responsesBody, tags } }, async (request, reply) => {
    const body = request.body;
    const { chat, names, items, history, owner } = asChat(request, body);
    const prepared = await withResponsesNames(withOriginalNames(prepareChatWithImages(supervisor, chat, images, abortOnDisconnect(reply)), names));
    // Its own route in errors and metrics ("/v1/responses needs a model of type LLM"), not chat's.
    const call = { ...prepared, target: { ...prepared.target, route: '/v1/responses' } };
    const ctx: ResponseContext = {
      id: itemId('resp'),
      createdAt: Math.floor(Date.now() / 1000),
      body,
      store: body.store !== false,
      logprobs: chat.logprobs === true,
    };
    const modelName = supervisor.modelNameOf(body.model);
    const save = (response: Record<string, unknown>): void => {
      if (ctx.store) store.save({ id: ctx.id, owner, createdAt: ctx.createdAt, response, modelName, previousId: body.previous_response_id ?? null, ownItems: items, history });
    };
    return withResponsesNames(withOriginalNames(serveGeneration(supervisor, streaming, request, reply, {
      ...call,
      method: 'chat',
      stream: body.stream === true,
      streamInterval: null,
      answer: (value) => {
        const response = finalResponse(ctx, value);
        save(response);
        return response;
      },
      format: () => responsesStreamFormat(ctx, save),
    }), names));
  });

  app.get('/v1/responses/:response_id', { ...needs('models:read'), schema: { params: responseIdParams, querystring: retrieveQuery, tags } }, async (request) => {
    const stored = readable(request, request.params.response_id);
    if (!stored) throw new HangarError('response_not_found', [request.params.response_id], { param: 'response_id' });
    if (request.query.stream === 'true') throw new HangarError('field_unsupported', ['stream', 'a stored response is retrieved whole; only a background response is streamed again, and there is no background mode'], { param: 'stream' });
    return stored.response;
  });

  app.delete('/v1/responses/:response_id', { ...needs('models:read'), schema: { params: responseIdParams, tags } }, async (request) => {
    const id = request.params.response_id;
    if (!readable(request, id) || !store.delete(id, ownerOf(request))) throw new HangarError('response_not_found', [id], { param: 'response_id' });
    return { id, object: 'response.deleted', deleted: true };
  });

  // The SDKs' responses.cancel: OpenAI cancels background responses only (400 for the
  // rest), and none runs in the background here. Was a 404 route_not_found.
  app.post('/v1/responses/:response_id/cancel', { ...needs('models:read'), schema: { params: responseIdParams, tags } }, async (request) => {
    const id = request.params.response_id;
    if (!readable(request, id)) throw new HangarError('response_not_found', [id], { param: 'response_id' });
    throw new HangarError('response_not_cancellable', [id], { param: 'response_id' });
  });

  app.get('/v1/responses/:response_id/input_items', { ...needs('models:read'), schema: { params: responseIdParams, querystring: inputItemsQuery, tags } }, async (request) => {
    const stored = readable(request, request.params.response_id);
    if (!stored) throw new HangarError('response_not_found', [request.params.response_id], { param: 'response_id' });
    const q = request.query;
    const page = store.inputItems(stored, { limit: q.limit, order: q.order, ...(q.after ? { after: q.after } : {}) });
    return { object: 'list', data: page.data, first_id: page.data[0]?.id ?? null, last_id: page.data.at(-1)?.id ?? null, has_more: page.hasMore };
  });
};

