/** Incidents (`/v1/incidents`) and their updates (docs/status-pages.md). */
import { api, getAllPages, path } from './client.js';
import type { IncidentUpdateView, IncidentView } from './schemas.js';

/** Every incident of the account, each with its newest update (all pages of `GET /v1/incidents`). */
export const listIncidents = (signal?: AbortSignal) => getAllPages<IncidentView>('/v1/incidents', {}, signal);

/** One incident with every update (not only the newest). */
export const getIncident = (incidentId: string, signal?: AbortSignal) =>
  api.get<IncidentView>(path`/v1/incidents/${incidentId}`, { includeAllIncidentUpdates: true }, signal);

/** Opens an incident with its first update; answers the saved incident. */
export const createIncident = (body: unknown) => api.post<IncidentView>('/v1/incidents', body);

/** Changes an incident's name, impact or services (`PUT /v1/incidents/{id}`). */
export const updateIncident = (incidentId: string, body: unknown) =>
  api.put(path`/v1/incidents/${incidentId}`, body);

/** Deletes an incident and its updates (`DELETE /v1/incidents/{id}`). */
export const deleteIncident = (incidentId: string) => api.delete(path`/v1/incidents/${incidentId}`);

/** Posts an update to an incident (a status and a description); answers the incident's updates. */
export const postIncidentUpdate = (incidentId: string, body: unknown) =>
  api.post<IncidentUpdateView[]>(path`/v1/incidents/${incidentId}/updates`, body);
