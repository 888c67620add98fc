import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../context.js';
import { badField } from '../platform/http/errors.js';
import { iso } from '../platform/http/pagination.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import { AuditEntrySchema, AuditLogQuery } from './schemas.js';
import { type AuditFilter, AuditQueries, type AuditRow } from './store.js';

/** An entry as `GET /v1/audit-log` answers it. */
function presentEntry(row: AuditRow) {
  return {
    id: row.id,
    occurredAt: iso(Number(row.occurred_at)),
    actor: {
      kind: row.actor_kind as 'api-key' | 'user' | 'private-location',
      id: row.actor_id,
      name: row.actor_name,
      role: row.actor_role,
    },
    action: row.action,
    resourceType: row.resource_type,
    resourceId: row.resource_id,
    before: row.before === null ? null : (JSON.parse(row.before) as unknown),
    after: row.after === null ? null : (JSON.parse(row.after) as unknown),
    ip: row.ip,
    userAgent: row.user_agent,
  };
}

/**
 * A time of the query in epoch ms.
 * @throws HttpError 400 naming the field when it is not a date-time.
 */
function timeOf(field: 'from' | 'to', value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw badField(field, 'is not an ISO 8601 date-time', 'format', 'querystring');
  return ms;
}

/**
 * `GET /v1/audit-log` [admin] (docs/teams.md, "Audit log"; docs/api.md, "Pagination"): the account's entries,
 * newest first, filtered by `actor` (the principal's id), `resourceType`, `resourceId`, `action` and the time
 * range [`from`, `to`); `limit` (1–100, default 20) per page. A page followed by more answers `x-next-id`, the
 * cursor of the next page, and `link` (`rel="next"`) with its path; the body is the array of entries.
 * @throws HttpError 400 naming `nextId`, `from` or `to` when it is not one this service takes.
 */
export async function auditLogRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const queries = new AuditQueries(ctx.db);
  app.get(
    '/v1/audit-log',
    {
      config: { permission: 'admin' },
      schema: {
        tags: ['audit-log'],
        summary: 'List the audit log',
        description:
          'Who changed what, when and from where, newest first. A page followed by more answers `x-next-id` (its cursor, sent back as `nextId` with the same filters and `limit`) and `link` (`rel="next"`).',
        querystring: AuditLogQuery,
        response: { 200: Type.Array(AuditEntrySchema) },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const filter: AuditFilter = {
        actorId: query.actor,
        resourceType: query.resourceType,
        resourceId: query.resourceId,
        action: query.action,
        fromMs: timeOf('from', query.from),
        toMs: timeOf('to', query.to),
      };
      const page = await queries.page(request.accountId, filter, {
        limit: query.limit,
        nextId: query.nextId,
      });
      if (page.nextId !== null) {
        const params = new URLSearchParams();
        for (const [name, value] of Object.entries(query)) {
          if (name !== 'nextId' && value !== undefined) params.set(name, String(value));
        }
        params.set('nextId', page.nextId);
        reply.header('x-next-id', page.nextId);
        reply.header('link', `</v1/audit-log?${params.toString()}>; rel="next"`);
      }
      return page.rows.map(presentEntry);
    },
  );
}
