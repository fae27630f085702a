import { ModelSource } from './config/model-source.js';
import path from 'node:path';
import fastifyMultipart from '@fastify/multipart';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { keyRoutes } from './api/admin/key-routes.js';
import { anthropicRoutes } from './api/anthropic/routes.js';
import { reportRoutes } from './api/admin/report-routes.js';
import { userRoutes } from './api/admin/user-routes.js';
import { installAuthGuard } from './api/auth/guard.js';
import { installKeyAdmission } from './api/auth/key-admission.js';
import { tokenRoute } from './api/auth/token-route.js';
import { chatRoutes } from './api/chat/routes.js';
import { completionRoutes } from './api/completions/routes.js';
import { tokenizerRoutes } from './api/tokenizer/routes.js';
import { embeddingsRoutes } from './api/embeddings/routes.js';
import { cacheRoutes } from './api/cache/routes.js';
import { installCompression } from './api/compression.js';
import { installCors } from './api/cors.js';
import { installDrain } from './api/drain.js';
import { frameworkErrors, installErrorHandler, MAX_PATH_PARAM_LENGTH } from './api/error-handler.js';
import { BODY_LIMIT_BYTES, installJsonBody } from './api/json-body.js';
import { clientErrorHandler, httpServer } from './api/http-server.js';
import { installBodyLimits } from './api/body-limits.js';
import { installBodyBudget } from './api/body-budget.js';
import { installLoraModelIds } from './api/llm/lora-model-id.js';
import { installModelLeases } from './api/model-lease.js';
import { flexibleRoutes } from './api/flexible/routes.js';
import { autostartRoutes } from './api/models/autostart-routes.js';
import { onDemandRoutes } from './api/models/on-demand-routes.js';
import { memoryRoutes } from './api/models/memory-routes.js';
import { modelRoutes } from './api/models/routes.js';
import { installMetrics } from './api/metrics/routes.js';
import { installModelStats, statsRoutes } from './api/stats/routes.js';
import { ModelStats } from './api/stats/model-stats.js';
import { DEFAULT_STATS, type StatsSettings } from './config/stats-settings.js';
import { installOpenApi } from './api/openapi/install.js';
import { installOverheadClock } from './api/overhead.js';
import { catalogRoutes } from './api/registrations/catalog-routes.js';
import { hubRoutes } from './api/hub/routes.js';
import { registrationRoutes } from './api/registrations/routes.js';
import { rerankRoutes } from './api/rerank/routes.js';
import { responsesRoutes } from './api/responses/routes.js';
import { installRequestDecoding } from './api/request-encoding.js';
import { genRequestId, installRequestId } from './api/request-id.js';
import { DebugRequestLogs } from './api/request-logging.js';
import { installRouteTable } from './api/route-table.js';
import { requestRoutes } from './api/requests/routes.js';
import { installRequestTracking } from './api/request-tracking.js';
import { clusterRoutes } from './api/service/cluster-routes.js';
import { serviceRoutes } from './api/service/routes.js';
import { audioSpeechRoutes } from './api/audio-speech/routes.js';
import { audioTranscriptionRoutes } from './api/audio-transcriptions/routes.js';
import { imageGenerationRoutes } from './api/images-generations/routes.js';
import { imagesOcrRoutes } from './api/images-ocr/routes.js';
import { MediaStore } from './api/media-files/media-store.js';
import { mediaFileRoutes } from './api/media-files/routes.js';
import { videoGenerationRoutes } from './api/video-generations/routes.js';
import { diffusersOnlyRoutes } from './api/media/diffusers-only-routes.js';
import { webUiRoutes } from './api/web-ui/routes.js';
import type { AccessControl } from './auth/access-control.js';
import { DEFAULT_RESPONSES_RETENTION_HOURS, defaultLifecycle, packageRoot, type StreamingSettings } from './config/config.js';
import { DEFAULT_BODY_BUDGET_BYTES } from './config/body-budget-setting.js';
import { DEFAULT_IMAGE_FETCH, type ImageFetchSettings } from './config/image-fetch.js';
import type { Logger } from './logging/logger.js';
import { ResponseStore } from './storage/response-store.js';
import type { Registry } from './registry/index.js';
import type { Supervisor } from './supervisor/supervisor.js';

export interface AppParts {
  logger: Logger;
  registry: Registry;
  supervisor: Supervisor;
  /**
   * Users, keys, limits, usage and audit over the embedded database. Nothing is
   * guarded while it has no user and there is no --auth-config.
   */
  access: AccessControl;
  gpuCount: number;
  version: string;
  startedAt: number;
  /** How streamed tokens are relayed (--stream-interval). */
  streaming: StreamingSettings;
  /** DELETE /v1/clusters: start the orderly shutdown (the SIGTERM path); absent in tests. */
  shutdown?: () => void;
  /** `--cors-origins`: `*` (default), a list, or null for no CORS. */
  corsOrigins?: '*' | string[] | null;
  /** The built web UI (default `<package>/web/dist`, what `npm run setup` writes). */
  webRoot?: string;
  /** How chat requests' image URLs are fetched; absent: the defaults (public addresses only). */
  imageFetch?: ImageFetchSettings;
  /** How long stored Responses API answers are kept, in hours (0: until deleted); absent: 30 days. */
  responsesRetentionHours?: number;
  /** HANGAR_MODEL_SRC: the hub launches prefer (docs/registry.md, "The hubs"); absent: each family's spec order. */
  modelSource?: ModelSource;
  /** HANGAR_MAX_INFLIGHT_BODY_BYTES: request bodies held at once (body-budget.ts); absent: the default, 0: none. */
  bodyBudgetBytes?: number;
  /** How long a request (headers and body) may take to arrive; absent: the default of config.ts. */
  requestBodyTimeoutMs?: number;
  /** The models' series (docs/monitoring.md); absent: a sample every 5 s over the last hour. */
  stats?: StatsSettings;
}

