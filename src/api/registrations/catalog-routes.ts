import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Registry } from '../../registry/index.js';
import { needs } from '../auth/route-permission.js';
import { z } from 'zod';
import { HangarError } from '../../errors/hangar-error.js';
import { isModelType } from '../../registry/index.js';
import { typeNameParams } from './schema.js';
import { codePower } from '../auth/code-power.js';

const autoRegisterBody = z.object({
  model_path: z.string({ error: (issue) => (issue.input === undefined ? 'is required: a local folder written by save_pretrained' : undefined) }).min(1).max(4096),
  model_family: z.string().min(1).max(256).nullish().transform((v) => v ?? undefined),
  model_name: z.string().min(1).max(256).nullish().transform((v) => v ?? undefined),
  register: z.boolean().default(false),
  persist: z.boolean().default(false),
});
const updateTypeBody = z.object({ model_type: z.string({ error: (issue) => (issue.input === undefined ? 'is required' : undefined) }).min(1) });

/**
 * Catalog helpers Xinference's UI and clients read (docs/registry.md, "Catalog
 * helpers"). Static paths under /v1/models/: fastify matches them before
 * `/v1/models/:model_uid`, as Xinference registers them first.
 */
export const catalogRoutes: FastifyPluginAsync<{ registry: Registry }> = async (fastify, { registry }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['registrations'];

  app.get('/v1/models/families', { ...needs('models:list'), schema: { tags } }, async () => registry.llmSummaries().families);
  app.get('/v1/models/prompts', { ...needs('models:list'), schema: { tags } }, async () => registry.llmSummaries().prompts);
  app.get('/v1/models/vllm-supported', { ...needs('models:list'), schema: { tags } }, async () => registry.llmSummaries().vllm);
  // Ours beside Xinference's body: `model_name` names it, `register` (and `persist`) register it at once.
  app.post('/v1/models/llm/auto-register', { ...needs('models:register'), schema: { body: autoRegisterBody, tags } }, async (request) => {
    const { model_path: modelPath, model_family: modelFamily, model_name: modelName, register, persist } = request.body;
    const registration = await registry.autoRegistration({ modelPath, modelFamily, modelName });
    if (register) await registry.register('LLM', { model: registration }, persist, codePower(request, 'model.register.code', `LLM/${String(registration.model_name)}`));
    return registration;
  });

  // Xinference refreshes its catalog from its model hub here. Ours ships with the
  // package (one data file per family, reviewed in the repository): there is no remote
  // catalog to fetch, which the answer says instead of pretending to succeed.
  app.post('/v1/models/update_type', { ...needs('admin'), schema: { body: updateTypeBody, tags } }, async (request) => {
    const type = request.body.model_type;
    if (!isModelType(type)) throw new HangarError('unsupported_model_type', [type], { param: 'model_type' });
    throw new HangarError('catalog_update_unavailable', [type, 'the built-in catalog ships with this Hangar release and no remote catalog is reachable from this server; upgrade Hangar for newer models, or register them with POST /v1/model_registrations']);
  });

  app.get('/v1/models/:model_type/:model_name/versions', { ...needs('models:list'), schema: { params: typeNameParams, tags } }, async (request) =>
    registry.versions(request.params.model_type, request.params.model_name),
  );
};
