import { useEffect, useState } from 'react';
import { send } from '../api/client';
import { ErrorBanner } from '../components/error-banner';
import { useSubmit } from './use-submit';

/** Text-to-speech (`/v1/audio/speech`): the audio bytes come back and play in the page. */
export function SpeechPanel({ uid }: { uid: string }) {
  const [input, setInput] = useState('');
  const [voice, setVoice] = useState('');
  const [format, setFormat] = useState('wav');
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => () => void (url && URL.revokeObjectURL(url)), [url]);
  const { submit, busy, error } = useSubmit(async () => {
    const body: Record<string, unknown> = { model: uid, input, response_format: format };
    if (voice.trim()) body.voice = voice.trim();
    const response = await send('/v1/audio/speech', { method: 'POST', body: JSON.stringify(body) });
    setUrl(URL.createObjectURL(await response.blob()));
  });
  return (
    <form className="panel" onSubmit={submit}>
      <h2>Speak</h2>
      <div className="field wide">
        <label htmlFor="speech-panel-text">Text</label>
        <textarea id="speech-panel-text" rows={3} value={input} required onChange={(e) => setInput(e.target.value)} />
      </div>
      <label>
        Voice
        <input value={voice} placeholder="default" onChange={(e) => setVoice(e.target.value)} />
      </label>
      <div className="field">
        <label htmlFor="speech-panel-format">Format</label>
        <select id="speech-panel-format" value={format} onChange={(e) => setFormat(e.target.value)}>
          <option>wav</option>
          <option>mp3</option>
          <option>flac</option>
        </select>
      </div>
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Speaking…' : 'Speak'}
      </button>
      <ErrorBanner error={error} />
      {url && <audio controls src={url} data-testid="speech" />}
    </form>
  );
}
