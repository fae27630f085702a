import { useCallback, useEffect, useState } from 'react';
import { getJson } from './api/client';

/**
 * GETs `path` (again when it changes or on `reload`), keeping the last good data while
 * reloading. `keepOnError`: a failed reload keeps the last good data beside the error
 * (a polled chart does not vanish for one failed poll).
 */
export function useFetch<T>(path: string | null, options: { keepOnError?: boolean } = {}): { data: T | undefined; error: unknown; loading: boolean; reload: () => void } {
  const keepOnError = options.keepOnError === true;
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: path !== null });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (path === null) return;
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    getJson<T>(path, controller.signal).then(
      (data) => setState({ data, error: null, loading: false }),
      (error: unknown) => {
        if (!controller.signal.aborted) setState((s) => ({ data: keepOnError ? s.data : undefined, error, loading: false }));
      },
    );
    return () => controller.abort();
  }, [path, tick, keepOnError]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}
