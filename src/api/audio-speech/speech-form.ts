import type { FastifyRequest } from 'fastify';
import { HangarError } from '../../errors/hangar-error.js';
import { DECIMAL } from '../multipart/form-number.js';
import { readForm } from '../multipart/form.js';

/** Xinference's voice-prompt fields: a reference recording, or its latent, to speak like. */
const PROMPT_FIELDS = ['prompt_speech', 'prompt_latent'] as const;
const MAX_PROMPT_BYTES = 25 * 1024 * 1024;

/**
 * Xinference's clients send POST /v1/audio/speech as a form, not JSON, when it carries a
 * voice prompt (`speech(..., prompt_speech=...)`), as its server reads it. The form is
 * read here, before the body is checked: a voice prompt is refused by name (no engine
 * here speaks like a recording), and the rest becomes the JSON body the route checks,
 * typed as requests wrote it (`speed` "1.0", `stream` "False").
 */
export async function speechFormAsBody(request: FastifyRequest): Promise<void> {
  if (!request.isMultipart()) return;
  const form = await readForm(request, { route: '/v1/audio/speech', fileFields: PROMPT_FIELDS, maxFileBytes: MAX_PROMPT_BYTES });
  for (const field of PROMPT_FIELDS) {
    if (form.files.has(field) || form.fields[field] !== undefined) {
      throw new HangarError('field_unsupported', [field, 'no engine here speaks like a reference recording; choose one of the model\'s voices with `voice`'], { param: field });
    }
  }
  const body: Record<string, unknown> = { ...form.fields };
  // Decimal only, as every form's numbers (form-number.ts): Number() read `0x2` as 2.
  if (typeof body.speed === 'string' && DECIMAL.test(body.speed.trim())) body.speed = Number(body.speed);
  if (typeof body.stream === 'string' && /^(true|false)$/i.test(body.stream)) body.stream = body.stream.toLowerCase() === 'true';
  request.body = body;
}
