/** Check groups (`/v1/check-groups`). */
import { api, getAllPages, path } from './client.js';
import type { CheckGroup } from './schemas.js';

export const listCheckGroups = (signal?: AbortSignal) =>
  getAllPages<CheckGroup>('/v1/check-groups', {}, signal);

export const getCheckGroup = (groupId: string | number, signal?: AbortSignal) =>
  api.get<CheckGroup>(path`/v1/check-groups/${groupId}`, undefined, signal);

export const createCheckGroup = (body: unknown) => api.post<CheckGroup>('/v1/check-groups', body);

export const updateCheckGroup = (groupId: string | number, body: unknown) =>
  api.put<CheckGroup>(path`/v1/check-groups/${groupId}`, body);

export const deleteCheckGroup = (groupId: string | number) => api.delete(path`/v1/check-groups/${groupId}`);
