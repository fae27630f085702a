import { FINISH_REASONS, type FinishReason } from './finish-reason.js';
import { SeriesRing } from './series-ring.js';
import { WindowQuantiles } from './window-quantiles.js';

/** A model's columns (docs/monitoring.md, "Series"): rates per second over each window, gauges at its end, latencies per window. */
export const MODEL_COLUMNS = [
  'generated_tokens_per_s',
  'prompt_tokens_per_s',
  'requests_per_s',
  'errors_per_s',
  'in_flight',
  'queued',
  'ttft_p50_ms',
  'ttft_p95_ms',
  'tpot_p50_ms',
  'tpot_p95_ms',
  'e2e_p50_ms',
  'e2e_p95_ms',
] as const;
export type ModelColumn = (typeof MODEL_COLUMNS)[number];

/** Each replica's columns: its process tree's CPU (100 = one core) and memory, its GPUs' where it has any. */
export const REPLICA_COLUMNS = ['cpu_percent', 'rss_bytes', 'gpu_memory_bytes', 'gpu_utilization_percent'] as const;
export type ReplicaColumn = (typeof REPLICA_COLUMNS)[number];

const ANSWERS_KEPT = 4;

type FinishColumn = `finish_${FinishReason}`;
const FINISH_COLUMNS = FINISH_REASONS.map((r) => `finish_${r}` as FinishColumn);

/** One inference request of a model, once its response has gone (or its client has). */
export interface InferenceOutcome {
  ok: boolean;
  promptTokens: number;
  /** Completion tokens not already counted as they streamed (`ModelSeries.generated`); negative corrects an over-count. */
  uncountedTokens: number;
  e2eMs: number;
  /** Streams only: from arrival to the first text. */
  ttftMs: number | null;
  /** Streams of two tokens or more: the mean time per token after the first. */
  tpotMs: number | null;
  finishReason: FinishReason;
}

/** What the sampler read for a replica at the end of a window. */
export interface ReplicaReading {
  replica: string;
  cpuPercent: number | null;
  rssBytes: number | null;
  gpuMemoryBytes: number | null;
  gpuUtilizationPercent: number | null;
}

export interface SeriesAnswer {
  timestamps: number[];
  series: Record<ModelColumn, Array<number | null>>;
  finish_reasons: Record<FinishReason, Array<number | null>>;
  replicas: Array<{ replica: string; timestamps: number[]; series: Record<ReplicaColumn, Array<number | null>> }>;
}

/**
 * One running model's recent history: counts gather during a window, and at its end
 * the sampler turns them into one sample of a fixed ring (issue 41, item 1). Everything
 * here is bounded: the rings by their capacity, a window's latencies by WindowQuantiles,
 * the replicas by dropping one that has reported nothing for a whole ring.
 */
export class ModelSeries {
  private readonly ring: SeriesRing<ModelColumn | FinishColumn>;
  private readonly replicaRings = new Map<string, { ring: SeriesRing<ReplicaColumn>; lastMs: number }>();
  private generatedTokens = 0;
  private promptTokens = 0;
  private requests = 0;
  private errors = 0;
  private readonly finishes = new Map<FinishReason, number>();
  /** The last sample's time; windows end there, so an answer changes only when a sample is taken. */
  private lastSampleMs = 0;
  /** Answers as JSON by window, valid until the next sample (dashboards poll the same few windows). */
  private readonly answers = new Map<number, string>();
  private readonly ttft = new WindowQuantiles();
  private readonly tpot = new WindowQuantiles();
  private readonly e2e = new WindowQuantiles();

  constructor(
    readonly uid: string,
    private readonly capacity: number,
  ) {
    this.ring = new SeriesRing<ModelColumn | FinishColumn>(capacity, [...MODEL_COLUMNS, ...FINISH_COLUMNS]);
  }

  /** Generated tokens as a stream relays them, so the rate follows the stream rather than jumping at its end. */
  generated(tokens: number): void {
    this.generatedTokens += tokens;
  }

  answered(outcome: InferenceOutcome): void {
    this.requests++;
    if (!outcome.ok) this.errors++;
    this.promptTokens += outcome.promptTokens;
    this.generatedTokens += outcome.uncountedTokens;
    this.finishes.set(outcome.finishReason, (this.finishes.get(outcome.finishReason) ?? 0) + 1);
    this.e2e.add(outcome.e2eMs);
    if (outcome.ttftMs !== null) this.ttft.add(outcome.ttftMs);
    if (outcome.tpotMs !== null) this.tpot.add(outcome.tpotMs);
  }

