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
  // OpenAI's transcriptions say what they bill: the audio's seconds (translations do not).
  const usage = options.task === 'transcribe' ? { usage: { type: 'duration', seconds: Math.ceil(transcript.duration) } } : {};
  switch (format) {
    case 'json':
      return { type: 'application/json; charset=utf-8', body: { text: transcript.text, ...usage } };
    case 'text':
      return { type: 'text/plain; charset=utf-8', body: `${transcript.text}\n` };
    case 'srt':
      return { type: 'text/plain; charset=utf-8', body: cues(transcript, ',').map((c, i) => `${i + 1}\n${c}`).join('\n') };
    case 'vtt':
      return { type: 'text/vtt; charset=utf-8', body: `WEBVTT\n\n${cues(transcript, '.').join('\n')}` };
    case 'verbose_json': {
      const body: Record<string, unknown> = {
        task: options.task,
        language: languageName(transcript.language ?? options.language ?? null),
        duration: transcript.duration,
        text: transcript.text,
        segments: transcript.segments,
        ...usage,
      };
      if (options.words) body.words = transcript.words;
      return { type: 'application/json; charset=utf-8', body };
    }
  }
}

/**
 * A streamed transcription (`stream=true`), as OpenAI's events: one `transcript.text.delta`
 * per segment (the whole text at once where segments do not make it up), then
 * `transcript.text.done` with the text. The file is decoded before the first event.
 */
export function transcriptEvents(transcript: Transcript): string {
  const pieces = transcript.segments.map((s) => s.text.trim()).filter((t) => t !== '');
  const deltas = pieces.join(' ') === transcript.text.trim() ? pieces.map((t, i) => (i === 0 ? t : ` ${t}`)) : [transcript.text];
  const event = (body: Record<string, unknown>): string => `data: ${JSON.stringify(body)}\n\n`;
  return [...deltas.filter((d) => d !== '').map((delta) => event({ type: 'transcript.text.delta', delta })), event({ type: 'transcript.text.done', text: transcript.text })].join('');
}

const LANGUAGE_NAMES = new Intl.DisplayNames(['en'], { type: 'language' });

/** OpenAI's verbose_json names the language in English words (`english`), where engines give its code (`en`). */
function languageName(language: string | null): string | null {
  if (language === null || !/^[a-z]{2,3}$/i.test(language)) return language;
  try {
    const name = LANGUAGE_NAMES.of(language.toLowerCase());
    return name && name.toLowerCase() !== language.toLowerCase() ? name.toLowerCase() : language;
  } catch {
    return language;
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
