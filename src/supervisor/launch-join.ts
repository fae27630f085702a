import type { LaunchRequest } from './launch-request.js';
import type { ModelInstance } from './model-instance.js';

/**
 * A launch by hand of a uid that runs with the same parameters joins it (contract
 * §3.1), and says what the user wants of it from now on (docs/on-demand.md, "A second
 * launch of a running uid"):
 * - a model loaded on demand becomes one launched by hand: never evicted for another,
 *   saved for a restart, unloaded only by its own keep_alive (the launch's, else the
 *   default for launches by hand);
 * - a `keep_alive` given replaces the model's, counted from now, as each request's
 *   does in Ollama.
 * Before, both were ignored: the launch answered 200 and the model still unloaded on
 * its on-demand entry's keep_alive, gone for good if the entry was removed meanwhile.
 */
export function joinByHand(instance: ModelInstance, request: LaunchRequest, handDefaultKeepAliveMs: number | null): void {
  if (instance.onDemand) {
    instance.onDemand = false;
    instance.keepAliveMs = request.keep_alive !== undefined ? request.keep_alive : handDefaultKeepAliveMs;
    // Saved for a restart as it is now: the entry's keep_alive in its request must not come back.
    instance.keepAliveAsked = instance.keepAliveMs;
    instance.lastUsedAt = Date.now();
    instance.events.add('INFO', `Launched by hand: no longer loaded on demand; keep_alive ${describe(instance.keepAliveMs)}`);
    return;
  }
  if (request.keep_alive === undefined || request.keep_alive === instance.keepAliveMs) return;
  instance.keepAliveMs = request.keep_alive;
  instance.keepAliveAsked = request.keep_alive;
  instance.lastUsedAt = Date.now();
  instance.events.add('INFO', `keep_alive set to ${describe(instance.keepAliveMs)} by a second launch`);
}

function describe(ms: number | null): string {
  return ms === null ? 'never (kept until terminated)' : `${ms / 1000} s`;
}
