import { useEffect } from 'react';
import { ApiError } from '../api/api-error';

/**
 * Calls `reload` every `seconds` while the page is shown (the series move once per
 * sample interval). A refusal (a 4xx: no permission, a model gone) stops it: asking
 * again would get the same answer.
 */
export function usePolling(reload: () => void, seconds: number | undefined, error: unknown = null): void {
  const refused = error instanceof ApiError && error.status >= 400 && error.status < 500;
  useEffect(() => {
    if (!seconds || refused) return;
    const timer = setInterval(reload, seconds * 1000);
    return () => clearInterval(timer);
  }, [reload, seconds, refused]);
}
