import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { AccessControl } from '../../auth/access-control.js';
import { HangarError } from '../../errors/hangar-error.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { hostMemory } from './host-memory.js';
import type { ModelStats } from './model-stats.js';
import { ModelSeries } from './model-series.js';
import { seriesParams, seriesQuery } from './stats-query.js';

const tags = ['stats'];
/** The series answer's default window, and the overview's sparklines' (issue 41: 5 min, 15 min, 1 h views). */
const DEFAULT_WINDOW_S = 900;
const SPARKLINE_S = 300;

/**
 * `GET /v1/stats/models/{uid}/series` and `GET /v1/stats/overview` (a Hangar
 * extension, docs/monitoring.md): what the web UI's dashboards draw, from memory, for
 * whoever holds `monitor:view`.
 */
export const statsRoutes: FastifyPluginAsync<{ supervisor: Supervisor; stats: ModelStats; access: AccessControl }> = async (app, { supervisor, stats, access }) => {
  app.get('/v1/stats/models/:uid/series', { ...needs('monitor:view'), schema: { params: seriesParams, querystring: seriesQuery, tags } }, async (request, reply) => {
    const { uid } = request.params as { uid: string };
    const { window } = request.query as { window?: number };
    // One lookup, not the sorted list: dashboards poll this route.
    const known = supervisor.has(uid) ? supervisor.require(uid) : undefined;
    const instance = known?.state === 'READY' ? known : undefined;
    const series = stats.get(uid);
    if (!instance && !series) throw new HangarError('model_not_found', [uid], { param: 'uid' });
    const windowS = window ?? DEFAULT_WINDOW_S;
    const head = JSON.stringify({
      model_uid: uid,
      model_name: instance?.resolved.modelName ?? null,
      model_type: instance?.resolved.modelType ?? null,
      interval_s: stats.settings.intervalMs / 1000,
      window_s: windowS,
    });
    // Before its first sample a model has every column, empty.
    const body = (series ?? new ModelSeries(uid, 1)).readJson(windowS);
    // Two JSON objects joined as one: the samples part is built once per sample (model-series.ts).
    return reply.type('application/json; charset=utf-8').send(`${head.slice(0, -1)},${body.slice(1)}`);
  });

  app.get('/v1/stats/overview', { ...needs('monitor:view'), schema: { tags } }, async () => {
    const now = Date.now();
    const midnight = new Date(now);
    midnight.setUTCHours(0, 0, 0, 0);
    const today = access.usage.summary({ from: midnight.toISOString() }, [], 'day')[0];
    const snapshots = supervisor.replicaSnapshots();
    const ready = supervisor.listReady();
    const devices = supervisor.gpuDevices();
    const running = ready.map((instance) => {
      const own = snapshots.filter((s) => s.modelUid === instance.uid);
      const series = stats.get(instance.uid);
      const recent = series?.read(now - SPARKLINE_S * 1000, ['generated_tokens_per_s', 'requests_per_s', 'in_flight', 'queued']);
      return {
        model_uid: instance.uid,
        model_name: instance.resolved.modelName,
        model_type: instance.resolved.modelType,
        model_engine: instance.resolved.engine,
        replicas: own.length,
        memory_estimate_bytes: instance.memoryEstimate?.bytes ?? null,
        rss_bytes: sumOrNull(own.map((s) => s.stats?.rssBytes ?? null)),
        gpu_memory_bytes: sumOrNull(own.map((s) => s.gpuMemoryBytes)),
        gpus: [...new Set(own.flatMap((s) => s.gpuIndexes))].sort((a, b) => a - b),
        sparkline: recent ? { timestamps: recent.timestamps, ...recent.series } : { timestamps: [], generated_tokens_per_s: [], requests_per_s: [], in_flight: [], queued: [] },
      };
    });
    return {
      sampled_at: now / 1000,
      interval_s: stats.settings.intervalMs / 1000,
      models: ready.length,
      replicas: snapshots.length,
      today: {
        since: midnight.toISOString(),
        requests: today?.requests ?? 0,
        errors: today?.errors ?? 0,
        prompt_tokens: today?.prompt_tokens ?? 0,
        completion_tokens: today?.completion_tokens ?? 0,
      },
      memory: {
        host: { ...hostMemory(), models_bytes: running.reduce((sum, m) => sum + (m.rss_bytes ?? 0), 0) },
        gpus: devices.map((d) => ({
          index: d.index,
          name: d.name,
          total_bytes: d.memoryTotalBytes,
          used_bytes: d.memoryUsedBytes,
          utilization_percent: d.utilizationPercent,
          // This host's GPUs: a cluster node's replicas hold memory on their own node's.
          models_bytes: snapshots.filter((s) => s.local && s.gpuIndexes.includes(d.index)).reduce((sum, s) => sum + (s.gpuMemoryBytes ?? 0) / Math.max(1, s.gpuIndexes.length), 0),
        })),
      },
      running,
    };
  });
};

function sumOrNull(values: Array<number | null>): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every running model's recent series (model-stats.ts), fed by each inference request's meter. */
    modelStats: ModelStats;
  }
}

/** The series store on the root instance (the meters of every route feed it), its sampler running while the app is open. */
export function installModelStats(app: FastifyInstance, stats: ModelStats): void {
  app.decorate('modelStats', stats);
  app.addHook('onReady', (done) => {
    stats.start();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    stats.stop();
    done();
  });
}
