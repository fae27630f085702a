import { HangarError } from '../../errors/hangar-error.js';
import { specificIssue } from '../validation-issue.js';
import { chatBody, type ChatBody } from './schema.js';

/**
 * A chat request built by another route (Anthropic's Messages, vLLM's /tokenize),
 * checked by the chat route's own schema, so both refuse alike: 400 `invalid_field`
 * naming the field.
 */
export function checkedChatBody(value: unknown): ChatBody {
  const parsed = chatBody.safeParse(value);
  if (!parsed.success) {
    const issue = specificIssue(parsed.error.issues[0]!);
    const field = issue.path.join('.');
    throw new HangarError('invalid_field', [`${field}: ${issue.message}`], { param: field || null });
  }
  return parsed.data;
}
