import { HangarError } from '../../errors/hangar-error.js';

/**
 * A Responses request is served as a chat request (chat-request.ts), so what the chat
 * schema or an engine says about a field names chat's field. Here it is named as this
 * request spells it: `messages...` is `input` (the message list is built from it),
 * `response_format` (with its `json_schema.schema`) is `text.format` (with its
 * `schema`), `max_tokens` is `max_output_tokens`, and a tool's `function.name` its `name`.
 */
const RENAMES: Array<[RegExp, string]> = [
  [/\bmessages(\.\d+)*/g, 'input'],
  [/\bresponse_format\.json_schema\.schema\b/g, 'text.format.schema'],
  [/\bresponse_format(\.json_schema)?\b/g, 'text.format'],
  [/\bmax_tokens\b/g, 'max_output_tokens'],
  // A Responses function tool is chat's `function` unwrapped: `tools.0.name`, not `tools.0.function.name`.
  [/\btools(?:\.(\d+)|\[(\d+)\])\.function\b/g, 'tools.$1$2'],
];

const renamed = (text: string): string => RENAMES.reduce((out, [from, to]) => out.replace(from, to), text);

/** A chat field's name (a dotted path) as the Responses request's. */
export function responsesParam(param: string): string {
  return param.startsWith('messages') ? 'input' : renamed(param);
}

/** Answers what `pending` answers; its error about a chat field names the Responses field instead. */
export async function withResponsesNames<T>(pending: Promise<T>): Promise<T> {
  try {
    return await pending;
  } catch (err) {
    if (err instanceof HangarError && err.param) {
      const param = responsesParam(err.param);
      const message = renamed(err.message);
      if (param !== err.param || message !== err.message) throw err.withParam(param, message);
    }
    throw err;
  }
}
