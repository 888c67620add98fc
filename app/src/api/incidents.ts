/** Incidents (`/v1/incidents`) and their updates (docs/status-pages.md). */
import { api, getAllPages, path } from './client.js';
import type { IncidentUpdateView, IncidentView } from './schemas.js';

export const listIncidents = (signal?: AbortSignal) => getAllPages<IncidentView>('/v1/incidents', {}, signal);

/** One incident with every update (not only the newest). */
export const getIncident = (incidentId: string, signal?: AbortSignal) =>
  api.get<IncidentView>(path`/v1/incidents/${incidentId}`, { includeAllIncidentUpdates: true }, signal);

export const createIncident = (body: unknown) => api.post<IncidentView>('/v1/incidents', body);

export const updateIncident = (incidentId: string, body: unknown) =>
  api.put(path`/v1/incidents/${incidentId}`, body);

export const deleteIncident = (incidentId: string) => api.delete(path`/v1/incidents/${incidentId}`);

export const postIncidentUpdate = (incidentId: string, body: unknown) =>
  api.post<IncidentUpdateView[]>(path`/v1/incidents/${incidentId}/updates`, body);
