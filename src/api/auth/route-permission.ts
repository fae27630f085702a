import type { Permission } from '../../auth/permissions.js';
import type { ModelType } from '../../registry/index.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The permission a route needs when auth is on, declared once next to the route.
     * A route that declares none needs `admin`: forgetting it fails closed.
     */
    permission?: Permission;
    /**
     * The model types an inference route serves. A request naming an on-demand entry of
     * another type is refused before the entry loads (model-lease.ts), not after.
     */
    modelTypes?: readonly ModelType[];
    /**
     * What an LLM needs to serve the route (`chat`, `generate`, `embed`), and how the
     * refusal names it: an on-demand LLM entry without it is refused before it loads
     * (a request it could not serve loaded it, and evicted another model for it).
     */
    llmAbility?: LlmAbilityNeed;
  }
}

export interface LlmAbilityNeed {
  ability: string;
  /** As the route's own refusal says it: "chat", "text completion (`generate`)". */
  what: string;
}

/** Route options fragment: `{ config: { permission } }`, the model types an inference route serves, and what an LLM needs for it. */
export function needs(
  permission: Permission, modelTypes?: readonly ModelType[], llmAbility?: LlmAbilityNeed,
): { config: { permission: Permission; modelTypes?: readonly ModelType[]; llmAbility?: LlmAbilityNeed } } {
  return { config: { permission, ...(modelTypes ? { modelTypes } : {}), ...(llmAbility ? { llmAbility } : {}) } };
}

/** What the chat-shaped routes (chat, Anthropic Messages, Responses) need of an LLM. */
export const CHAT_ABILITY: LlmAbilityNeed = { ability: 'chat', what: 'chat' };
