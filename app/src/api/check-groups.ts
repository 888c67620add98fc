/** Check groups (`/v1/check-groups`). */
import { api, getAllPages, path } from './client.js';
import type { CheckGroup } from './schemas.js';

/** Every check group of the account (all pages of `GET /v1/check-groups`). */
export const listCheckGroups = (signal?: AbortSignal) =>
  getAllPages<CheckGroup>('/v1/check-groups', {}, signal);

/** One check group by id (`GET /v1/check-groups/{id}`). */
export const getCheckGroup = (groupId: string | number, signal?: AbortSignal) =>
  api.get<CheckGroup>(path`/v1/check-groups/${groupId}`, undefined, signal);

/** Creates a check group; answers the saved group. */
export const createCheckGroup = (body: unknown) => api.post<CheckGroup>('/v1/check-groups', body);

/** Replaces a check group's settings (`PUT /v1/check-groups/{id}`); answers the saved group. */
export const updateCheckGroup = (groupId: string | number, body: unknown) =>
  api.put<CheckGroup>(path`/v1/check-groups/${groupId}`, body);

/** Deletes a check group (`DELETE /v1/check-groups/{id}`). */
export const deleteCheckGroup = (groupId: string | number) => api.delete(path`/v1/check-groups/${groupId}`);
