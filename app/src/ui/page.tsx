import type { ComponentChildren } from 'preact';
import { ApiError } from '../api/client.js';

/** A page's heading row: the title (the page's one h1) and its actions. */
export function PageHeader({ title, children }: { title: ComponentChildren; children?: ComponentChildren }) {
  return (
    <div class="page-header">
      <h1>{title}</h1>
      {children ? <div class="page-actions">{children}</div> : null}
    </div>
  );
}

/** Shown while the first load of a page runs (later loads keep the data on screen). */
export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

/** An error as a notice: the service's message, with its code when there is one. */
export function ErrorNotice({ error, title = 'Something went wrong' }: { error: Error; title?: string }) {
  const code = error instanceof ApiError ? error.code : undefined;
  const notFound = error instanceof ApiError && error.status === 404;
  return (
    <div class="notice notice-error" role="alert">
      <strong>{notFound ? 'Not found' : title}</strong>
      <p>
        {notFound ? 'Nothing with this id exists in your account.' : error.message}
        {code && !notFound ? <code class="error-code"> {code}</code> : null}
      </p>
    </div>
  );
}

/** A short message for an empty list, with what to do about it. */
export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}
