import { HangarError } from '../../errors/hangar-error.js';
import type { Registry } from '../../registry/index.js';
import type { LaunchBody } from './schema.js';

/**
 * An entry kept across restarts (on-demand, autostart) of a custom model registered
 * without `persist` is refused: after a restart the entry was still listed, and every
 * request (or the autostart) answered a 404 about a model name the client never sent.
 */
export async function refuseUnkeptRegistration(registry: Registry, body: LaunchBody, list: 'on-demand' | 'autostart'): Promise<void> {
  if (await registry.outlivesRestart(body.model_type, body.model_name)) return;
  throw new HangarError('invalid_field', [
    `model_name: ${body.model_name} was registered without persist, so it is gone after a restart while the ${list} entry is kept; register it again with "persist": true first`,
  ], { param: 'model_name' });
}
