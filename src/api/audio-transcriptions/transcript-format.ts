import type { Transcript, TranscriptFormat } from './schema.js';

export interface TranscriptOptions {
  task: 'transcribe' | 'translate';
  language: string | undefined;
  /** `timestamp_granularities[]` includes `word`. */
  words: boolean;
}

/**
 * A transcript in OpenAI's response formats: `json` `{text}`, `text` plain, `srt`
 * and `vtt` subtitles (one cue per segment), `verbose_json` with task, language,
 * duration, segments and, when asked with `timestamp_granularities[]=word`, words.
 */
export function renderTranscript(transcript: Transcript, format: TranscriptFormat, options: TranscriptOptions): { type: string; body: string | Record<string, unknown> } {
  switch (format) {
    case 'json':
      return { type: 'application/json; charset=utf-8', body: { text: transcript.text } };
    case 'text':
      return { type: 'text/plain; charset=utf-8', body: `${transcript.text}\n` };
    case 'srt':
      return { type: 'text/plain; charset=utf-8', body: cues(transcript, ',').map((c, i) => `${i + 1}\n${c}`).join('\n') };
    case 'vtt':
      return { type: 'text/vtt; charset=utf-8', body: `WEBVTT\n\n${cues(transcript, '.').join('\n')}` };
    case 'verbose_json': {
      const body: Record<string, unknown> = {
        task: options.task,
        language: transcript.language ?? options.language ?? null,
        duration: transcript.duration,
        text: transcript.text,
        segments: transcript.segments,
      };
      if (options.words) body.words = transcript.words;
      return { type: 'application/json; charset=utf-8', body };
    }
  }
}

function cues(transcript: Transcript, decimal: ',' | '.'): string[] {
  return transcript.segments.filter((s) => s.text.trim() !== '').map((s) => `${timestamp(s.start, decimal)} --> ${timestamp(s.end, decimal)}\n${s.text.trim()}\n`);
}

/** `HH:MM:SS,mmm` (srt) or `HH:MM:SS.mmm` (vtt). */
export function timestamp(seconds: number, decimal: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${decimal}${pad(ms % 1000, 3)}`;
}
