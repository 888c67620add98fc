/** Status pages (`/v1/status-pages`) and their services (`/v1/status-pages/services`). */
import { updateCheck } from './checks.js';
import { api, getAllEntries, path } from './client.js';
import type { Check, CursorPage, ServiceView, StatusPage } from './schemas.js';

/** How bad a linked check's failure is (`triggerIncident.severity`, docs/api.md, "Incident trigger"). */
export type TriggerSeverity = 'MINOR' | 'MEDIUM' | 'MAJOR' | 'CRITICAL';

/** A check linked to a service: its `triggerIncident` names the service. */
export type LinkedCheck = { id: string; name: string; severity: TriggerSeverity };

/** A status-page service as the service routes answer it: with its linked `checks` (an Outpost extension). */
export type ServiceWithChecks = ServiceView & { checks: LinkedCheck[] };

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

/** Every status-page service of the account, oldest first, with its linked checks (`paginated=false`: one request). */
export async function listServices(signal?: AbortSignal): Promise<ServiceWithChecks[]> {
  const page = await api.get<CursorPage<ServiceWithChecks>>(
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

/**
 * Links `check` to the service `service` (`PUT /v1/checks/{id}` with its `triggerIncident`): a failure of the
 * check opens an incident of `severity` on the service and the service's uptime strip counts its runs. A check
 * names one service: linking it here unlinks it from any other. `heartbeat` and `script` are required in
 * every update body, so they are sent back as they are.
 */
export const linkCheck = (check: Check, service: { id: string; name: string }, severity: TriggerSeverity) =>
  updateCheck(check.id, {
    heartbeat: (check.heartbeat as Record<string, unknown> | undefined) ?? {},
    script: typeof check.script === 'string' ? check.script : null,
    triggerIncident: {
      serviceId: service.id,
      severity,
      name: `${service.name} is down`.slice(0, 255),
      description: `The check ${check.name} is failing.`.slice(0, 10_000),
      notifySubscribers: false,
    },
  });

/** Unlinks `check` from its service (`triggerIncident: null`); the check's other fields stay. */
export const unlinkCheck = (check: Check) =>
  updateCheck(check.id, {
    heartbeat: (check.heartbeat as Record<string, unknown> | undefined) ?? {},
    script: typeof check.script === 'string' ? check.script : null,
    triggerIncident: null,
  });
