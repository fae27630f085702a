import type { HangarError } from '../../errors/hangar-error.js';
import type { Generation } from './generate-config.js';

/**
 * How one endpoint (chat or completions) spells a stream's runtime chunks as SSE
 * events. The relay hands it one value per event it wants written: a chunk, or
 * several merged (generation-merge.ts).
 */
export interface StreamFormat {
  /**
   * Events before any chunk (chat's role chunk); '' for none. `first` is the stream's
   * first value, read before the headers go out (its `prompt_tokens`: Anthropic's
   * message_start usage).
   */
  opening(first?: Generation): string;
  /** Events for one value; a value with `finish_reason` also gets the finishing events (and usage). */
  events(g: Generation): string;
  /** Finishing events if no value carried a finish reason (a runtime that ended without one). */
  closing(): string;
  /** What ends the stream; absent: OpenAI's `data: [DONE]` (Anthropic's streams have none). */
  done?: string;
  /** The event of a failure after the headers went out; absent: the contract's `data: {"error": ...}`. */
  failure?: (error: HangarError) => string;
  /** n > 1: the one usage chunk for every choice together (choices-relay.ts). */
  usageEvent?: (usage: unknown) => string;
}

/** One of n choices of a stream (OpenAI's `n`): its index, and the id and time all share. */
export interface ChoiceSpec {
  index: number;
  id: string;
  created: number;
  /** Whether this choice's format writes its own usage chunk (false: the relay writes one for all). */
  ownUsage: boolean;
}
