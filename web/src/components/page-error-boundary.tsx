import { Component, type ReactNode } from 'react';

/**
 * A page that throws while it draws (an answer of a shape it does not know, say from a
 * server of another version) shows what happened, in the layout, instead of leaving the
 * whole app blank; the menu still works, and moving to another page starts afresh
 * (the boundary is keyed by the path).
 */
export class PageErrorBoundary extends Component<{ children: ReactNode }, { error: Error | null }> {
  override state: { error: Error | null } = { error: null };

  static getDerivedStateFromError(error: unknown): { error: Error } {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override render(): ReactNode {
    const { error } = this.state;
    if (!error) return this.props.children;
    return (
      <section>
        <h1>This page failed</h1>
        <div className="banner error" role="alert" data-testid="page-failed">
          It could not show what the service answered: {error.message}. The service and this page may be of different
          versions; reload the page, or open another one from the menu.
        </div>
      </section>
    );
  }
}
