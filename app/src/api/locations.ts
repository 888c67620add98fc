/** Private locations (`/v1/private-locations`), their keys, and the agents serving them (`/v1/agents`). */
import { api, path } from './client.js';
import type { Agent, AgentErrorReport, PrivateLocation, PrivateLocationKey } from './schemas.js';

export const listPrivateLocations = (signal?: AbortSignal) =>
  api.get<PrivateLocation[]>('/v1/private-locations', undefined, signal);

export const getPrivateLocation = (locationId: string, signal?: AbortSignal) =>
  api.get<PrivateLocation>(path`/v1/private-locations/${locationId}`, undefined, signal);

export const createPrivateLocation = (body: unknown) =>
  api.post<PrivateLocation>('/v1/private-locations', body);

export const updatePrivateLocation = (locationId: string, body: unknown) =>
  api.put<PrivateLocation>(path`/v1/private-locations/${locationId}`, body);

export const deletePrivateLocation = (locationId: string) =>
  api.delete(path`/v1/private-locations/${locationId}`);

/** A new key of the location: its `rawKey` is in this answer only. */
export const createLocationKey = (locationId: string) =>
  api.post<PrivateLocationKey>(path`/v1/private-locations/${locationId}/keys`);

export const deleteLocationKey = (locationId: string, keyId: string) =>
  api.delete(path`/v1/private-locations/${locationId}/keys/${keyId}`);

export const listAgents = (signal?: AbortSignal) => api.get<Agent[]>('/v1/agents', undefined, signal);

export const getAgent = (agentId: string, signal?: AbortSignal) =>
  api.get<Agent>(path`/v1/agents/${agentId}`, undefined, signal);

export const listAgentErrorReports = (
  agentId: string,
  query: { limit: number; page: number },
  signal?: AbortSignal,
) => api.get<AgentErrorReport[]>(path`/v1/agents/${agentId}/error-reports`, query, signal);
