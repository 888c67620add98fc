/**
 * The token of an emailed link (`/reset-password#token=…`, `/accept-invitation#token=…`). It travels in the
 * fragment, which browsers never send to a server (nor in a Referer); the page takes it from there and
 * removes it from the address bar at once, so it stays out of the history, bookmarks and screen shares.
 */

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
