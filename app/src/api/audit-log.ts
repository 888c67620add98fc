/** The account's audit log (`GET /v1/audit-log`, docs/teams.md, "Audit log"): who changed what, newest first. */
import { ApiError } from './client.js';
import type { AuditEntry, ErrorBody } from './schemas.js';

export type { AuditEntry };

/** The filters of the list; each left out (or empty) filters nothing. Times are ISO 8601. */
export type AuditFilter = { resourceType?: string; actor?: string; from?: string; to?: string };

/** A page of entries and the cursor of the next one (null at the end). */
export type AuditPage = { entries: AuditEntry[]; nextId: string | null };

/**
 * One page of entries matching `filter` (100 at most), from the cursor `nextId` on: the service answers the
 * next page's cursor in `x-next-id` (docs/api.md, "Pagination"), read here, which the client's JSON shorthands
 * do not expose.
 * @throws ApiError for any status of 400 or more (403 for a role below ADMIN).
 */
export async function listAuditLog(
  filter: AuditFilter,
  nextId: string | null,
  signal?: AbortSignal,
): Promise<AuditPage> {
  const query = new URLSearchParams({ limit: '50' });
  for (const [name, value] of Object.entries(filter)) if (value) query.set(name, value);
  if (nextId !== null) query.set('nextId', nextId);
  const response = await fetch(`/v1/audit-log?${query.toString()}`, {
    headers: { accept: 'application/json' },
    credentials: 'same-origin',
    ...(signal ? { signal } : {}),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    throw new ApiError(
      response.status,
      parsed as ErrorBody | undefined,
      `${response.status} ${response.statusText}`,
    );
  }
  return { entries: parsed as AuditEntry[], nextId: response.headers.get('x-next-id') };
}
