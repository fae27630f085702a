import { useEffect, useRef, useState, type FormEvent } from 'react';
import { send } from '../api/client';
import { readEvents } from '../api/sse';
import { ErrorBanner } from '../components/error-banner';

type Part = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };
interface Message {
  role: 'user' | 'assistant' | 'system';
  /** A string, or (a message with images) OpenAI's text and image_url parts. */
  content: string | Part[];
}

const textOf = (content: Message['content']): string =>
  typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? p.text : '')).join('');
const imagesOf = (content: Message['content']): string[] =>
  typeof content === 'string' ? [] : content.flatMap((p) => (p.type === 'image_url' ? [p.image_url.url] : []));

/** A picked file as a data: URL, what the API takes without a server to fetch from. */
const readAsDataUrl = (file: File): Promise<string> =>
  new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error(`Cannot read ${file.name}`));
    reader.readAsDataURL(file);
  });
interface Chunk {
  choices: Array<{ delta: { content?: string | null; reasoning_content?: string | null }; finish_reason: string | null }>;
}

/**
 * Chat with an LLM, the answer streamed token by token (`/v1/chat/completions`,
 * `stream: true`). A model with the `vision` ability also takes attached images.
 */
export function ChatPanel({ uid, vision = false }: { uid: string; vision?: boolean }) {
  const [messages, setMessages] = useState<Message[]>([]);
  const [input, setInput] = useState('');
  const [images, setImages] = useState<string[]>([]);
  const fileInput = useRef<HTMLInputElement | null>(null);
  const [system, setSystem] = useState('');
  const [maxTokens, setMaxTokens] = useState('128');
  const [temperature, setTemperature] = useState('0.7');
  const [streaming, setStreaming] = useState(false);
  const [finish, setFinish] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const abort = useRef<AbortController | null>(null);
  // Leaving the page stops the answer: it ran on to max_tokens on the server, holding a
  // request slot, with nobody reading it.
  useEffect(() => () => abort.current?.abort(), []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!input.trim() || streaming) return;
    const content: Message['content'] =
      images.length > 0 ? [...images.map((url): Part => ({ type: 'image_url', image_url: { url } })), { type: 'text', text: input }] : input;
    const history: Message[] = [...messages, { role: 'user', content }];
    setMessages([...history, { role: 'assistant', content: '' }]);
    setInput('');
    setImages([]);
    if (fileInput.current) fileInput.current.value = '';
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
      if (!controller.signal.aborted) {
        setError(e);
        // The failed turn leaves the conversation (it was sent again with the next
        // message, with an empty answer); its text goes back to the box to retry.
        setMessages(messages);
        setInput((current) => current || input);
      }
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
            {imagesOf(m.content).map((url, j) => (
              <img key={j} className="attached" src={url} alt={`Image ${j + 1} of this message`} />
            ))}
            <span className="text">{textOf(m.content) || (streaming && i === messages.length - 1 ? '…' : '')}</span>
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
        {vision && (
          <div className="field wide">
            <label htmlFor="chat-panel-images">Images</label>
            <input id="chat-panel-images"
              ref={fileInput}
              type="file"
              accept="image/*"
              multiple
              onChange={async (e) => {
                try {
                  setImages(await Promise.all([...(e.target.files ?? [])].map(readAsDataUrl)));
                } catch (err) {
                  setError(err);
                }
              }}
            />
            {images.length > 0 && <p className="muted" data-testid="attached-count">{images.length} image{images.length > 1 ? 's' : ''} attached</p>}
          </div>
        )}
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
