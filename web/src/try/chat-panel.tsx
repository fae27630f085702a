import { useRef, useState, type FormEvent } from 'react';
import { send } from '../api/client';
import { readEvents } from '../api/sse';
import { ErrorBanner } from '../components/error-banner';

interface Message {
  role: 'user' | 'assistant' | 'system';
  content: string;
}
interface Chunk {
  choices: Array<{ delta: { content?: string | null; reasoning_content?: string | null }; finish_reason: string | null }>;
}

/** Chat with an LLM, the answer streamed token by token (`/v1/chat/completions`, `stream: true`). */
export function ChatPanel({ uid }: { uid: string }) {
  const [messages, setMessages] = useState<Message[]>([]);
  const [input, setInput] = useState('');
  const [system, setSystem] = useState('');
  const [maxTokens, setMaxTokens] = useState('128');
  const [temperature, setTemperature] = useState('0.7');
  const [streaming, setStreaming] = useState(false);
  const [finish, setFinish] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const abort = useRef<AbortController | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!input.trim() || streaming) return;
    const history: Message[] = [...messages, { role: 'user', content: input }];
    setMessages([...history, { role: 'assistant', content: '' }]);
    setInput('');
    setError(null);
    setFinish(null);
    setStreaming(true);
    const controller = new AbortController();
    abort.current = controller;
    try {
      const body = {
        model: uid,
        messages: system.trim() ? [{ role: 'system', content: system }, ...history] : history,
        stream: true,
        max_tokens: Number(maxTokens) || undefined,
        temperature: Number(temperature),
      };
      const response = await send('/v1/chat/completions', { method: 'POST', body: JSON.stringify(body), signal: controller.signal });
      let text = '';
      for await (const chunk of readEvents<Chunk>(response)) {
        const choice = chunk.choices[0];
        if (!choice) continue;
        text += choice.delta.content ?? '';
        if (choice.finish_reason) setFinish(choice.finish_reason);
        setMessages([...history, { role: 'assistant', content: text }]);
      }
    } catch (e) {
      if (!controller.signal.aborted) setError(e);
    } finally {
      setStreaming(false);
      abort.current = null;
    }
  };

  return (
    <div className="panel">
      <h2>Chat</h2>
      <details>
        <summary>Settings</summary>
        <div className="grid">
          <div className="field wide">
            <label htmlFor="chat-panel-system-prompt">System prompt</label>
            <textarea id="chat-panel-system-prompt" rows={2} value={system} onChange={(e) => setSystem(e.target.value)} />
          </div>
          <label>
            Max tokens
            <input type="number" min={1} value={maxTokens} onChange={(e) => setMaxTokens(e.target.value)} />
          </label>
          <label>
            Temperature
            <input type="number" min={0} max={2} step={0.1} value={temperature} onChange={(e) => setTemperature(e.target.value)} />
          </label>
        </div>
      </details>
      <ol className="chat" aria-live="polite" aria-busy={streaming}>
        {messages.map((m, i) => (
          <li key={i} className={`message ${m.role}`} data-role={m.role}>
            <span className="who">{m.role === 'user' ? 'You' : uid}</span>
            <span className="text">{m.content || (streaming && i === messages.length - 1 ? '…' : '')}</span>
          </li>
        ))}
      </ol>
      {finish && <p className="muted" data-testid="finish-reason">Finished: {finish}</p>}
      <ErrorBanner error={error} />
      <form onSubmit={submit} className="composer">
        <div className="field wide">
          <label htmlFor="chat-panel-message">Message</label>
          <textarea id="chat-panel-message"
            name="message"
            rows={2}
            value={input}
            onChange={(e) => setInput(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) {
                e.preventDefault();
                e.currentTarget.form?.requestSubmit();
              }
            }}
          />
        </div>
        <div className="actions">
          {streaming ? (
            <button type="button" onClick={() => abort.current?.abort()}>
              Stop
            </button>
          ) : (
            <button type="button" onClick={() => setMessages([])} disabled={messages.length === 0}>
              Clear
            </button>
          )}
          <button type="submit" className="primary" disabled={streaming || !input.trim()}>
            Send
          </button>
        </div>
      </form>
    </div>
  );
}
