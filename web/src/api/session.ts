/**
 * The credential the page sends (contract §6): a JWT from `/token` or an API key,
 * kept in sessionStorage so it lasts for this tab only and is gone when the tab closes.
 */
const KEY = 'hangar.credential';
const listeners = new Set<() => void>();
/** Whether the credential was dropped because the server refused it (not by logging out). */
let expired = false;
/** How many 401s the page has had: each makes the app ask again whether auth is on. */
let rejections = 0;

export const session = {
  credential(): string | null {
    return sessionStorage.getItem(KEY);
  },
  signIn(credential: string): void {
    expired = false;
    sessionStorage.setItem(KEY, credential);
    notify();
  },
  signOut(): void {
    expired = false;
    sessionStorage.removeItem(KEY);
    notify();
  },
  /** Called back on sign-in, sign-out and when the server refuses the credential (401). */
  subscribe(listener: () => void): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
  /** The server answered 401: the credential is missing, expired or revoked. */
  rejected(): void {
    rejections++;
    expired = session.credential() !== null;
    sessionStorage.removeItem(KEY);
    notify();
  },
  /** A number that changes with every 401 (for useSyncExternalStore). */
  rejectionCount(): number {
    return rejections;
  },
  /** Whether the last sign-out came from a 401 rather than the user (the login page says so). */
  wasRejected(): boolean {
    return expired;
  },
};

function notify(): void {
  for (const listener of listeners) listener();
}
