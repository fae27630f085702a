import { z } from 'zod';
import { formNumber } from '../multipart/form-number.js';

export const TRANSCRIPT_FORMATS = ['json', 'text', 'srt', 'vtt', 'verbose_json'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

/** Text fields of POST /v1/audio/transcriptions and /translations (multipart, contract §4; the file is `file`). */
export const transcriptionFields = z.looseObject({
  model: z.string({ error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : undefined) }).min(1),
  language: z.string().min(1).max(16).optional(),
  prompt: z.string().optional(),
  response_format: z.enum(TRANSCRIPT_FORMATS).default('json'),
  temperature: formNumber(z.number().min(0).max(1)).optional(),
  'timestamp_granularities[]': z.union([z.enum(['word', 'segment']), z.array(z.enum(['word', 'segment']))]).optional(),
  /** OpenAI's: the transcript as server-sent events (transcript.text.delta, transcript.text.done). */
  stream: z.enum(['true', 'false', 'True', 'False']).optional(),
  /** Xinference: extra engine arguments as a JSON string. */
  kwargs: z.string().optional(),
});
export type TranscriptionFields = z.output<typeof transcriptionFields>;

/** What every speech-to-text engine returns (docs/runtime-protocol.md). */
export interface Transcript {
  text: string;
  language: string | null;
  duration: number;
  segments: Array<{ id: number; start: number; end: number; text: string }>;
  words: Array<{ word: string; start: number; end: number }>;
}
