/**
 * A schema's refusal as the field a client can fix. zod answers a value that fits none
 * of a union's shapes with one `invalid_union` issue, "Invalid input", at the union's
 * own path (an Anthropic content block of an unknown type: `messages.0.content: Invalid
 * input`); the reason is inside, once per shape. This picks the shape the value was
 * meant for and names its first issue there (`messages.0.content.0: content blocks must
 * be text, image, ...`), or, where the value's type fits no shape, says which would.
 */
export interface SchemaIssue {
  code: string;
  path: ReadonlyArray<PropertyKey>;
  message: string;
  /** `invalid_union`: each shape's issues. */
  errors?: ReadonlyArray<ReadonlyArray<SchemaIssue>>;
  /** `invalid_type`: the type the shape wanted. */
  expected?: string;
  /** `invalid_value`: the values the shape takes (a literal's, an enum's). */
  values?: ReadonlyArray<unknown>;
  /** `invalid_key`: what the record's key schema found wrong with the key. */
  issues?: ReadonlyArray<SchemaIssue>;
}

// zod's own words for a union that gives no reason of its own.
const GENERIC = 'Invalid input';

export function specificIssue(issue: SchemaIssue): SchemaIssue {
  // A record's key that fits not its key schema: zod says "Invalid key in record"; the
  // key schema's own message says what a key must be (`logit_bias.-5: keys must be token ids`).
  const keyIssue = issue.code === 'invalid_key' ? issue.issues?.[0] : undefined;
  if (keyIssue && keyIssue.message) return { ...keyIssue, path: issue.path };
  let current = issue;
  let path = [...issue.path];
  // Unions nest (a block union inside a content union); each level is one step down.
  for (let depth = 0; depth < 16; depth++) {
    const shapes = (current.errors ?? []).filter((issues) => issues.length > 0);
    if (current.code !== 'invalid_union' || shapes.length === 0) break;
    // A shape whose `type` did not match is one the value was not meant for.
    const meant = shapes.filter((issues) => !issues.some(wrongDiscriminator));
    // A union's own message (`content blocks must be text, image, ...`) says it best when
    // the value is of no kind it knows; when one kind matched, what that kind lacks does.
    if (current.message !== GENERIC && meant.length === 0) break;
    // A union of plain values with words of its own (`must be "auto", an integer, or
    // null`): those words, not its first shape's alone (`expected "auto"` for 1.5).
    if (current.message !== GENERIC && shapes.every((issues) => issues[0]!.path.length === 0)) break;
    if (meant.length === 0) {
      // Of no kind at all: name every kind there is.
      const kinds = shapes.flatMap((issues) => issues.filter(wrongDiscriminator).flatMap((issue) => issue.values ?? (issue.expected ? [issue.expected] : [])));
      if (kinds.length > 0) return { code: 'invalid_value', path: [...path, 'type'], message: `${GENERIC}: expected ${[...new Set(kinds.map((k) => JSON.stringify(k)))].join(' or ')}` };
    }
    const pool = meant.length > 0 ? meant : shapes;
    if (pool.every((issues) => issues[0]!.code === 'invalid_type' && issues[0]!.path.length === 0)) {
      const expected = [...new Set(pool.map((issues) => issues[0]!.expected).filter(Boolean))];
      const received = /received (\w+)/.exec(pool[0]![0]!.message)?.[1];
      const message = `${GENERIC}: expected ${expected.join(' or ')}${received ? `, received ${received}` : ''}`;
      return { code: 'invalid_type', path, message };
    }
    // A shape whose type the value has says what is wrong with it (17 stop strings: too
    // many, not "expected string"); of those, one that faults a field the value has over
    // one that misses a field the value never meant to send (`/tokenize` with bad
    // `messages` is about messages, not the `prompt` of the other shape); then the shape
    // the value got furthest into.
    const typed = pool.filter((issues) => !(issues[0]!.code === 'invalid_type' && issues[0]!.path.length === 0));
    const present = typed.filter((issues) => !missingField(issues[0]!));
    const best = (present.length > 0 ? present : typed.length > 0 ? typed : pool).reduce((a, b) => (b[0]!.path.length > a[0]!.path.length ? b : a));
    current = best[0]!;
    path = path.concat(current.path);
  }
  return { ...current, path };
}

function missingField(issue: SchemaIssue): boolean {
  return issue.code === 'invalid_type' && issue.path.length > 0 && /received undefined$/.test(issue.message);
}

function wrongDiscriminator(issue: SchemaIssue): boolean {
  return issue.path.length === 1 && issue.path[0] === 'type' && (issue.code === 'invalid_value' || issue.code === 'invalid_type');
}

/**
 * The message as `field: message`, unless it already names the field: in backticks
 * (Xinference's "Please specify the `model_name` field") or as its first word. A plain
 * substring test took `n` in "number", `input` in "Invalid input" and `id` in "Invalid"
 * for the field's name, and left the field out.
 */
export function namingField(field: string, message: string): string {
  if (field.length === 0) return message;
  const named = message.includes(`\`${field}\``) || (message.startsWith(field) && !/^[\w.]/.test(message.slice(field.length)));
  return named ? message : `${field}: ${message}`;
}
