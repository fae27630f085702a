import type { z } from 'zod';

/**
 * Zod issues as one line a person can act on: each issue as `<field path>: <what is
 * wrong>` (e.g. `model_specs.0.model_uri: Invalid input: expected string`), so every
 * message names the field at fault; `param` is the first issue's path.
 */
export function describeIssues(error: z.ZodError): { message: string; param: string | null } {
  const parts = error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(definition)'}: ${issue.message}`);
  const first = error.issues[0];
  return {
    message: parts.join('; '),
    param: first && first.path.length > 0 ? first.path.join('.') : null,
  };
}
