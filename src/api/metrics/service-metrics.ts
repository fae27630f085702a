import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { KeyMetrics } from './key-metrics.js';
import type { InferenceOutcome } from '../stats/model-series.js';
import type { LaunchEvent, UnloadEvent, ReplicaSnapshot, RestartEvent, Supervisor, WakeEvent } from '../../supervisor/supervisor.js';

// Seconds. Inference through a tiny model takes a millisecond; a big LLM call a minute.
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
// The control plane's own share of a request: well under a millisecond when healthy.
const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1];
const TTFT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
// Seconds per output token: 1 ms (a tiny model on a GPU) to a second (a big one on a CPU).
const TPOT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.25, 0.5, 1];
const LAUNCH_BUCKETS = [0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900];

/**
 * Every metric the service exposes, in one registry (names follow Prometheus'
 * conventions: `hangar_` prefix, base units, `_total` for counters). Only api/metrics
 * imports prom-client; the supervisor reports through LifecycleEvents and
 * `replicaSnapshots()`, and runtimes through the stats on their PONGs.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  /** Per database API key (docs/auth.md, "Usage"). */
  readonly keys = new KeyMetrics(this.registry);
  private readonly requests: Counter<'method' | 'route' | 'status' | 'model'>;
  private readonly duration: Histogram<'method' | 'route' | 'model'>;
  private readonly overhead: Histogram<'route'>;
  private readonly tokens: Counter<'model'>;
  private readonly ttft: Histogram<'model'>;
  private readonly promptTokens: Counter<'model'>;
  private readonly tpot: Histogram<'model'>;
  private readonly finished: Counter<'model' | 'finish_reason'>;
  private readonly launches: Counter<'model_type' | 'model_name' | 'outcome'>;
  private readonly launchSeconds: Histogram<'model_type' | 'outcome'>;
  private readonly restarts: Counter<'model' | 'replica'>;
  private readonly loads: Counter<'model_name' | 'trigger' | 'outcome'>;
  private readonly loadSeconds: Histogram<'model_name' | 'trigger'>;
  private readonly evictions: Counter<'model_name' | 'reason'>;

  constructor(private readonly supervisor: Supervisor) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'hangar_' });
    // Gauges that prom-client names `_total`, a counter's suffix (promtool flags them);
    // each is the sum of its by-type gauge, which stays (`hangar_nodejs_active_handles`, ...).
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
      if (this.registry.getSingleMetric(`hangar_${name}`)) this.registry.removeSingleMetric(`hangar_${name}`);
    }
    this.requests = new Counter({
      name: 'hangar_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern, status and model (empty when none or unknown)',
      labelNames: ['method', 'route', 'status', 'model'] as const,
      registers,
    });
    this.duration = new Histogram({
      name: 'hangar_http_request_duration_seconds',
      help: 'Time from a request arriving to its response ending (a stream: to its last event)',
      labelNames: ['method', 'route', 'model'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.overhead = new Histogram({
      name: 'hangar_http_overhead_seconds',
      help: 'Time an inference request spent in the control plane, runtime time excluded (x-hangar-overhead-ms)',
      labelNames: ['route'] as const,
      buckets: OVERHEAD_BUCKETS,
      registers,
    });
    this.tokens = new Counter({
      name: 'hangar_generated_tokens_total',
      help: 'Completion tokens generated, as the runtime counted them',
      labelNames: ['model'] as const,
      registers,
    });
    this.ttft = new Histogram({
      name: 'hangar_time_to_first_token_seconds',
      help: 'Streams: time from the request arriving to its first generated text',
      labelNames: ['model'] as const,
      buckets: TTFT_BUCKETS,
      registers,
    });
    this.promptTokens = new Counter({
      name: 'hangar_prompt_tokens_total',
      help: 'Prompt tokens of answered inference requests, as the runtime counted them',
      labelNames: ['model'] as const,
      registers,
    });
    this.tpot = new Histogram({
      name: 'hangar_time_per_output_token_seconds',
      help: 'Streams of two tokens or more: the mean time per output token after the first',
      labelNames: ['model'] as const,
      buckets: TPOT_BUCKETS,
      registers,
    });
    this.finished = new Counter({
      name: 'hangar_request_finished_total',
      help: 'Inference requests that ended, by model and finish reason (stop, length, tool_calls, abort: the client left or the request was aborted, error, other)',
      labelNames: ['model', 'finish_reason'] as const,
      registers,
    });
    this.launches = new Counter({
      name: 'hangar_model_launches_total',
      help: 'Model launches that ended, by outcome (ready or failed)',
      labelNames: ['model_type', 'model_name', 'outcome'] as const,
      registers,
    });
    this.launchSeconds = new Histogram({
      name: 'hangar_model_launch_duration_seconds',
      help: 'Time from a launch request to its model being ready (or failing)',
      labelNames: ['model_type', 'outcome'] as const,
      buckets: LAUNCH_BUCKETS,
      registers,
    });
    this.restarts = new Counter({
      name: 'hangar_replica_restarts_total',
      help: 'Restarts of replicas whose runtime died',
      labelNames: ['model', 'replica'] as const,
      registers,
    });
    // Loads and unloads by policy (docs/on-demand.md), by model name: a uid's series would
    // be dropped with the model at every unload.
    this.loads = new Counter({
      name: 'hangar_model_loads_total',
      help: 'Model loads that ended, by trigger (manual: a launch; on_demand: a request; wake: a sleeping vLLM model woken by a request) and outcome (ready or failed)',
      labelNames: ['model_name', 'trigger', 'outcome'] as const,
      registers,
    });
    this.loadSeconds = new Histogram({
      name: 'hangar_model_load_seconds',
      help: 'Time from the start of a load to its model being ready, by trigger',
      labelNames: ['model_name', 'trigger'] as const,
      buckets: LAUNCH_BUCKETS,
      registers,
    });
    this.evictions = new Counter({
      name: 'hangar_model_evictions_total',
      help: 'Models unloaded by policy: idle past keep_alive, evicted to make room (memory), or put to sleep to make room (sleep: vLLM sleep mode)',
      labelNames: ['model_name', 'reason'] as const,
      registers,
    });
    supervisor.lifecycle.listen({
      launched: (e: LaunchEvent) => {
        this.launches.inc({ model_type: e.modelType, model_name: e.modelName, outcome: e.outcome });
        this.launchSeconds.observe({ model_type: e.modelType, outcome: e.outcome }, e.seconds);
        const trigger = e.onDemand ? 'on_demand' : 'manual';
        this.loads.inc({ model_name: e.modelName, trigger, outcome: e.outcome });
        if (e.outcome === 'ready') this.loadSeconds.observe({ model_name: e.modelName, trigger }, e.seconds);
      },
      unloaded: (e: UnloadEvent) => this.evictions.inc({ model_name: e.modelName, reason: e.reason }),
      woken: (e: WakeEvent) => {
        this.loads.inc({ model_name: e.modelName, trigger: 'wake', outcome: e.outcome });
        if (e.outcome === 'ready') this.loadSeconds.observe({ model_name: e.modelName, trigger: 'wake' }, e.seconds);
      },
      restarted: (e: RestartEvent) => this.restarts.inc({ model: e.modelUid, replica: e.replica }),
      terminated: (uid: string) => void this.forgetModel(uid),
    });
    registerReplicaGauges(this.registry, () => supervisor.replicaSnapshots());
  }

  /**
   * Drops every series labelled with a terminated model's uid: a service that launches
   * and stops models for days must not grow /metrics without end. (Per-replica gauges
   * are rebuilt at each scrape and need nothing.)
   */
  private async forgetModel(uid: string): Promise<void> {
    this.keys.forgetModel(uid);
    for (const metric of [this.requests, this.duration, this.tokens, this.ttft, this.promptTokens, this.tpot, this.finished, this.restarts] as Array<Counter<string> | Histogram<string>>) {
      const seen = new Set<string>();
      for (const { labels } of (await metric.get()).values) {
        if (labels.model !== uid) continue;
        const { le: _bucket, ...series } = labels as Record<string, string | number>;
        const key = JSON.stringify(series);
        if (seen.has(key)) continue;
        seen.add(key);
        metric.remove(series);
      }
    }
  }

  /** One answered request; `overheadMs` when the route reported one. */
  answered(method: string, route: string, status: number, model: string, seconds: number, overheadMs: number | null): void {
    this.requests.inc({ method, route, status: String(status), model });
    this.duration.observe({ method, route, model }, seconds);
    if (overheadMs !== null) this.overhead.observe({ route }, overheadMs / 1000);
  }

  generated(model: string, completionTokens: number): void {
    if (completionTokens > 0) this.tokens.inc({ model }, completionTokens);
  }

  firstToken(model: string, seconds: number): void {
    this.ttft.observe({ model }, seconds);
  }

  /** An inference request of a running model has ended (api/auth/key-admission.ts); others are not labelled. */
  inferred(model: string, outcome: InferenceOutcome): void {
    // A request that ends after its model was terminated must not bring its series back.
    if (model === '(unknown)' || !this.supervisor.has(model)) return;
    if (outcome.promptTokens > 0) this.promptTokens.inc({ model }, outcome.promptTokens);
    if (outcome.tpotMs !== null) this.tpot.observe({ model }, outcome.tpotMs / 1000);
    this.finished.inc({ model, finish_reason: outcome.finishReason });
  }
}

type ReplicaLabel = 'model' | 'replica';

/**
 * Per-replica values read when Prometheus scrapes: what the runtime last reported
 * (at most a heartbeat old) and what the control plane has in flight. Reset on each
 * scrape so a stopped replica's series disappear.
 */
function registerReplicaGauges(registry: Registry, snapshots: () => ReplicaSnapshot[]): void {
  const labels = (s: ReplicaSnapshot): Record<ReplicaLabel, string> => ({ model: s.modelUid, replica: s.replica });
  const gauge = (name: string, help: string, value: (s: ReplicaSnapshot) => number | null): void => {
    new Gauge<ReplicaLabel>({
      name,
      help,
      labelNames: ['model', 'replica'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const s of snapshots()) {
          const v = value(s);
          if (v !== null) this.set(labels(s), v);
        }
      },
    });
  };
  // Counters the runtime keeps since it started: exposed as counters (a restart resets them, as Prometheus expects).
  const counter = (name: string, help: string, value: (s: ReplicaSnapshot) => number | null): void => {
    new Counter<ReplicaLabel>({
      name,
      help,
      labelNames: ['model', 'replica'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const s of snapshots()) {
          const v = value(s);
          if (v !== null) this.inc(labels(s), v);
        }
      },
    });
  };
  gauge('hangar_runtime_resident_memory_bytes', 'Resident memory of each replica\'s runtime process', (s) => s.stats?.rssBytes ?? null);
  gauge('hangar_model_queue_depth', 'Calls a replica\'s runtime holds, waiting or running', (s) => s.stats?.queueDepth ?? null);
  gauge('hangar_model_requests_in_flight', 'Calls the control plane has sent to a replica and not yet had answered', (s) => s.pendingCalls);
  // A runtime that holds no call runs no batch: its last step's size stayed on dashboards for good.
  gauge('hangar_model_batch_size', 'Calls in a replica\'s last batch step; 0 when it holds no call, and for engines that do not batch', (s) => (s.stats ? (s.stats.queueDepth === 0 ? 0 : s.stats.batchSize) : null));
  counter('hangar_model_batch_steps_total', 'Batch steps a replica\'s runtime has run', (s) => s.stats?.batchSteps ?? null);
  counter('hangar_model_batched_calls_total', 'Sum over batch steps of the calls in the batch (divide by steps for the mean batch size)', (s) => s.stats?.batchStepCalls ?? null);
}
