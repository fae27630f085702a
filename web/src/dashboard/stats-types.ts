/** `GET /v1/stats/models/{uid}/series` (docs/monitoring.md, "Series"). */
export interface SeriesAnswer {
  model_uid: string;
  model_name: string | null;
  model_type: string | null;
  interval_s: number;
  window_s: number;
  timestamps: number[];
  series: Record<string, Array<number | null>>;
  finish_reasons: Record<string, Array<number | null>>;
  replicas: Array<{ replica: string; timestamps: number[]; series: Record<string, Array<number | null>> }>;
}

/** `GET /v1/stats/overview`. */
export interface Overview {
  sampled_at: number;
  interval_s: number;
  models: number;
  replicas: number;
  today: { since: string; requests: number; errors: number; prompt_tokens: number; completion_tokens: number };
  memory: {
    host: { total_bytes: number; available_bytes: number; used_bytes: number; models_bytes: number };
    gpus: Array<{ index: number; name: string; total_bytes: number; used_bytes: number; utilization_percent: number | null; models_bytes: number }>;
  };
  running: Array<{
    model_uid: string;
    model_name: string;
    model_type: string;
    model_engine: string;
    replicas: number;
    rss_bytes: number | null;
    gpu_memory_bytes: number | null;
    sparkline: { timestamps: number[]; generated_tokens_per_s: Array<number | null>; requests_per_s: Array<number | null>; in_flight: Array<number | null>; queued: Array<number | null> };
  }>;
}

/** A row of `GET /v1/admin/usage` with `group_by` and `bucket` (docs/auth.md, "Usage"). */
export interface UsageSummaryRow {
  bucket: string;
  key_id?: number | null;
  user?: string;
  model?: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  errors: number;
}
