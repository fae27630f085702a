import { useState } from 'react';
import { send } from '../api/client';
import { ErrorBanner } from '../components/error-banner';
import { useSubmit } from './use-submit';

/** Uploads an audio file for speech-to-text (`/v1/audio/transcriptions`, multipart `model`, `file`). */
export function TranscriptionPanel({ uid }: { uid: string }) {
  const [file, setFile] = useState<File | null>(null);
  const [language, setLanguage] = useState('');
  const [text, setText] = useState<string | null>(null);
  const { submit, busy, error } = useSubmit(async () => {
    if (!file) return;
    // A result stays with the file it came from: a failed next file shows no old text under its error.
    setText(null);
    const form = new FormData();
    form.set('model', uid);
    form.set('file', file);
    if (language.trim()) form.set('language', language.trim());
    const response = await send('/v1/audio/transcriptions', { method: 'POST', body: form });
    setText(((await response.json()) as { text: string }).text);
  });
  return (
    <form className="panel" onSubmit={submit}>
      <h2>Transcribe audio</h2>
      <label className="wide">
        Audio file
        <input type="file" accept="audio/*" required onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
      </label>
      <label>
        Language
        <input value={language} placeholder="e.g. en" onChange={(e) => setLanguage(e.target.value)} />
      </label>
      <button type="submit" className="primary" disabled={busy || !file}>
        {busy ? 'Transcribing…' : 'Transcribe'}
      </button>
      <ErrorBanner error={error} />
      {text !== null && <blockquote data-testid="transcription">{text}</blockquote>}
    </form>
  );
}
