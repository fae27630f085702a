import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { StreamingSettings } from '../../config/config.js';
import type { ImageFetchSettings } from '../../config/image-fetch.js';
import { HangarError } from '../../errors/hangar-error.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { chatBody } from '../chat/schema.js';
import { prepareChatWithImages } from '../chat/serving.js';
import { serveGeneration } from '../llm/serve-generation.js';
import { toChatRequest } from './chat-request.js';
import { anthropicMessage } from './message-response.js';
import { messagesBody } from './schema.js';
import { anthropicStreamFormat } from './stream-events.js';

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
    app.post(url, { ...needs('models:read'), schema: { body: messagesBody, tags } }, async (request, reply) => {
      const body = request.body;
      // The chat route's own schema checks what the mapping produced, so both APIs refuse alike.
      const parsed = chatBody.safeParse(toChatRequest(body));
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new HangarError('invalid_field', [`${issue.path.join('.')}: ${issue.message}`], { param: issue.path.join('.') || null });
      }
      return serveGeneration(supervisor, streaming, request, reply, {
        ...(await prepareChatWithImages(supervisor, parsed.data, images)),
        method: 'chat',
        stream: body.stream === true,
        answer: (value) => anthropicMessage(body.model, value),
        streamInterval: null,
        format: () => anthropicStreamFormat(body.model),
      });
    });
  }

  const describe = (uid: string, created: number) => ({ type: 'model', id: uid, display_name: uid, created_at: new Date(created * 1000).toISOString() });

  app.get('/anthropic/v1/models', { ...needs('models:list'), schema: { tags } }, async () => {
    const data = supervisor.listReady().map((i) => describe(i.uid, i.createdTs));
    return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
  });

  app.get('/anthropic/v1/models/:model_id', { ...needs('models:list'), schema: { params: modelParams, tags } }, async (request) => {
    const instance = supervisor.require(request.params.model_id);
    return describe(instance.uid, instance.createdTs);
  });
};
