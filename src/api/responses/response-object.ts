import type { HangarError } from '../../errors/hangar-error.js';
import { asGeneration, type Generation, type TokenLogprob } from '../llm/generate-config.js';
import { itemId } from './input-items.js';
import type { ResponsesBody } from './schema.js';

/** What every Response object of one request shares: its id, time and the request's settings echoed back. */
export interface ResponseContext {
  id: string;
  createdAt: number;
  body: ResponsesBody;
  store: boolean;
  /** Whether output_text parts carry `logprobs` (top_logprobs or include asked). */
  logprobs: boolean;
}

export type Usage = Record<string, unknown>;

/** OpenAI's Response object without its output: status `in_progress` until the end. */
export function responseShell(ctx: ResponseContext, status: string): Record<string, unknown> {
  const b = ctx.body;
  return {
    id: ctx.id,
    object: 'response',
    created_at: ctx.createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: b.instructions ?? null,
    max_output_tokens: b.max_output_tokens ?? null,
    max_tool_calls: null,
    model: b.model,
    output: [],
    parallel_tool_calls: b.parallel_tool_calls ?? true,
    previous_response_id: b.previous_response_id ?? null,
    reasoning: { effort: b.reasoning?.effort ?? null, summary: null },
    service_tier: 'default',
    store: ctx.store,
    temperature: b.temperature ?? 1,
    text: { format: b.text?.format ?? { type: 'text' }, verbosity: 'medium' },
    tool_choice: b.tool_choice ?? 'auto',
    tools: b.tools ?? [],
    top_logprobs: b.top_logprobs ?? 0,
    top_p: b.top_p ?? 1,
    truncation: b.truncation ?? 'disabled',
    usage: null,
    user: b.user ?? null,
    metadata: b.metadata ?? {},
  };
}

/** The runtime's usage in the Responses API's names. */
export function responseUsage(g: Generation | null): Usage | null {
  const u = g?.usage;
  if (!u) return null;
  return {
    input_tokens: u.prompt_tokens,
    // The SDKs' ResponseUsage declares both; the engines do not report cached tokens, so 0.
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: u.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.total_tokens,
  };
}

export function reasoningItem(id: string, text: string): Record<string, unknown> {
  return { id, type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text }] };
}

export function outputTextPart(text: string, logprobs: TokenLogprob[] | null): Record<string, unknown> {
  return { type: 'output_text', text, annotations: [], ...(logprobs ? { logprobs } : {}) };
}

export function messageItem(id: string, status: string, content: Array<Record<string, unknown>>): Record<string, unknown> {
  return { id, type: 'message', status, role: 'assistant', content };
}

interface ToolCall {
  id?: string;
  function?: { name?: string; arguments?: string };
}

/** A runtime (OpenAI chat) tool call as a `function_call` output item. */
export function functionCallItem(call: unknown, status: string): Record<string, unknown> {
  const c = call as ToolCall;
  return { id: itemId('fc'), type: 'function_call', status, call_id: c.id ?? itemId('call'), name: c.function?.name ?? '', arguments: c.function?.arguments ?? '{}' };
}

/** `incomplete` when generation stopped at max_output_tokens (or the context's end). */
export function statusOf(finish: string | undefined): { status: string; incomplete_details: { reason: string } | null } {
  return finish === 'length' ? { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } : { status: 'completed', incomplete_details: null };
}

/** The whole answer (non-stream): reasoning, message and function_call items, and `output_text`. */
export function finalResponse(ctx: ResponseContext, value: unknown): Record<string, unknown> {
  const g = asGeneration(value);
  const { status, incomplete_details } = statusOf(g.finish_reason);
  const output: Array<Record<string, unknown>> = [];
  if (g.reasoning_content) output.push(reasoningItem(itemId('rs'), g.reasoning_content));
  const answer = g.text;
  if (answer || !g.tool_calls?.length) output.push(messageItem(itemId('msg'), status, [outputTextPart(answer, ctx.logprobs ? (g.logprobs ?? []) : null)]));
  // Cut by max_output_tokens, a call's arguments are cut too: not one to run (OpenAI's `incomplete`).
  for (const call of g.tool_calls ?? []) output.push(functionCallItem(call, status === 'incomplete' ? 'incomplete' : 'completed'));
  return { ...responseShell(ctx, status), incomplete_details, output, output_text: answer, usage: responseUsage(g) };
}

/** A response that failed after it started (a stream's `response.failed`). */
export function failedResponse(ctx: ResponseContext, output: Array<Record<string, unknown>>, error: HangarError): Record<string, unknown> {
  return { ...responseShell(ctx, 'failed'), output, error: { code: error.code, message: error.message } };
}
