import { client } from './http.js';

/** How many of a model's answers ended aborted in the last 5 minutes (its stats series, HANGAR_STATS_INTERVAL_S). */
export async function abortedAnswers(url: string, uid: string): Promise<number> {
  const reasons = (await client(url).get(`/v1/stats/models/${encodeURIComponent(uid)}/series?window=5m`)).body.finish_reasons as Record<string, Array<number | null>>;
  return (reasons.abort ?? []).reduce<number>((sum, count) => sum + (count ?? 0), 0);
}
