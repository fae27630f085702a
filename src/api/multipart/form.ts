import type { FastifyRequest } from 'fastify';
import type { Multipart, MultipartFile } from '@fastify/multipart';
import type { z } from 'zod';
import { HangarError } from '../../errors/hangar-error.js';
import { namingField, specificIssue } from '../validation-issue.js';

export interface UploadedFile {
  field: string;
  filename: string;
  data: Buffer;
}

export interface FormRules {
  /** The route, for messages. */
  route: string;
  /** The file fields the route reads; any other file is a 400. */
  fileFields: readonly string[];
  /** Largest accepted file; a bigger one is a 413 naming the field and the limit. */
  maxFileBytes: number;
  /** File fields that name one thing in several spellings (`image`, `image[]`, ...): a second of them is refused before its bytes are read. */
  oneOf?: readonly string[];
}

export interface Form {
  /** Text fields; a repeated field (`timestamp_granularities[]`) keeps every value. */
  fields: Record<string, string | string[]>;
  files: Map<string, UploadedFile>;
}

const MAX_FIELD_BYTES = 1024 * 1024;
const MAX_FIELDS = 64;
/**
 * All text fields together: 64 of 1 MiB each was 64 MiB held per request (fields a
 * route does not read included), about 90 MiB with the file; no route reads more than
 * one long field (a prompt).
 */
const MAX_FIELDS_TOTAL_BYTES = 2 * MAX_FIELD_BYTES;
/** Boundaries and part headers: generous, 64 fields' worth and more. */
const FORM_OVERHEAD_BYTES = 1024 * 1024;

/**
 * Reads a multipart/form-data body (the OpenAI and Xinference upload routes) with
 * the route's own limits. @fastify/multipart streams each part; a file over the
 * limit stops the upload there instead of buffering it all first.
 */
export async function readForm(request: FastifyRequest, rules: FormRules): Promise<Form> {
  if (!request.isMultipart()) {
    throw new HangarError('unsupported_media_type', [`${request.headers['content-type'] ?? 'none'}; ${rules.route} takes multipart/form-data`]);
  }
  // A declared length no form within the limits can reach is refused before a byte is
  // read (a 5 GB Content-Length that never came held the request until its 60 s timeout).
  const declared = Number(request.headers['content-length']);
  const largest = rules.maxFileBytes * rules.fileFields.length + MAX_FIELDS_TOTAL_BYTES + FORM_OVERHEAD_BYTES;
  if (Number.isFinite(declared) && declared > largest) {
    throw new HangarError('payload_too_large', [`the form is ${declared} bytes; ${rules.route} takes files of at most ${mebibytes(rules.maxFileBytes)} and ${mebibytes(MAX_FIELDS_TOTAL_BYTES)} of text fields`]);
  }
  const form: Form = { fields: {}, files: new Map() };
  let current = '';
  let textBytes = 0;
  try {
    // One file more than the route reads: that part is seen, and refused by its own name
    // below (an unknown field, or one sent twice), not as the previous field's.
    const parts = request.parts({ limits: { fileSize: rules.maxFileBytes, files: rules.fileFields.length + 1, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES } });
    for await (const part of parts) {
      current = part.fieldname;
      if (part.type === 'file') {
        if (!rules.fileFields.includes(part.fieldname)) {
          part.file.resume();
          throw new HangarError('invalid_field', [`${part.fieldname}: ${rules.route} takes no file in this field (file fields: ${rules.fileFields.join(', ')})`], { param: part.fieldname });
        }
        // The parser's file count only bounds the total: a field sent twice while
        // another is absent would otherwise replace the first file without a word.
        if (form.files.has(part.fieldname)) {
          part.file.resume();
          throw duplicateFile(part.fieldname, rules);
        }
        const earlier = rules.oneOf?.includes(part.fieldname) ? rules.oneOf.find((f) => form.files.has(f)) : undefined;
        if (earlier !== undefined) {
          part.file.resume();
          throw new HangarError('invalid_field', [`${part.fieldname}: ${rules.route} takes one of ${rules.oneOf!.join(', ')}; this came after ${earlier}`], { param: part.fieldname });
        }
        form.files.set(part.fieldname, { field: part.fieldname, filename: part.filename, data: await readFile(part, parts) });
        continue;
      }
      if (part.valueTruncated) throw new HangarError('payload_too_large', [`field ${part.fieldname} is longer than ${MAX_FIELD_BYTES} bytes`], { param: part.fieldname });
      const value = String(part.value);
      textBytes += Buffer.byteLength(value);
      if (textBytes > MAX_FIELDS_TOTAL_BYTES) {
        throw new HangarError('payload_too_large', [`the form's text fields come to more than ${mebibytes(MAX_FIELDS_TOTAL_BYTES)} (at ${part.fieldname})`], { param: part.fieldname });
      }
      const previous = form.fields[part.fieldname];
      form.fields[part.fieldname] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
    }
  } catch (err) {
    // Answered before the body was read to its end: the error handler reads and drops
    // the rest (unread-body.ts), so a kept-alive connection serves the next request.
    throw formError(err, rules, current);
  }
  // A body with no part under its boundary (a boundary the body does not use) was
  // answered as a form without `model`, as if the client had left the field out.
  if (form.files.size === 0 && Object.keys(form.fields).length === 0 && Number(request.headers['content-length'] ?? 0) > 0) {
    throw new HangarError('invalid_field', ['The multipart body could not be read: it holds no part under the boundary its Content-Type names']);
  }
  return form;
}

