import type { ModelType } from '../model-types';
import { useFetch } from '../use-fetch';
import { ABILITIES, emptySpec, type RegisterForm, type SpecRow } from './register-definition';

/** The inputs of the register form for one model type. */
export function RegisterFields({ type, form, onChange, lockName }: { type: ModelType; form: RegisterForm; onChange: (form: RegisterForm) => void; lockName: boolean }) {
  const set = (patch: Partial<RegisterForm>) => onChange({ ...form, ...patch });
  const text = (key: keyof RegisterForm, label: string, extra: { required?: boolean; placeholder?: string; type?: string } = {}) => (
    <label>
      {label}
      <input name={key} type={extra.type ?? 'text'} required={extra.required} placeholder={extra.placeholder} value={form[key] as string} onChange={(e) => set({ [key]: e.target.value })} />
    </label>
  );
  const families = useFetch<Array<{ model_name: string; is_builtin: boolean }>>(type === 'LLM' ? '/v1/model_registrations/LLM' : null);
  const abilities = ABILITIES[type];

  return (
    <div className="grid">
      <label>
        Model name
        <input name="model_name" required readOnly={lockName} value={form.model_name} onChange={(e) => set({ model_name: e.target.value })} />
      </label>
      {(type === 'LLM' || type === 'flexible') && text('model_description', 'Description')}
      {type === 'LLM' && text('context_length', 'Context length', { type: 'number' })}
      {type === 'embedding' && text('dimensions', 'Dimensions', { type: 'number', required: true })}
      {(type === 'embedding' || type === 'rerank') && text('max_tokens', 'Max tokens', { type: 'number' })}
      {type === 'rerank' && text('rerank_type', 'Reranker type', { placeholder: 'normal' })}
      {(type === 'LLM' || type === 'embedding' || type === 'rerank') && text('languages', 'Languages (comma separated)')}
      {type === 'LLM' && (
        <label>
          Model family
          <input name="model_family" list="llm-families" required value={form.model_family} onChange={(e) => set({ model_family: e.target.value })} />
          <datalist id="llm-families">
            {(families.data ?? []).filter((f) => f.is_builtin).map((f) => (
              <option key={f.model_name} value={f.model_name} />
            ))}
          </datalist>
        </label>
      )}
      {type === 'LLM' && (
        // Xinference's form has it: a chat model of a family that is not built in needs its own.
        <div className="field wide">
          <label htmlFor="register-fields-chat-template">Chat template (Jinja; empty: the family&apos;s)</label>
          <textarea id="register-fields-chat-template" name="chat_template" rows={4} value={form.chat_template} onChange={(e) => set({ chat_template: e.target.value })} />
        </div>
      )}
      {(type === 'image' || type === 'audio' || type === 'video') && text('model_family', 'Model family', { required: true })}
      {(type === 'image' || type === 'audio' || type === 'video' || type === 'flexible') && text('model_uri', 'Model path or URI', { placeholder: '/models/my-model' })}
      {(type === 'image' || type === 'audio' || type === 'video') && text('model_id', 'Hub model id', { placeholder: 'org/name' })}
      {type === 'flexible' && (
        <>
          <label>
            Launcher
            <input name="launcher" list="launchers" required value={form.launcher} onChange={(e) => set({ launcher: e.target.value })} />
            <datalist id="launchers">
              <option value="python" />
              <option value="sklearn" />
              <option value="transformers" />
            </datalist>
          </label>
          <div className="field wide">
            <label htmlFor="register-fields-launcher-arguments-json">Launcher arguments (JSON)</label>
            <textarea id="register-fields-launcher-arguments-json" name="launcher_args" rows={3} value={form.launcher_args} onChange={(e) => set({ launcher_args: e.target.value })} />
          </div>
        </>
      )}
      {abilities && (
        <fieldset className="wide abilities">
          <legend>Abilities</legend>
          {abilities.map((a) => (
            <label key={a} className="check">
              <input type="checkbox" checked={form.abilities.includes(a)} onChange={(e) => set({ abilities: e.target.checked ? [...form.abilities, a] : form.abilities.filter((x) => x !== a) })} /> {a}
            </label>
          ))}
        </fieldset>
      )}
      {(type === 'LLM' || type === 'embedding' || type === 'rerank') && <Specs type={type} specs={form.specs} onChange={(specs) => set({ specs })} />}
    </div>
  );
}

function Specs({ type, specs, onChange }: { type: ModelType; specs: SpecRow[]; onChange: (specs: SpecRow[]) => void }) {
  const update = (i: number, patch: Partial<SpecRow>) => onChange(specs.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  return (
    <fieldset className="wide specs">
      <legend>Model specs</legend>
      {specs.map((s, i) => (
        <div className="spec" key={i}>
          <label>
            Format
            <input value={s.model_format} onChange={(e) => update(i, { model_format: e.target.value })} />
          </label>
          {type === 'LLM' && (
            <label>
              Size (billions)
              <input value={s.model_size_in_billions} required onChange={(e) => update(i, { model_size_in_billions: e.target.value })} />
            </label>
          )}
          <label>
            Quantization
            <input value={s.quantization} onChange={(e) => update(i, { quantization: e.target.value })} />
          </label>
          <label className="wide">
            Model path or URI
            <input name={`model_uri_${i}`} value={s.model_uri} placeholder="/models/my-model" onChange={(e) => update(i, { model_uri: e.target.value })} />
          </label>
          {specs.length > 1 && (
            <button type="button" onClick={() => onChange(specs.filter((_, j) => j !== i))}>
              Remove spec
            </button>
          )}
        </div>
      ))}
      {type === 'LLM' && (
        <button type="button" onClick={() => onChange([...specs, { ...emptySpec }])}>
          Add spec
        </button>
      )}
    </fieldset>
  );
}
