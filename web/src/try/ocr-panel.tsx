import { useState } from 'react';
import { send } from '../api/client';
import { ErrorBanner } from '../components/error-banner';
import { useSubmit } from './use-submit';

/** Uploads an image for OCR (`/v1/images/ocr`, multipart `model`, `image`); shows the engine's answer. */
export function OcrPanel({ uid }: { uid: string }) {
  const [file, setFile] = useState<File | null>(null);
  const [result, setResult] = useState<unknown>(undefined);
  const { submit, busy, error } = useSubmit(async () => {
    if (!file) return;
    setResult(undefined);
    const form = new FormData();
    form.set('model', uid);
    form.set('image', file);
    const response = await send('/v1/images/ocr', { method: 'POST', body: form });
    setResult(await response.json());
  });
  const text = typeof result === 'string' ? result : result && typeof result === 'object' && 'text' in result ? String((result as { text: unknown }).text) : null;
  return (
    <form className="panel" onSubmit={submit}>
      <h2>Read text from an image</h2>
      <label className="wide">
        Image
        <input type="file" accept="image/*" required onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
      </label>
      <button type="submit" className="primary" disabled={busy || !file}>
        {busy ? 'Reading…' : 'Read text'}
      </button>
      <ErrorBanner error={error} />
      {result !== undefined && (text !== null ? <blockquote data-testid="ocr">{text}</blockquote> : <pre data-testid="ocr">{JSON.stringify(result, null, 2)}</pre>)}
    </form>
  );
}
