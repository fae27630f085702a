import { Link } from '../router';

/** A row of links that behaves as a tab list; the current one is marked for screen readers. */
export function Tabs({ items, current, label }: { items: ReadonlyArray<{ key: string; label: string; to: string }>; current: string; label: string }) {
  return (
    <nav className="tabs" aria-label={label}>
      {items.map((item) => (
        <Link key={item.key} to={item.to} className={item.key === current ? 'tab current' : 'tab'} aria-current={item.key === current ? 'page' : undefined}>
          {item.label}
        </Link>
      ))}
    </nav>
  );
}
