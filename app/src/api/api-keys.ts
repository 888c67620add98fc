/** The account's API keys (`/v1/api-keys`): listed by their first characters, the key itself shown once. */
import { api, path } from './client.js';
import type { ApiKey, CreatedApiKey } from './schemas.js';

/** Every key of the account, oldest first (`GET /v1/api-keys`); never a key itself. */
export const listApiKeys = (signal?: AbortSignal) => api.get<ApiKey[]>('/v1/api-keys', undefined, signal);

/** Creates a key named `name` (`POST /v1/api-keys`); the answer's `rawKey` is the key, in this answer only. */
export const createApiKey = (name: string) => api.post<CreatedApiKey>('/v1/api-keys', { name });

/**
 * Revokes key `id` (`DELETE /v1/api-keys/{id}`); 409 `OUTPOST_ERR_API_KEY_IN_USE` for the key this browser's
 * session was opened with.
 */
export const revokeApiKey = (id: string) => api.delete(path`/v1/api-keys/${id}`);
