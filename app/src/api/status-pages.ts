/** Status pages (`/v1/status-pages`) and their services (`/v1/status-pages/services`). */
import { api, getAllEntries, path } from './client.js';
import type { CursorPage, ServiceView, StatusPage } from './schemas.js';

export const listStatusPages = (signal?: AbortSignal) =>
  getAllEntries<StatusPage>('/v1/status-pages', signal);

export const createStatusPage = (body: unknown) => api.post<StatusPage>('/v1/status-pages', body);

export const updateStatusPage = (pageId: string, body: unknown) =>
  api.put<StatusPage>(path`/v1/status-pages/${pageId}`, body);

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

export const createService = (name: string) => api.post<ServiceView>('/v1/status-pages/services', { name });

export const renameService = (serviceId: string, name: string) =>
  api.put<ServiceView>(path`/v1/status-pages/services/${serviceId}`, { name });

export const deleteService = (serviceId: string) => api.delete(path`/v1/status-pages/services/${serviceId}`);
