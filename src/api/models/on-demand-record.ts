import type { StoredInstance } from '../../supervisor/instance-store.js';

/**
 * GET /v1/models item of an on-demand entry that is not READY now: available to
 * requests (the first one loads it), so OpenAI clients that list models before they
 * call see it. `status` says it is not loaded (`UNLOADED`), or the state of the load
 * or unload under way (`CREATING`, `TERMINATING`).
 */
export function describeOnDemand({ uid, request }: StoredInstance, status = 'UNLOADED'): Record<string, unknown> {
  return {
    id: uid,
    object: 'model',
    created: 0,
    owned_by: 'hangar',
    model_type: request.model_type,
    model_name: request.model_name,
    model_engine: request.model_engine ?? null,
    replica: request.replica,
    on_demand: true,
    status,
  };
}
