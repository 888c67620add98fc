/**
 * The people of the account (`/v1/users`) and the signed-in person's own account (`/v1/users/me`):
 * password, two-factor authentication and sessions. Secrets (passwords, codes, the TOTP seed, recovery codes)
 * go in one request's body or come in one answer and are kept by no module here.
 */
import type { SessionInfo } from './session.js';
import { api, path, request } from './client.js';
import type { InvitedUser, MySession, TwoFactorEnrolment, User } from './schemas.js';

export type { InvitedUser, MySession, TwoFactorEnrolment, User };

/** A role of the account, weakest first (docs/teams.md, "Roles"). */
export type Role = SessionInfo['role'];

/** The roles, weakest first. */
export const ROLES: readonly Role[] = ['READ_ONLY', 'READ_WRITE', 'ADMIN', 'OWNER'];

/** The words shown for each role. */
export const ROLE_LABELS: Readonly<Record<Role, string>> = {
  READ_ONLY: 'Read only',
  READ_WRITE: 'Read & write',
  ADMIN: 'Admin',
  OWNER: 'Owner',
};

/** Every person of the account, oldest first (`GET /v1/users`). */
export const listUsers = (signal?: AbortSignal) => api.get<User[]>('/v1/users', undefined, signal);

/**
 * Invites `email` with `role` (at most the caller's; `POST /v1/users/invitations`): 409
 * `OUTPOST_ERR_EMAIL_TAKEN` for a person already there, 400 naming `role` for a role above the caller's.
 */
export const inviteUser = (invitation: { email: string; role: Role; name?: string }) =>
  api.post<InvitedUser>('/v1/users/invitations', invitation);

/** Changes a person's role (`PUT /v1/users/{id}`); 409 `OUTPOST_ERR_LAST_OWNER` for the last owner. */
export const changeUserRole = (id: string, role: Role) => api.put<User>(path`/v1/users/${id}`, { role });

/** Removes a person from the account (`DELETE /v1/users/{id}`); their sessions end. */
export const removeUser = (id: string) => api.delete(path`/v1/users/${id}`);

/** Ends every session of a person (`POST /v1/users/{id}/sessions/revoke`). */
export const revokeUserSessions = (id: string) =>
  request<void>('POST', path`/v1/users/${id}/sessions/revoke`, { body: {} });

/** Turns off a person's two-factor authentication (`DELETE /v1/users/{id}/two-factor`, owners only). */
export const resetUserTwoFactor = (id: string) => api.delete(path`/v1/users/${id}/two-factor`);

/** The signed-in person (`GET /v1/users/me`); 409 `OUTPOST_ERR_NOT_A_USER` for an API key's session. */
export const fetchMe = (signal?: AbortSignal) => api.get<User>('/v1/users/me', undefined, signal);

/** Changes the signed-in person's password (`PUT /v1/users/me/password`); their other sessions end. */
export const changeMyPassword = (currentPassword: string, newPassword: string) =>
  api.put<void>('/v1/users/me/password', { currentPassword, newPassword });

/** The signed-in person's live sessions (`GET /v1/users/me/sessions`). */
export const listMySessions = (signal?: AbortSignal) =>
  api.get<MySession[]>('/v1/users/me/sessions', undefined, signal);

/** Ends one of the signed-in person's sessions (`DELETE /v1/users/me/sessions/{id}`). */
export const revokeMySession = (id: string) => api.delete(path`/v1/users/me/sessions/${id}`);

/** Begins two-factor enrolment (`POST /v1/users/me/two-factor`): a new seed, not in force until confirmed. */
export const beginTwoFactor = () => api.post<TwoFactorEnrolment>('/v1/users/me/two-factor', {});

/**
 * Confirms the enrolment with a code of the authenticator app (`POST /v1/users/me/two-factor/confirm`): the
 * ten recovery codes, answered this once. A wrong code: 400 naming `code`.
 */
export const confirmTwoFactor = (code: string) =>
  api.post<{ recoveryCodes: string[] }>('/v1/users/me/two-factor/confirm', { code });

/** Turns off the signed-in person's two-factor authentication (`DELETE /v1/users/me/two-factor`). */
export const disableTwoFactor = (password: string, code: string) =>
  request<void>('DELETE', '/v1/users/me/two-factor', { body: { password, code } });
