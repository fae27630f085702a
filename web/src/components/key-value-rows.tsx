/** Editable name/value pairs (environment variables, extra engine parameters). */
export interface Pair {
  key: string;
  value: string;
}

export function KeyValueRows({ legend, pairs, onChange, keyLabel = 'Name', valueLabel = 'Value' }: { legend: string; pairs: Pair[]; onChange: (pairs: Pair[]) => void; keyLabel?: string; valueLabel?: string }) {
  const set = (i: number, patch: Partial<Pair>) => onChange(pairs.map((p, j) => (j === i ? { ...p, ...patch } : p)));
  return (
    <fieldset className="pairs">
      <legend>{legend}</legend>
      {pairs.map((pair, i) => (
        <div className="pair" key={i}>
          <input aria-label={`${legend} ${keyLabel.toLowerCase()} ${i + 1}`} placeholder={keyLabel} value={pair.key} onChange={(e) => set(i, { key: e.target.value })} />
          <input aria-label={`${legend} ${valueLabel.toLowerCase()} ${i + 1}`} placeholder={valueLabel} value={pair.value} onChange={(e) => set(i, { value: e.target.value })} />
          <button type="button" aria-label={`Remove ${legend} ${i + 1}`} onClick={() => onChange(pairs.filter((_, j) => j !== i))}>
            ×
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...pairs, { key: '', value: '' }])}>
        Add
      </button>
    </fieldset>
  );
}

/** Values are read as JSON where they parse (numbers, booleans, lists), else kept as text. */
export function parseLoose(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
