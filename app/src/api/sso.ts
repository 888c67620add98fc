/**
 * Single sign-on (docs/teams.md, "Single sign-on"): the account's OpenID Connect settings (`/v1/sso`) and
 * the start of a sign-in (`POST /auth/sso/start`). The client secret is sent, never read back.
 */
import { api, request } from './client.js';
import type { SessionInfo } from './session.js';

/** A role of the account's people and keys. */
export type Role = SessionInfo['role'];

/** What `GET /v1/sso` answers. */
export type SsoSettings = {
  enabled: boolean;
  issuer: string | null;
  clientId: string | null;
  /** A client secret is stored (it is never answered). */
  clientSecretConfigured: boolean;
  defaultRole: Role;
  groupsClaim: string | null;
  groupRoles: Record<string, Role>;
  allowedDomains: string[];
  ssoOnly: boolean;
  /** What to register at the provider as the redirect URI. */
  redirectUri: string;
  /** ISO 8601; null while single sign-on is off. */
  updatedAt: string | null;
};

/** The body of `PUT /v1/sso`; `clientSecret` omitted keeps the stored one. */
export type SsoSettingsBody = {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  defaultRole: Role;
  groupsClaim: string | null;
  groupRoles: Record<string, Role>;
  allowedDomains: string[];
  ssoOnly: boolean;
};

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
