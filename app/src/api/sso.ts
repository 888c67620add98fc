/**
 * Single sign-on (docs/teams.md, "Single sign-on"): the account's OpenID Connect settings (`/v1/sso`) and
 * the start of a sign-in (`POST /auth/sso/start`). The client secret is sent, never read back.
 */
import { api, request } from './client.js';
import type { SsoSettings, SsoSettingsBody } from './schemas.js';
import type { SessionInfo } from './session.js';

export type { SsoSettings, SsoSettingsBody };

/** A role of the account's people and keys. */
export type Role = SessionInfo['role'];

export const getSso = (signal?: AbortSignal) => api.get<SsoSettings>('/v1/sso', undefined, signal);
export const putSso = (body: SsoSettingsBody) => api.put<SsoSettings>('/v1/sso', body);
export const deleteSso = () => api.delete('/v1/sso');

/**
 * Starts a sign-in through the provider of the account that `email` belongs to.
 * @returns where to send the browser: the provider, or back to `/sign-in?sso=unavailable`.
 */
export async function startSso(email: string): Promise<string> {
  const { redirectUrl } = await request<{ redirectUrl: string }>('POST', '/auth/sso/start', {
    body: { email },
  });
  return redirectUrl;
}
