/** Status pages (`/v1/status-pages`) and their services (`/v1/status-pages/services`). */
import { api, getAllEntries, path } from './client.js';
import type { CursorPage, ServiceView, StatusPage } from './schemas.js';

/** Every status page of the account (all cursor pages of `GET /v1/status-pages`). */
export const listStatusPages = (signal?: AbortSignal) =>
  getAllEntries<StatusPage>('/v1/status-pages', signal);

/** Creates a status page; answers the saved page. */
export const createStatusPage = (body: unknown) => api.post<StatusPage>('/v1/status-pages', body);

/** Replaces a status page's settings (`PUT /v1/status-pages/{id}`); answers the saved page. */
export const updateStatusPage = (pageId: string, body: unknown) =>
  api.put<StatusPage>(path`/v1/status-pages/${pageId}`, body);

/** Deletes a status page (`DELETE /v1/status-pages/{id}`). */
export const deleteStatusPage = (pageId: string) => api.delete(path`/v1/status-pages/${pageId}`);

/** Checks the page's custom domain now; answers the page with its `customDomainStatus`. */
export const verifyCustomDomain = (pageId: string) =>
  api.post<StatusPage>(path`/v1/status-pages/${pageId}/custom-domain/verify`);

/** Every status-page service of the account, oldest first (`paginated=false`: one request). */
export async function listServices(signal?: AbortSignal): Promise<ServiceView[]> {
  const page = await api.get<CursorPage<ServiceView>>(
    '/v1/status-pages/services',
    { paginated: false },
    signal,
  );
  return page.entries;
}

/** Creates a status-page service named `name`; answers the saved service. */
export const createService = (name: string) => api.post<ServiceView>('/v1/status-pages/services', { name });

/** Renames a status-page service; answers the saved service. */
export const renameService = (serviceId: string, name: string) =>
  api.put<ServiceView>(path`/v1/status-pages/services/${serviceId}`, { name });

/** Deletes a status-page service (`DELETE /v1/status-pages/services/{id}`). */
export const deleteService = (serviceId: string) => api.delete(path`/v1/status-pages/services/${serviceId}`);
