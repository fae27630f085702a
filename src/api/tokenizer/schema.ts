import { z } from 'zod';
import { chatTemplateKwargs } from '../llm/chat-template-kwargs.js';

const model = z.string().min(1).optional();

/**
 * vLLM's `POST /tokenize`: a prompt, or chat messages as a chat request sends them.
 * `model` may be left out while one LLM runs (vLLM serves one model; its clients,
 * lm-evaluation-harness's remote tokenizer among them, do not send it).
 */
export const tokenizeBody = z.union([
  z.looseObject({
    model,
    prompt: z.string(),
    add_special_tokens: z.boolean().optional(),
    return_token_strs: z.boolean().nullish(),
  }),
  z.looseObject({
    model,
    // Checked by the chat route's own schema (routes.ts), so both refuse alike.
    messages: z.array(z.unknown()),
    add_special_tokens: z.boolean().optional(),
    return_token_strs: z.boolean().nullish(),
    tools: z.array(z.unknown()).nullish(),
    chat_template_kwargs: chatTemplateKwargs,
    add_generation_prompt: z.boolean().nullish(),
    continue_final_message: z.boolean().nullish(),
  }),
]);
export type TokenizeBody = z.infer<typeof tokenizeBody>;

/** vLLM's `POST /detokenize`. */
export const detokenizeBody = z.looseObject({
  model,
  tokens: z.array(z.int().min(0, 'a token id is never negative')).max(1_000_000),
});

/** vLLM's `GET /tokenizer_info`; the model as a query parameter, for a server with several. */
export const tokenizerInfoQuery = z.object({ model });
