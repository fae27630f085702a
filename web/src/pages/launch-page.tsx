import { useMemo, useState } from 'react';
import { ErrorBanner } from '../components/error-banner';
import { useFavourites } from '../favourites';
import { Tabs } from '../components/tabs';
import type { ModelType } from '../model-types';
import { useFetch } from '../use-fetch';
import { LaunchDrawer } from './launch-drawer';
import { LAUNCH_TABS } from './hub-page';

/** One item of `GET /v1/model_registrations/<type>?detailed=true`. */
export interface Registration {
  model_name: string;
  model_description?: string | null;
  model_ability?: string[];
  model_lang?: string[];
  language?: string[];
  is_builtin: boolean;
  model_specs?: Array<{ cache_status?: boolean }>;
  launcher?: string;
}

const abilitiesOf = (r: Registration): string[] => r.model_ability ?? [];
const isCached = (r: Registration) => (r.model_specs ?? []).some((s) => s.cache_status === true);

/** Cards per registration of a type, with search and filters; a card opens the launch drawer. */
export function LaunchPage({ type }: { type: ModelType }) {
  const { data, error, loading } = useFetch<Registration[]>(`/v1/model_registrations/${type}?detailed=true`);
  const [search, setSearch] = useState('');
  const [ability, setAbility] = useState('');
  const [status, setStatus] = useState<'all' | 'cached' | 'custom' | 'favourite'>('all');
  const favourites = useFavourites(type);
  const [chosen, setChosen] = useState<Registration | null>(null);

  const abilities = useMemo(() => [...new Set((data ?? []).flatMap(abilitiesOf))].sort(), [data]);
  const shown = useMemo(() => {
    const needle = search.trim().toLowerCase();
    return (data ?? []).filter(
      (r) =>
        (!needle || r.model_name.toLowerCase().includes(needle) || (r.model_description ?? '').toLowerCase().includes(needle)) &&
        (!ability || abilitiesOf(r).includes(ability)) &&
        (status === 'all' || (status === 'cached' ? isCached(r) : status === 'favourite' ? favourites.has(r.model_name) : !r.is_builtin)),
    );
  }, [data, search, ability, status, favourites]);

  return (
    <section>
      <h1>Launch a model</h1>
      <Tabs label="Model types" current={type} items={LAUNCH_TABS} />
      <div className="filters">
        <label>
          Search
          <input type="search" value={search} placeholder="Name or description" onChange={(e) => setSearch(e.target.value)} />
        </label>
        {abilities.length > 0 && (
          <div className="field">
            <label htmlFor="launch-page-ability">Ability</label>
            <select id="launch-page-ability" value={ability} onChange={(e) => setAbility(e.target.value)}>
              <option value="">Any</option>
              {abilities.map((a) => (
                <option key={a}>{a}</option>
              ))}
            </select>
          </div>
        )}
        <div className="field">
          <label htmlFor="launch-page-show">Show</label>
          <select id="launch-page-show" value={status} onChange={(e) => setStatus(e.target.value as typeof status)}>
            <option value="all">All</option>
            <option value="cached">Downloaded</option>
            <option value="custom">Custom only</option>
            <option value="favourite">Favourites</option>
          </select>
        </div>
      </div>
      <ErrorBanner error={error} />
      {loading && !data && <p className="loading">Loading…</p>}
      {data && shown.length === 0 && <p className="empty">No model matches.</p>}
      <ul className="cards">
        {shown.map((r) => (
          <li key={r.model_name} className="card-item">
            <button type="button" className="card" data-model={r.model_name} onClick={() => setChosen(r)}>
              <strong>{r.model_name}</strong>
              {r.model_description && <span className="description">{r.model_description}</span>}
              <span className="chips">
                {!r.is_builtin && <span className="chip custom">custom</span>}
                {isCached(r) && <span className="chip cached">downloaded</span>}
                {abilitiesOf(r).map((a) => (
                  <span key={a} className="chip">
                    {a}
                  </span>
                ))}
              </span>
            </button>
            <button
              type="button"
              className="star"
              aria-pressed={favourites.has(r.model_name)}
              aria-label={`Favourite ${r.model_name}`}
              title={favourites.has(r.model_name) ? 'Remove from favourites' : 'Add to favourites'}
              onClick={() => favourites.toggle(r.model_name)}
            >
              {favourites.has(r.model_name) ? '★' : '☆'}
            </button>
          </li>
        ))}
      </ul>
      {chosen && <LaunchDrawer key={chosen.model_name} type={type} registration={chosen} onClose={() => setChosen(null)} />}
    </section>
  );
}