  /**
   * Ends the window at `timeMs`: one sample, then the counts start again. Rates divide
   * by the nominal `seconds` of a window, so a rate times the interval gives back the
   * exact count (a tick a few milliseconds late moves nothing between windows that matters).
   */
  sample(timeMs: number, seconds: number, gauges: { inFlight: number; queued: number }, replicas: readonly ReplicaReading[]): void {
    // Rounded when stored: an hour of 17-digit floats would triple the answer's size
    // (and the time to serialize and compress it) for digits nobody reads.
    const rate = (n: number) => round(n / seconds, 1000);
    const ms = (v: number | null) => (v === null ? null : round(v, 100));
    const ttft = this.ttft.take();
    const tpot = this.tpot.take();
    const e2e = this.e2e.take();
    const values: Partial<Record<ModelColumn | FinishColumn, number | null>> = {
      generated_tokens_per_s: rate(this.generatedTokens),
      prompt_tokens_per_s: rate(this.promptTokens),
      requests_per_s: rate(this.requests),
      errors_per_s: rate(this.errors),
      in_flight: gauges.inFlight,
      queued: gauges.queued,
      ttft_p50_ms: ms(ttft.p50),
      ttft_p95_ms: ms(ttft.p95),
      tpot_p50_ms: ms(tpot.p50),
      tpot_p95_ms: ms(tpot.p95),
      e2e_p50_ms: ms(e2e.p50),
      e2e_p95_ms: ms(e2e.p95),
    };
    for (const reason of FINISH_REASONS) values[`finish_${reason}`] = this.finishes.get(reason) ?? 0;
    this.ring.push(timeMs, values);
    this.lastSampleMs = timeMs;
    this.answers.clear();
    this.generatedTokens = this.promptTokens = this.requests = this.errors = 0;
    this.finishes.clear();

    for (const r of replicas) {
      let entry = this.replicaRings.get(r.replica);
      if (!entry) this.replicaRings.set(r.replica, (entry = { ring: new SeriesRing<ReplicaColumn>(this.capacity, REPLICA_COLUMNS), lastMs: timeMs }));
      entry.ring.push(timeMs, { cpu_percent: r.cpuPercent === null ? null : round(r.cpuPercent, 10), rss_bytes: r.rssBytes, gpu_memory_bytes: r.gpuMemoryBytes, gpu_utilization_percent: r.gpuUtilizationPercent });
      entry.lastMs = timeMs;
    }
    // A replica removed (or restarting for longer than the ring spans) has nothing left to show.
    const oldest = timeMs - this.capacity * seconds * 1000;
    for (const [replica, entry] of this.replicaRings) if (entry.lastMs < oldest) this.replicaRings.delete(replica);
  }

  /** The last sample's value of a model column (for the overview's cards). */
  last(column: ModelColumn): number | null {
    return this.ring.last(column);
  }

  /**
   * `read` over the last `windowS` seconds up to the last sample, as JSON, built once
   * per sample and window: an hour of one model is ~90 kB, and serializing it for every
   * poll of every open dashboard would cost more than taking the samples.
   */
  readJson(windowS: number): string {
    let json = this.answers.get(windowS);
    if (json === undefined) {
      json = JSON.stringify(this.read(this.lastSampleMs - windowS * 1000));
      // Bounded: a dashboard asks for three windows; anything past a few is dropped.
      if (this.answers.size >= ANSWERS_KEPT) this.answers.delete(this.answers.keys().next().value!);
      this.answers.set(windowS, json);
    }
    return json;
  }

  /** The samples after `sinceMs`, timestamps in Unix seconds. */
  read(sinceMs: number, columns: readonly ModelColumn[] = MODEL_COLUMNS): SeriesAnswer {
    const own = this.ring.since(sinceMs, [...columns, ...FINISH_COLUMNS]);
    const series = {} as Record<ModelColumn, Array<number | null>>;
    for (const c of columns) series[c] = own.values[c];
    const finishes = {} as Record<FinishReason, Array<number | null>>;
    for (const reason of FINISH_REASONS) finishes[reason] = own.values[`finish_${reason}`];
    const replicas = [...this.replicaRings].map(([replica, { ring }]) => {
      const r = ring.since(sinceMs);
      return { replica, timestamps: r.times.map(toSeconds), series: r.values };
    });
    return { timestamps: own.times.map(toSeconds), series, finish_reasons: finishes, replicas };
  }
}

function round(v: number, per: number): number {
  return Math.round(v * per) / per;
}

function toSeconds(ms: number): number {
  return Math.round(ms) / 1000;
}
