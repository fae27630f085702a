import { ErrorBanner } from '../components/error-banner';
import { ChatPanel } from '../try/chat-panel';
import { EmbeddingsPanel } from '../try/embeddings-panel';
import { FlexiblePanel } from '../try/flexible-panel';
import { OcrPanel } from '../try/ocr-panel';
import { RerankPanel } from '../try/rerank-panel';
import { SpeechPanel } from '../try/speech-panel';
import { TranscriptionPanel } from '../try/transcription-panel';
import { Link } from '../router';
import { useFetch } from '../use-fetch';

interface Description {
  model_type: string;
  model_name: string;
  model_ability?: string[];
}

/** Picks the panel for a running model from its type and abilities (`GET /v1/models/<uid>`). */
export function TryPage({ uid }: { uid: string }) {
  const { data, error } = useFetch<Description>(`/v1/models/${encodeURIComponent(uid)}`);
  const abilities = data?.model_ability ?? [];
  const panels = data ? panelsFor(uid, data.model_type, abilities) : [];
  return (
    <section>
      <h1>
        Try <code>{uid}</code>
      </h1>
      {data && (
        <p className="muted">
          {data.model_type} model <strong>{data.model_name}</strong>
          {abilities.length > 0 && <> ({abilities.join(', ')})</>}
        </p>
      )}
      <ErrorBanner error={error} />
      {data && panels.length === 0 && (
        <p className="empty">
          No try-it panel for this model; call it through the API (see <code>/openapi.json</code>).
        </p>
      )}
      {panels}
      <p>
        <Link to="/ui/running">Back to running models</Link>
      </p>
    </section>
  );
}

function panelsFor(uid: string, type: string, abilities: string[]) {
  const has = (a: string) => abilities.includes(a);
  const panels = [];
  if (type === 'LLM' && (has('chat') || has('generate') || abilities.length === 0)) panels.push(<ChatPanel key="chat" uid={uid} vision={has('vision')} />);
  if (type === 'embedding' || (type === 'LLM' && has('embed'))) panels.push(<EmbeddingsPanel key="embed" uid={uid} />);
  if (type === 'rerank') panels.push(<RerankPanel key="rerank" uid={uid} />);
  if (type === 'audio' && has('audio2text')) panels.push(<TranscriptionPanel key="asr" uid={uid} />);
  if (type === 'audio' && abilities.some((a) => a.startsWith('text2audio'))) panels.push(<SpeechPanel key="tts" uid={uid} />);
  if (type === 'image' && has('ocr')) panels.push(<OcrPanel key="ocr" uid={uid} />);
  if (type === 'flexible') panels.push(<FlexiblePanel key="flexible" uid={uid} />);
  return panels;
}
