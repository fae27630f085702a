import { useEffect } from 'react';

/** Calls `reload` every `seconds` while the page is shown (the series move once per sample interval). */
export function usePolling(reload: () => void, seconds: number | undefined): void {
  useEffect(() => {
    if (!seconds) return;
    const timer = setInterval(reload, seconds * 1000);
    return () => clearInterval(timer);
  }, [reload, seconds]);
}
