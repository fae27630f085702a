import type { FastifyRequest } from 'fastify';
import type { Supervisor } from '../../supervisor/supervisor.js';

/**
 * Anthropic's Models API over the running models (and on-demand entries, which a call
 * loads): `GET /anthropic/v1/models[/{id}]`, and `GET /v1/models[/{id}]` when the caller
 * is an Anthropic client. Anthropic's SDKs send `anthropic-version` with every request;
 * OpenAI's and Xinference's clients never do, so the header tells the two lists apart at
 * the root base URL the Anthropic SDK is pointed at.
 */
export function isAnthropicClient(request: FastifyRequest): boolean {
  return typeof request.headers['anthropic-version'] === 'string';
}

const describe = (uid: string, created: number) => ({ type: 'model', id: uid, display_name: uid, created_at: new Date(created * 1000).toISOString() });

/** `allowed`: whether the caller's key may use a model (a key's model_permissions). */
export function anthropicModelList(supervisor: Supervisor, allowed: (uid: string) => boolean): Record<string, unknown> {
  const data = [
    ...supervisor.listReady().filter((i) => allowed(i.uid)).map((i) => describe(i.uid, i.createdTs)),
    ...supervisor.onDemandNotReady().filter(({ entry }) => allowed(entry.uid)).map(({ entry }) => describe(entry.uid, 0)),
  ];
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

export function anthropicModel(supervisor: Supervisor, uid: string): Record<string, unknown> {
  const instance = supervisor.require(uid);
  return describe(instance.uid, instance.createdTs);
}