/**
 * A file part's bytes. When the upload broke a limit just before this file (too many
 * fields), the parser destroys the file's stream under us: what we read then is a
 * "premature close", and the limit's own error is the parser's next answer.
 */
async function readFile(part: MultipartFile, parts: AsyncIterableIterator<Multipart>): Promise<Buffer> {
  try {
    return await part.toBuffer();
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
    const cause = await parts.next().then(() => err, (limit: unknown) => limit);
    throw cause;
  }
}

function formError(err: unknown, rules: FormRules, field: string): unknown {
  if (err instanceof HangarError) return err;
  const code = (err as { code?: unknown }).code;
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return new HangarError('payload_too_large', [`the ${field === 'file' ? 'uploaded' : field} file is larger than ${mebibytes(rules.maxFileBytes)}, the limit of ${rules.route}`], { param: field, cause: err });
    case 'FST_FILES_LIMIT':
      // One file too many (a field sent twice) is a malformed form, not a large one.
      return duplicateFile(field, rules, err);
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return new HangarError('payload_too_large', [`${rules.route} takes at most ${MAX_FIELDS} fields`], { cause: err });
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new HangarError('unsupported_media_type', [`${rules.route} takes multipart/form-data`], { cause: err });
  }
  // busboy's own parse failures (a malformed body) are the client's fault.
  if (err instanceof Error && /multipart|boundary|Unexpected end of form/i.test(err.message)) {
    return new HangarError('invalid_field', [`The multipart body could not be read: ${err.message}`], { cause: err });
  }
  return err;
}

function duplicateFile(field: string, rules: FormRules, cause?: unknown): HangarError {
  return new HangarError('invalid_field', [`${field}: ${rules.route} takes one file in each of ${rules.fileFields.join(', ')}; this one came again`], { param: field, cause });
}

function mebibytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes % (1024 * 1024) === 0 ? 0 : 1)} MiB`;
}

/** The file a route needs, or a 400 naming the field. */
export function requireFile(form: Form, field: string, route: string): UploadedFile {
  const file = form.files.get(field);
  if (!file) throw new HangarError('invalid_field', [`${field}: ${route} needs a file in the multipart field \`${field}\``], { param: field });
  if (file.data.length === 0) throw new HangarError('invalid_field', [`${field}: the uploaded file is empty`], { param: field });
  return file;
}

/** Checks the text fields against the route's zod schema: a 400 naming the field, as JSON bodies get. */
export function parseFields<S extends z.ZodType>(schema: S, form: Form): z.output<S> {
  const result = schema.safeParse(form.fields);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  const issue = first ? specificIssue(first) : undefined;
  const field = issue?.path.join('.') ?? '';
  const message = issue?.message ?? 'invalid value';
  const text = namingField(field, message);
  throw new HangarError('invalid_field', [text], { param: field || null });
}
