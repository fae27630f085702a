import { useEffect } from 'react';
import { ApiError } from '../api/api-error';

/** How often a page whose model is not there (404) looks again: it may be launched, or launched again under its uid. */
const NOT_FOUND_RETRY_S = 10;

/**
 * Calls `reload` every `seconds` while the page is shown (the series move once per
 * sample interval). A refusal (401, 403: no permission) stops it: asking again would
 * get the same answer. A 404 does not: a page opened before its model is launched,
 * or kept open while it is relaunched under the same uid, looks again every 10 s.
 */
export function usePolling(reload: () => void, seconds: number | undefined, error: unknown = null): void {
  const interval = pollInterval(seconds, error instanceof ApiError ? error.status : null);
  useEffect(() => {
    if (interval === null) return;
    const timer = setInterval(reload, interval * 1000);
    return () => clearInterval(timer);
  }, [reload, interval]);
}

/** Seconds between reloads, or null for none: a refusal stops them, a 404 slows them. */
function pollInterval(seconds: number | undefined, status: number | null): number | null {
  if (!seconds) return null;
  if (status === 404) return Math.max(seconds, NOT_FOUND_RETRY_S);
  if (status !== null && status >= 400 && status < 500) return null;
  return seconds;
}
