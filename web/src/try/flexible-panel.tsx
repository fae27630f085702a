import { useState, type FormEvent } from 'react';
import { postJson } from '../api/client';
import { ErrorBanner } from '../components/error-banner';

/** Calls a flexible model (`/v1/flexible/infers`) with `args` and keyword arguments given as JSON. */
export function FlexiblePanel({ uid }: { uid: string }) {
  const [args, setArgs] = useState('[]');
  const [kwargs, setKwargs] = useState('{}');
  const [result, setResult] = useState<unknown>(undefined);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      const parsedArgs: unknown = JSON.parse(args);
      const parsedKwargs: unknown = JSON.parse(kwargs || '{}');
      if (!Array.isArray(parsedArgs)) throw new Error('Arguments must be a JSON list, e.g. [[1, 2, 3]]');
      if (parsedKwargs === null || typeof parsedKwargs !== 'object' || Array.isArray(parsedKwargs)) throw new Error('Keyword arguments must be a JSON object, e.g. {"method": "predict"}');
      setResult(await postJson('/v1/flexible/infers', { ...parsedKwargs, model: uid, args: parsedArgs }));
    } catch (e) {
      setError(e instanceof SyntaxError ? new Error(`Not valid JSON: ${e.message}`) : e);
    }
  };
  return (
    <form className="panel" onSubmit={submit}>
      <h2>Call</h2>
      <div className="field wide">
        <label htmlFor="flexible-args">Arguments (JSON list)</label>
        <textarea id="flexible-args" rows={3} value={args} onChange={(e) => setArgs(e.target.value)} />
      </div>
      <div className="field wide">
        <label htmlFor="flexible-kwargs">Keyword arguments (JSON object)</label>
        <textarea id="flexible-kwargs" rows={2} value={kwargs} onChange={(e) => setKwargs(e.target.value)} />
      </div>
      <button type="submit" className="primary">
        Call
      </button>
      <ErrorBanner error={error} />
      {result !== undefined && <pre data-testid="flexible">{JSON.stringify(result, null, 2)}</pre>}
    </form>
  );
}
