import { useState } from 'react';
import { postJson } from '../api/client';
import { ErrorBanner } from '../components/error-banner';
import { useSubmit } from './use-submit';

interface EmbeddingResponse {
  data: Array<{ index: number; embedding: number[] }>;
  usage?: { total_tokens: number };
}

/** Embeds one text per line (`/v1/embeddings`) and shows each vector's size and first values. */
export function EmbeddingsPanel({ uid }: { uid: string }) {
  const [input, setInput] = useState('');
  const [result, setResult] = useState<EmbeddingResponse | null>(null);
  const { submit, busy, error } = useSubmit(async () => {
    setResult(null);
    const lines = input.split('\n').filter((l) => l.trim());
    setResult(await postJson<EmbeddingResponse>('/v1/embeddings', { model: uid, input: lines }));
  });
  return (
    <form className="panel" onSubmit={submit}>
      <h2>Embeddings</h2>
      <div className="field wide">
        <label htmlFor="embeddings-panel-texts-one-per-line">Texts (one per line)</label>
        <textarea id="embeddings-panel-texts-one-per-line" rows={4} value={input} onChange={(e) => setInput(e.target.value)} required />
      </div>
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Embedding…' : 'Embed'}
      </button>
      <ErrorBanner error={error} />
      {result && (
        <ol className="results" data-testid="embeddings">
          {result.data.map((d) => (
            <li key={d.index}>
              {d.embedding.length} dimensions: [{d.embedding.slice(0, 6).map((v) => v.toFixed(4)).join(', ')}, …]
            </li>
          ))}
        </ol>
      )}
    </form>
  );
}
