import { useState } from 'react';
import { postJson } from '../api/client';
import { ErrorBanner } from '../components/error-banner';
import { useSubmit } from './use-submit';

interface RerankResponse {
  results: Array<{ index: number; relevance_score: number; document: { text: string } | null }>;
}

/** Ranks documents (one per line) against a query (`/v1/rerank`), best first. */
export function RerankPanel({ uid }: { uid: string }) {
  const [query, setQuery] = useState('');
  const [documents, setDocuments] = useState('');
  const [result, setResult] = useState<RerankResponse | null>(null);
  const { submit, busy, error } = useSubmit(async () => {
    setResult(null);
    const docs = documents.split('\n').filter((l) => l.trim());
    setResult(await postJson<RerankResponse>('/v1/rerank', { model: uid, query, documents: docs, return_documents: true }));
  });
  return (
    <form className="panel" onSubmit={submit}>
      <h2>Rerank</h2>
      <label className="wide">
        Query
        <input value={query} onChange={(e) => setQuery(e.target.value)} required />
      </label>
      <div className="field wide">
        <label htmlFor="rerank-panel-documents-one-per-line">Documents (one per line)</label>
        <textarea id="rerank-panel-documents-one-per-line" rows={5} value={documents} onChange={(e) => setDocuments(e.target.value)} required />
      </div>
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Reranking…' : 'Rerank'}
      </button>
      <ErrorBanner error={error} />
      {result && (
        <ol className="results" data-testid="rerank">
          {result.results.map((r) => (
            <li key={r.index}>
              <strong>{r.relevance_score.toFixed(4)}</strong> #{r.index + 1} {r.document?.text}
            </li>
          ))}
        </ol>
      )}
    </form>
  );
}
