/** The account's API keys (`/v1/api-keys`): listed by their first characters, the key itself shown once. */
import { api, path } from './client.js';
import type { ApiKey, CreatedApiKey } from './schemas.js';

/** Every key of the account, oldest first (`GET /v1/api-keys`); never a key itself. */
export const listApiKeys = (signal?: AbortSignal) => api.get<ApiKey[]>('/v1/api-keys', undefined, signal);

/**
 * What `POST /v1/api-keys` takes: the key's `name`; its `role`, at most the caller's (left out: the
 * caller's); `expiresAt`, ISO 8601 and in the future (left out: it never expires).
 */
export type NewApiKey = { name: string; role?: ApiKey['role']; expiresAt?: string };

/** Creates a key (`POST /v1/api-keys`); the answer's `rawKey` is the key, in this answer only. */
export const createApiKey = (key: NewApiKey) => api.post<CreatedApiKey>('/v1/api-keys', key);

/**
 * Revokes key `id` (`DELETE /v1/api-keys/{id}`); 409 `OUTPOST_ERR_API_KEY_IN_USE` for the key this browser's
 * session was opened with, 403 for a key of a stronger role than the session's.
 */
export const revokeApiKey = (id: string) => api.delete(path`/v1/api-keys/${id}`);
