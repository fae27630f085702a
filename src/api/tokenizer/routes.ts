import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { HangarError } from '../../errors/hangar-error.js';
import type { ImageFetchSettings } from '../../config/image-fetch.js';
import type { CallTarget, Supervisor } from '../../supervisor/supervisor.js';
import { admitKeyedCall } from '../auth/key-admission.js';
import { needs } from '../auth/route-permission.js';
import type { ChatEndingFields } from '../chat/chat-ending.js';
import { checkedChatBody } from '../chat/checked-chat-body.js';
import { prepareChatWithImages } from '../chat/serving.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { leaseModel } from '../model-lease.js';
import { detokenizeBody, tokenizeBody, tokenizerInfoQuery } from './schema.js';

/**
 * vLLM's tokenizer routes (`/tokenize`, `/detokenize`, `/tokenizer_info`, at the root
 * as vLLM serves them), answered by the model's own tokenizer in its runtime
 * (docs/openai-parameters.md, "Tokenizer routes"). They need `models:read`, as inference does.
 */
export const tokenizerRoutes: FastifyPluginAsync<{ supervisor: Supervisor; images: ImageFetchSettings }> = async (fastify, { supervisor, images }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['inference'];

  /**
   * The call's target: the named LLM, or the only one running, admitted for the caller's
   * key and held as inference holds its model (loaded on demand, woken from sleep). A
   * POST naming its model was admitted and held with its body (key-admission.ts,
   * model-lease.ts); both calls then return at once.
   */
  const target = async (request: FastifyRequest, reply: FastifyReply, route: string, model: string | undefined): Promise<CallTarget> => {
    const uid = model ?? onlyLlm(supervisor);
    admitKeyedCall(request, reply, uid, null);
    await leaseModel(request, reply, uid);
    return { uid, route, types: ['LLM'] };
  };

  app.post('/tokenize', { ...needs('models:read', ['LLM']), schema: { body: tokenizeBody, tags } }, async (request, reply) => {
    const body = request.body;
    const kwargs: Record<string, unknown> = {};
    if (body.add_special_tokens !== undefined) kwargs.add_special_tokens = body.add_special_tokens;
    if (body.return_token_strs) kwargs.return_token_strs = true;
    let call: { target: CallTarget; args: unknown[] };
    refuseUnsupported(body);
    if ('prompt' in body && 'messages' in body) {
      throw new HangarError('invalid_field', ['messages: send a prompt or messages, not both'], { param: 'messages' });
    }
    if ('messages' in body) {
      // The messages as the chat route takes them (its schema, abilities, fetched images),
      // so the tokens are the ones a chat request sends, as count_tokens counts them.
      const { uid } = await target(request, reply, '/tokenize', body.model);
      const asked = body as ChatEndingFields;
      const ending = { add_generation_prompt: asked.add_generation_prompt ?? undefined, continue_final_message: asked.continue_final_message ?? undefined };
      const chat = await prepareChatWithImages(supervisor, checkedChatBody({ model: uid, messages: body.messages, tools: body.tools ?? undefined, chat_template_kwargs: body.chat_template_kwargs ?? undefined, ...ending, max_tokens: 1 }), images);
      if (chat.kwargs.tools) kwargs.tools = chat.kwargs.tools;
      kwargs.chat_template_kwargs = chat.kwargs.chat_template_kwargs;
      for (const name of ['add_generation_prompt', 'continue_final_message']) if (name in chat.kwargs) kwargs[name] = chat.kwargs[name];
      call = { target: { ...chat.target, route: '/tokenize' }, args: chat.args };
    } else {
      call = { target: await target(request, reply, '/tokenize', body.model), args: [body.prompt] };
    }
    const result = await supervisor.call(call.target, 'tokenize', call.args, kwargs, abortOnDisconnect(reply));
    const value = result.value as { tokens: number[]; max_model_len: number; token_strs?: string[] };
    return { count: value.tokens.length, max_model_len: value.max_model_len, tokens: value.tokens, token_strs: value.token_strs ?? null };
  });

  app.post('/detokenize', { ...needs('models:read', ['LLM']), schema: { body: detokenizeBody, tags } }, async (request, reply) => {
    const body = request.body;
    const result = await supervisor.call(await target(request, reply, '/detokenize', body.model), 'detokenize', [body.tokens], {}, abortOnDisconnect(reply));
    return { prompt: (result.value as { prompt: string }).prompt };
  });

  app.get('/tokenizer_info', { ...needs('models:read', ['LLM']), schema: { querystring: tokenizerInfoQuery, tags } }, async (request, reply) => {
    const result = await supervisor.call(await target(request, reply, '/tokenizer_info', request.query.model), 'tokenizer_info', [], {}, abortOnDisconnect(reply));
    return result.value;
  });
};

/** The uid of the one LLM running, for a request that names none (as vLLM's clients send them). */
function onlyLlm(supervisor: Supervisor): string {
  const llms = supervisor.listReady().filter((i) => i.resolved.modelType === 'LLM').map((i) => i.uid);
  if (llms.length === 1) return llms[0]!;
  // Not naming them: the caller may hold models:read without models:list.
  const which = llms.length === 0 ? 'no LLM is running' : `${llms.length} LLMs are running`;
  throw new HangarError('invalid_field', [`model: name the model whose tokenizer to use; ${which}`], { param: 'model' });
}

/**
 * vLLM's other /tokenize fields, each refused by name rather than ignored: a chat here
 * is rendered as the chat route renders it (its template; where it ends, as chat-ending.ts says).
 */
const UNSUPPORTED: ReadonlyArray<[field: string, asks: (v: unknown) => boolean, why: string]> = [
  ['chat_template', (v) => v !== undefined && v !== null, 'the model\'s own template (its registration\'s) is used, as in chat'],
  ['mm_processor_kwargs', (v) => v !== undefined && v !== null, 'images are processed as in chat'],
];

function refuseUnsupported(body: Record<string, unknown>): void {
  for (const [field, asks, why] of UNSUPPORTED) {
    if (asks(body[field])) throw new HangarError('invalid_field', [`${field}: not supported here; ${why}`], { param: field });
  }
}
