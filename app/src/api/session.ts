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

/** The answer to a right email and password when the person has two-factor authentication on. */
export type TwoFactorChallenge = { twoFactorRequired: true; challenge: string };

/**
 * Signs a person in with their email and password (`POST /auth/session`): the session, or the challenge of
 * the two-factor step. Neither is kept by this module.
 * @throws ApiError 401 for a wrong email or password (one message for both), 429 after too many failures.
 */
export async function signInWithPassword(
  email: string,
  password: string,
): Promise<SessionInfo | TwoFactorChallenge> {
  return request<SessionInfo | TwoFactorChallenge>('POST', '/auth/session', { body: { email, password } });
}

/**
 * The two-factor step (`POST /auth/session/two-factor`): `code` is the authenticator's 6 digits or a
 * recovery code. @throws ApiError 401 for a wrong code or an ended challenge.
 */
export async function signInTwoFactor(challenge: string, code: string): Promise<SessionInfo> {
  return request<SessionInfo>('POST', '/auth/session/two-factor', { body: { challenge, code } });
}

/** Asks for a password-reset email (`POST /auth/password-reset`): the same answer whether the email is known. */
export async function requestPasswordReset(email: string): Promise<void> {
  await request<unknown>('POST', '/auth/password-reset', { body: { email } });
}

/** Sets a new password with the token of a reset email; 400 naming `token` when it is not live. */
export async function confirmPasswordReset(token: string, password: string): Promise<void> {
  await request<void>('POST', '/auth/password-reset/confirm', { body: { token, password } });
}

/** Who an invitation is for (`GET /auth/invitations/{token}`); 404 when it is used, withdrawn or expired. */
export async function fetchInvitation(token: string): Promise<{ email: string; accountName: string }> {
  return request('GET', `/auth/invitations/${encodeURIComponent(token)}`);
}

/** Accepts an invitation with the person's name and password: the new session (`POST /auth/invitations/accept`). */
export async function acceptInvitation(token: string, name: string, password: string): Promise<SessionInfo> {
  return request<SessionInfo>('POST', '/auth/invitations/accept', { body: { token, name, password } });
}

/** The shortest and longest password the service takes, in characters. */
export const PASSWORD_LENGTH = { min: 12, max: 128 } as const;
