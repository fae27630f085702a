import { describe, expect, it } from 'vitest';
import { renderTranscript, timestamp } from '../../src/api/audio-transcriptions/transcript-format.js';

const transcript = {
  text: 'hello there general',
  language: 'en',
  duration: 3725.5,
  segments: [
    { id: 0, start: 0.5, end: 1.25, text: 'hello there' },
    { id: 1, start: 3723.0, end: 3725.004, text: ' general ' },
  ],
  words: [{ word: 'hello', start: 0.5, end: 0.8 }],
};
const options = { task: 'transcribe' as const, language: undefined, words: false };

describe('renderTranscript', () => {
  it('writes srt and vtt cues with their own decimal marks', () => {
    expect(timestamp(3725.004, ',')).toBe('01:02:05,004');
    expect(timestamp(0.5, '.')).toBe('00:00:00.500');
    expect(renderTranscript(transcript, 'srt', options).body).toBe('1\n00:00:00,500 --> 00:00:01,250\nhello there\n\n2\n01:02:03,000 --> 01:02:05,004\ngeneral\n');
    expect(renderTranscript(transcript, 'vtt', options).body).toBe('WEBVTT\n\n00:00:00.500 --> 00:00:01.250\nhello there\n\n01:02:03.000 --> 01:02:05.004\ngeneral\n');
  });

  it('answers json, text and verbose_json as OpenAI does', () => {
    // OpenAI's usage for transcriptions: the audio's seconds, rounded up.
    expect(renderTranscript(transcript, 'json', options).body).toEqual({ text: 'hello there general', usage: { type: 'duration', seconds: 3726 } });
    expect(renderTranscript(transcript, 'text', options)).toEqual({ type: 'text/plain; charset=utf-8', body: 'hello there general\n' });
    const verbose = renderTranscript(transcript, 'verbose_json', { ...options, task: 'translate' }).body as Record<string, unknown>;
    // The language in OpenAI's words; a translation has no usage.
    expect(verbose).toMatchObject({ task: 'translate', language: 'english', duration: 3725.5, text: 'hello there general' });
    expect(verbose).not.toHaveProperty('words');
    expect(verbose).not.toHaveProperty('usage');
    expect(renderTranscript(transcript, 'verbose_json', { ...options, words: true }).body).toHaveProperty('words', transcript.words);
  });
});
