import { useState, type ReactNode } from 'react';
import { session } from './api/session';
import { Link, useLocation } from './router';

const SECTIONS = [
  { to: '/ui/launch/LLM', prefix: '/ui/launch', label: 'Launch model' },
  { to: '/ui/running', prefix: '/ui/running', label: 'Running models' },
  { to: '/ui/register/LLM', prefix: '/ui/register', label: 'Register model' },
  { to: '/ui/dashboard', prefix: '/ui/dashboard', label: 'Dashboard' },
  { to: '/ui/usage', prefix: '/ui/usage', label: 'Usage' },
  { to: '/ui/cluster', prefix: '/ui/cluster', label: 'Cluster' },
];
// Only with authentication on: without it there is nobody to give a key to.
const AUTH_SECTIONS = [
  { to: '/ui/keys', prefix: '/ui/keys', label: 'API keys' },
  { to: '/ui/users', prefix: '/ui/users', label: 'Users' },
];

/** Side menu on a laptop, a collapsible top bar on a phone; the page itself in <main>. */
export function Layout({ authEnabled, children }: { authEnabled: boolean; children: ReactNode }) {
  const { path } = useLocation();
  const [open, setOpen] = useState(false);
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="sidebar">
        <div className="brand">
          <span>Hangar</span>
          <button type="button" className="menu-toggle" aria-expanded={open} aria-controls="menu" onClick={() => setOpen(!open)}>
            Menu
          </button>
        </div>
        <nav id="menu" aria-label="Sections" className={open ? 'open' : ''}>
          {[...SECTIONS, ...(authEnabled ? AUTH_SECTIONS : [])].map((s) => (
            <Link key={s.to} to={s.to} aria-current={path.startsWith(s.prefix) ? 'page' : undefined} onClick={() => setOpen(false)}>
              {s.label}
            </Link>
          ))}
          {/* With auth on, /docs needs admin and a browser cannot send the bearer header to it. */}
          {!authEnabled && (
            <a href="/docs" target="_blank" rel="noreferrer">
              API docs
            </a>
          )}
          {authEnabled && (
            <button type="button" className="logout" onClick={() => session.signOut()}>
              Log out
            </button>
          )}
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
