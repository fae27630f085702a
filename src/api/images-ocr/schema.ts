import { z } from 'zod';

/** Text fields of POST /v1/images/ocr (multipart `model`, `image`, contract §4). */
export const ocrFields = z.looseObject({
  model: z.string({ error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : undefined) }).min(1),
  /** tesseract: the language(s), e.g. `eng` or `eng+deu`. */
  lang: z.string().min(1).max(64).optional(),
  /** Image-to-text models: an instruction, where the model takes one. */
  prompt: z.string().optional(),
  kwargs: z.string().optional(),
});
