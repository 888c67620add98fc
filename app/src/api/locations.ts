/** Private locations (`/v1/private-locations`), their keys, and the agents serving them (`/v1/agents`). */
import { api, path } from './client.js';
import type { Agent, AgentErrorReport, PrivateLocation, PrivateLocationKey } from './schemas.js';

/** Every private location of the account (`GET /v1/private-locations`). */
export const listPrivateLocations = (signal?: AbortSignal) =>
  api.get<PrivateLocation[]>('/v1/private-locations', undefined, signal);

/** One private location by id, with its keys (`GET /v1/private-locations/{id}`). */
export const getPrivateLocation = (locationId: string, signal?: AbortSignal) =>
  api.get<PrivateLocation>(path`/v1/private-locations/${locationId}`, undefined, signal);

/** Creates a private location; answers the saved location. */
export const createPrivateLocation = (body: unknown) =>
  api.post<PrivateLocation>('/v1/private-locations', body);

/** Changes a private location's name, slug or icon (`PUT /v1/private-locations/{id}`); answers the saved location. */
export const updatePrivateLocation = (locationId: string, body: unknown) =>
  api.put<PrivateLocation>(path`/v1/private-locations/${locationId}`, body);

/** Deletes a private location (`DELETE /v1/private-locations/{id}`). */
export const deletePrivateLocation = (locationId: string) =>
  api.delete(path`/v1/private-locations/${locationId}`);

/** A new key of the location: its `rawKey` is in this answer only. */
export const createLocationKey = (locationId: string) =>
  api.post<PrivateLocationKey>(path`/v1/private-locations/${locationId}/keys`);

/** Revokes one key of a private location: agents using it can no longer connect. */
export const deleteLocationKey = (locationId: string, keyId: string) =>
  api.delete(path`/v1/private-locations/${locationId}/keys/${keyId}`);

/** Every agent of the account (`GET /v1/agents`). */
export const listAgents = (signal?: AbortSignal) => api.get<Agent[]>('/v1/agents', undefined, signal);

/** One agent by id (`GET /v1/agents/{id}`). */
export const getAgent = (agentId: string, signal?: AbortSignal) =>
  api.get<Agent>(path`/v1/agents/${agentId}`, undefined, signal);

/** One page (`query.limit` per page, `query.page` from 1) of an agent's error reports. */
export const listAgentErrorReports = (
  agentId: string,
  query: { limit: number; page: number },
  signal?: AbortSignal,
) => api.get<AgentErrorReport[]>(path`/v1/agents/${agentId}/error-reports`, query, signal);
