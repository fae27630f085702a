import { z } from 'zod';

/** OpenAI's speech formats, all of which the engines make (opus in Ogg, aac in ADTS frames). */
export const SPEECH_FORMATS = ['mp3', 'wav', 'flac', 'pcm', 'opus', 'aac'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

export const SPEECH_CONTENT_TYPES: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  flac: 'audio/flac',
  pcm: 'audio/pcm',
  opus: 'audio/opus',
  aac: 'audio/aac',
};

/** POST /v1/audio/speech (contract §4; OpenAI's speech body plus Xinference's `stream` and `kwargs`). */
export const speechBody = z.looseObject({
  model: z.string({ error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : undefined) }).min(1),
  // Blank text is empty text: refused here, as "" is, naming `input` (the engines refuse it too).
  input: z.string().max(4096, 'must be at most 4096 characters').refine((v) => v.trim().length > 0, 'must not be empty'),
  // Xinference's clients send `voice: ""` unless told one (its server then takes the
  // model's default voice, as here): an empty voice is no voice.
  voice: z.string().nullish().transform((v) => (v === '' ? null : v)),
  response_format: z.enum(SPEECH_FORMATS).default('mp3'),
  speed: z.number().min(0.25).max(4).default(1),
  stream: z.boolean().default(false),
  // OpenAI's (gpt-4o-mini-tts): events instead of bytes, and a way of speaking. Refused
  // when they ask for something (speech-form.ts), not dropped.
  stream_format: z.enum(['audio', 'sse']).nullish(),
  instructions: z.string().max(4096).nullish(),
  kwargs: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
});
export type SpeechBody = z.output<typeof speechBody>;
