/**
 * The browser's session (`/auth/session`): the cookie is httpOnly, so this code never sees it; the API key
 * goes in the sign-in request's body only and is not kept.
 */
import { ApiError, request } from './client.js';

/**
 * What `GET` and `POST /auth/session` answer for a signed-in browser. Written here: the service has no
 * schema of it (its routes are left out of the OpenAPI document), only a type in a module of its web layer
 * (src/service/platform/web/sessions.ts) that pulls in Fastify.
 */
export type SessionInfo = {
  accountId: string;
  accountName: string;
  /** Sent back in `x-csrf-token` on every state-changing request. */
  csrfToken: string;
  /** ISO 8601. */
  expiresAt: string;
  /** The first characters of the API key the session was opened with, to tell keys apart; null for a person. */
  keyPrefix: string | null;
  /** The person signed in; null for a session opened with an API key. */
  user: { id: string; name: string; email: string } | null;
  /** What the session may do (docs/teams.md, "Roles"): the app shows only that. */
  role: 'READ_ONLY' | 'READ_WRITE' | 'ADMIN' | 'OWNER';
};

/** The session of this browser, or null when signed out. */
export async function fetchSession(): Promise<SessionInfo | null> {
  try {
    return await request<SessionInfo>('GET', '/auth/session');
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}

/**
 * Exchanges an API key for a session cookie. The key goes in this one request's body and is not kept.
 * @throws ApiError 401 for a wrong key, 429 after too many failures, 400 for a malformed one.
 */
export async function signIn(apiKey: string): Promise<SessionInfo> {
  return request<SessionInfo>('POST', '/auth/session', { body: { apiKey } });
}

/** Ends this browser's session (the cookie is cleared and the session deleted on the service). */
export async function signOut(): Promise<void> {
  await request<void>('DELETE', '/auth/session');
}
