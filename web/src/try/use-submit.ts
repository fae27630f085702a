import { useState, type FormEvent } from 'react';

/**
 * A Try-it form's submit: runs `action` once per submit, with `busy` while it runs and
 * the failure (cleared at the next submit) for an ErrorBanner.
 */
export function useSubmit(action: () => Promise<void>): { submit: (event: FormEvent) => Promise<void>; busy: boolean; error: unknown } {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      await action();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return { submit, busy, error };
}