/** Builds the HTTP app from its parts. The only importer of api/. */
export async function buildApp(parts: AppParts): Promise<FastifyInstance> {
  const bodyTimeout = parts.requestBodyTimeoutMs ?? defaultLifecycle.requestBodyTimeoutMs;
  // Typed as the plain instance so plugins written against FastifyInstance fit.
  const app: FastifyInstance = Fastify({
    loggerInstance: parts.logger as FastifyBaseLogger,
    genReqId: genRequestId,
    // Model inputs (batches of rows, long prompts) are bigger than fastify's 1 MiB default.
    bodyLimit: BODY_LIMIT_BYTES,
    logController: new DebugRequestLogs(),
    serverFactory: (handler) => httpServer(handler, bodyTimeout),
    clientErrorHandler: clientErrorHandler(bodyTimeout),
    frameworkErrors,
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installRouteTable(app);
  installBodyLimits(app);
  installErrorHandler(app);
  installJsonBody(app);
  installRequestDecoding(app);
  installRequestId(app);
  installDrain(app);
  installOverheadClock(app);
  const { access } = parts;
  // Before every route they see (both hook routes as they are added).
  await installCompression(app);
  await installOpenApi(app, parts.version, () => access.authenticator.enabled);
  // Before the guard: a browser's preflight carries no credential.
  await installCors(app, parts.corsOrigins === undefined ? '*' : parts.corsOrigins);
  installAuthGuard(app, access.authenticator);
  // After the guard: a request refused for its credential never holds the budget.
  installBodyBudget(app, parts.bodyBudgetBytes ?? DEFAULT_BODY_BUDGET_BYTES);
  installMetrics(app, parts.supervisor);
  const stats = new ModelStats(parts.supervisor, parts.stats ?? DEFAULT_STATS);
  installModelStats(app, stats);
  installRequestTracking(app);
  installLoraModelIds(app, parts.supervisor);
  installKeyAdmission(app, access, (uid) => parts.supervisor.modelNameOf(uid), (uid) =>
    parts.supervisor.has(uid) ? (parts.supervisor.require(uid).resolved.load.context_length ?? null) : null,
  );
  installModelLeases(app, parts.supervisor);
  // Upload routes read their parts themselves, each with its own limits (api/multipart/form.ts).
  await app.register(fastifyMultipart);

  const { supervisor, registry } = parts;
  await app.register(serviceRoutes, {
    supervisor,
    gpuCount: parts.gpuCount,
    version: parts.version,
    startedAt: parts.startedAt,
    authEnabled: () => access.authenticator.enabled,
  });
  await app.register(clusterRoutes, { supervisor, version: parts.version, startedAt: parts.startedAt, ...(parts.shutdown ? { shutdown: parts.shutdown } : {}) });
  await app.register(tokenRoute, { access });
  const retentionHours = parts.responsesRetentionHours ?? DEFAULT_RESPONSES_RETENTION_HOURS;
  const responses = new ResponseStore(access.database, retentionHours * 3_600_000, access.now);
  await app.register(userRoutes, { access, responses });
  await app.register(keyRoutes, { access });
  await app.register(reportRoutes, { access });
  await app.register(registrationRoutes, { registry, supervisor });
  await app.register(cacheRoutes, { registry, supervisor });
  await app.register(catalogRoutes, { registry });
  await app.register(hubRoutes, { supervisor, registry });
  await app.register(modelRoutes, { supervisor, registry, modelSource: parts.modelSource ?? new ModelSource(null) });
  await app.register(requestRoutes, { supervisor });
  await app.register(autostartRoutes, { supervisor, registry });
  await app.register(onDemandRoutes, { supervisor, registry });
  await app.register(memoryRoutes, { supervisor });
  await app.register(statsRoutes, { supervisor, stats, access });
  await app.register(flexibleRoutes, { supervisor });
  const images = parts.imageFetch ?? DEFAULT_IMAGE_FETCH;
  await app.register(chatRoutes, { supervisor, streaming: parts.streaming, images });
  await app.register(completionRoutes, { supervisor, streaming: parts.streaming });
  await app.register(tokenizerRoutes, { supervisor, images });
  await app.register(anthropicRoutes, { supervisor, streaming: parts.streaming, images });
  await app.register(responsesRoutes, { supervisor, streaming: parts.streaming, images, store: responses });
  await app.register(embeddingsRoutes, { supervisor });
  await app.register(rerankRoutes, { supervisor });
  const media = new MediaStore();
  await app.register(audioTranscriptionRoutes, { supervisor });
  await app.register(audioSpeechRoutes, { supervisor });
  await app.register(imagesOcrRoutes, { supervisor });
  await app.register(imageGenerationRoutes, { supervisor, media });
  await app.register(videoGenerationRoutes, { supervisor, media });
  await app.register(diffusersOnlyRoutes, { supervisor, registry, media });
  await app.register(mediaFileRoutes, { media });
  await app.register(webUiRoutes, { root: parts.webRoot ?? path.join(packageRoot, 'web', 'dist') });
  return app;
}
