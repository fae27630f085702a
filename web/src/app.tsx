import { lazy, Suspense, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { getJson } from './api/client';
import { session } from './api/session';
import { PageErrorBoundary } from './components/page-error-boundary';
import { Layout } from './layout';
import { ClusterPage } from './pages/cluster-page';
import { KeysPage } from './pages/keys-page';
import { UsersPage } from './pages/users-page';
import { LaunchPage } from './pages/launch-page';
import { HubPage } from './pages/hub-page';
import { LoginPage } from './pages/login-page';
import { RegisterPage } from './pages/register-page';
import { RunningPage } from './pages/running-page';
import { TryPage } from './pages/try-page';

// The dashboards carry the charting library (ECharts): loaded when first opened, not with every page.
const OverviewPage = lazy(() => import('./dashboard/overview-page').then((m) => ({ default: m.OverviewPage })));
const ModelStatsPage = lazy(() => import('./dashboard/model-page').then((m) => ({ default: m.ModelStatsPage })));
const UsagePage = lazy(() => import('./dashboard/usage-page').then((m) => ({ default: m.UsagePage })));
import { isModelType } from './model-types';
import { match, navigate, useLocation } from './router';

const HOME = '/ui/launch/LLM';

/**
 * Asks the server whether auth is on (`/v1/cluster/auth`, public), then either shows
 * the login page (auth on, no credential: also after any 401) or the pages.
 */
export function App() {
  const [auth, setAuth] = useState<boolean | null>(null);
  const [authError, setAuthError] = useState<string | null>(null);
  const credential = useSyncExternalStore(session.subscribe, session.credential);
  const rejections = useSyncExternalStore(session.subscribe, session.rejectionCount);
  const answered = useRef(false);
  const { path } = useLocation();

  // Asked again after a 401: creating the first user on the Users page turns
  // authentication on, and the tab then showed "Not authenticated" everywhere, with no
  // login page, until a reload.
  useEffect(() => {
    getJson<{ auth: boolean }>('/v1/cluster/auth').then(
      (body) => {
        answered.current = true;
        setAuth(body.auth);
        setAuthError(null);
      },
      // Only the first answer decides whether the app can start: a later check that fails
      // (the service restarting) leaves the pages as they were.
      (e: unknown) => {
        if (!answered.current) setAuthError(e instanceof Error ? e.message : String(e));
      },
    );
  }, [rejections]);

  const needsLogin = auth === true && credential === null;
  useEffect(() => {
    if (auth === null) return;
    if (needsLogin && !path.startsWith('/ui/login')) {
      const next = path.startsWith('/ui/') ? path + location.search : HOME;
      navigate(`/ui/login?next=${encodeURIComponent(next)}`, { replace: true });
    } else if (!needsLogin && (path.startsWith('/ui/login') || !path.startsWith('/ui/') || path === '/ui/')) {
      const next = new URLSearchParams(location.search).get('next');
      navigate(next?.startsWith('/ui/') && !next.startsWith('/ui/login') ? next : HOME, { replace: true });
    }
  }, [auth, needsLogin, path]);

  if (authError) return <p className="banner error" role="alert">The service did not answer: {authError}</p>;
  if (auth === null) return <p className="loading">Loading…</p>;
  if (needsLogin) return path.startsWith('/ui/login') ? <LoginPage /> : null;
  return (
    <Layout authEnabled={auth}>
      <PageErrorBoundary key={path}>
        <Suspense fallback={<p className="loading">Loading…</p>}>
          <Page path={path} />
        </Suspense>
      </PageErrorBoundary>
    </Layout>
  );
}

function Page({ path }: { path: string }) {
  let params: Record<string, string> | null;
  if (match('/ui/launch/hub', path)) return <HubPage />;
  if ((params = match('/ui/launch/:type', path)) && isModelType(params.type)) return <LaunchPage type={params.type} />;
  if ((params = match('/ui/running/:type?', path))) return <RunningPage type={isModelType(params.type) ? params.type : null} />;
  if ((params = match('/ui/register/:type/:name?', path)) && isModelType(params.type)) return <RegisterPage type={params.type} editing={params.name ?? null} />;
  if (match('/ui/cluster', path)) return <ClusterPage />;
  if (match('/ui/dashboard', path)) return <OverviewPage />;
  if ((params = match('/ui/dashboard/models/:uid', path))) return <ModelStatsPage uid={params.uid!} window={new URLSearchParams(location.search).get('window') ?? '15m'} />;
  if (match('/ui/usage', path)) return <UsagePage />;
  if (match('/ui/keys', path)) return <KeysPage />;
  if (match('/ui/users', path)) return <UsersPage />;
  if ((params = match('/ui/try/:uid', path))) return <TryPage uid={params.uid!} />;
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is no page at <code>{path}</code>.
      </p>
    </section>
  );
}
