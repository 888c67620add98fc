/**
 * The token of an emailed link (`/reset-password#token=…`, `/accept-invitation#token=…`). It travels in the
 * fragment, which browsers never send to a server (nor in a Referer); the page takes it from there and
 * removes it from the address bar at once, so it stays out of the history, bookmarks and screen shares.
 */
import { useEffect, useState } from 'preact/hooks';

/**
 * Reads `token` from the current address's fragment and replaces the address with the same one without the
 * fragment (`history.replaceState`). @returns the token, or null when the fragment has none.
 */
export function takeTokenFromFragment(): string | null {
  const hash = window.location.hash.replace(/^#/, '');
  if (!hash) return null;
  const token = new URLSearchParams(hash).get('token');
  window.history.replaceState(window.history.state, '', window.location.pathname + window.location.search);
  return token && token.length > 0 ? token : null;
}

/**
 * The token of the page's link: taken from the fragment at the first render, and again when another link
 * is pasted into the same tab (only the fragment changes then, so the page is not loaded again).
 */
export function useFragmentToken(): string | null {
  const [token, setToken] = useState(takeTokenFromFragment);
  useEffect(() => {
    const onHashChange = () => {
      const next = takeTokenFromFragment();
      if (next !== null) setToken(next);
    };
    window.addEventListener('hashchange', onHashChange);
    return () => window.removeEventListener('hashchange', onHashChange);
  }, []);
  return token;
}
