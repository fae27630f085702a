import { z } from 'zod';

/** How far back a series answer reaches: `300`, `90s`, `5m`, `1h` (at most the hour kept). */
export const seriesQuery = z.object({
  window: z
    .string()
    .max(16)
    .regex(/^\d{1,5}(s|m|h)?$/, 'must be a duration such as 300, 90s, 5m or 1h')
    .transform((v) => {
      const n = Number.parseInt(v, 10);
      const unit = v.endsWith('h') ? 3600 : v.endsWith('m') ? 60 : 1;
      return n * unit;
    })
    .pipe(z.number().int().min(1, 'must be at least 1 s').max(3600, 'must be at most 1h: the service keeps the last hour'))
    .optional(),
});

export const seriesParams = z.object({ uid: z.string().min(1).max(256) });
