import { ApiError } from '../api/api-error';

/** fetch's own failure (no answer at all): the browser says only "Failed to fetch". */
function unreachable(error: unknown): boolean {
  return error instanceof TypeError && /fetch|network/i.test(error.message);
}

/** Shows a failed call the way a person can act on it: a 403 names the missing permission. */
export function ErrorBanner({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiError ? error.describe() : unreachable(error) ? 'Cannot reach the service (stopped, restarting, or the network is down); the page tries again.' : error instanceof Error ? error.message : String(error);
  const forbidden = error instanceof ApiError && error.status === 403;
  return (
    <div className={forbidden ? 'banner forbidden' : 'banner error'} role="alert" data-testid={forbidden ? 'forbidden' : 'error'}>
      {text}
    </div>
  );
}
