import { useCallback, useState } from 'react';

/** Model names the user starred, per model type, kept in this browser (localStorage), as Xinference's UI does. */
const KEY = 'hangar.favourites';

function load(): Record<string, string[]> {
  try {
    const value = JSON.parse(localStorage.getItem(KEY) ?? '{}') as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, string[]>) : {};
  } catch {
    return {};
  }
}

export function useFavourites(type: string): { has: (name: string) => boolean; toggle: (name: string) => void } {
  const [all, setAll] = useState(load);
  const names = all[type] ?? [];
  const toggle = useCallback(
    (name: string) => {
      const current = load();
      const list = current[type] ?? [];
      const next = { ...current, [type]: list.includes(name) ? list.filter((n) => n !== name) : [...list, name] };
      localStorage.setItem(KEY, JSON.stringify(next));
      setAll(next);
    },
    [type],
  );
  return { has: (name) => names.includes(name), toggle };
}
