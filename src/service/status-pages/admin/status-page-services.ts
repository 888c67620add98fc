import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { badField, HttpError, notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/pagination.js';
import type { ServiceView } from '../incidents/schema.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc } from '../../platform/store/schema.js';
import { triggerChecks } from '../public/page-model.js';
import { checksMentioningServices } from '../public/page-queries.js';
import type { ServiceWithChecks } from './schema.js';
import { PageQueries, ServiceQueries, type ServiceRow } from './store.js';

/** A check linked to a service, as a service's answer lists it. */
type LinkedCheckView = ServiceWithChecks['checks'][number];

/**
 * The account's checks whose `triggerIncident` names a service, by service id, each list by check name
 * (then id). One query (page-queries.ts, `checksMentioningServices`).
 */
export async function linkedChecksOf(
  db: Kysely<Database>,
  accountId: string,
): Promise<Map<string, LinkedCheckView[]>> {
  const byService = new Map<string, LinkedCheckView[]>();
  for (const { id, doc } of triggerChecks(await checksMentioningServices(db, accountId))) {
    const list = byService.get(doc.triggerIncident.serviceId) ?? [];
    list.push({ id, name: doc.name, severity: doc.triggerIncident.severity });
    byService.set(doc.triggerIncident.serviceId, list);
  }
  for (const list of byService.values())
    list.sort((a, b) => a.name.localeCompare(b.name) || (a.id < b.id ? -1 : 1));
  return byService;
}

/** A service row as the API shows it: `{ name, id, accountId, created_at, updated_at }`. */
export function presentService(row: ServiceRow): ServiceView {
  return {
    name: row.name,
    id: row.id,
    accountId: row.account_id,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at),
  };
}

/**
 * Checks that every `{ id }` names a status-page service of the account, once.
 * Returns the services in the order given.
 * @param field dotted path of the array in the body, for errors (`cards[0].services`).
 * @throws HttpError 400 naming `<field>[i].id` for an unknown or repeated id.
 */
export async function resolveServices(
  db: Kysely<Database>,
  accountId: string,
  refs: readonly { id: string }[],
  field: string,
): Promise<ServiceView[]> {
  if (refs.length === 0) return [];
  const rows = await new ServiceQueries(db).byIds(
    accountId,
    refs.map((r) => r.id),
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const seen = new Set<string>();
  return refs.map((ref, i) => {
    const row = byId.get(ref.id);
    if (!row)
      throw badField(
        `${field}[${i}].id`,
        `is not a status-page service of this account: ${ref.id}`,
        'exists',
      );
    if (seen.has(ref.id)) throw badField(`${field}[${i}].id`, `lists service ${ref.id} twice`, 'uniqueItems');
    seen.add(ref.id);
    return presentService(row);
  });
}

/** Loads services by id (of one account) into a map; ids not found are absent. */
export async function servicesById(
  db: Kysely<Database>,
  accountId: string,
  ids: Iterable<string>,
): Promise<Map<string, ServiceView>> {
  const rows = await new ServiceQueries(db).byIds(accountId, [...new Set(ids)]);
  return new Map(rows.map((r) => [r.id, presentService(r)]));
}

/**
 * Status-page services (docs/api.md, "Status pages and services"), always scoped to
 * one account. Listed by `(created_at, id)` with an opaque cursor.
 */
export class StatusPageServices {
  readonly #db: Kysely<Database>;
  readonly #rows: ServiceQueries;
  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.#rows = new ServiceQueries(db);
  }

  /** Creates a service; `updated_at` stays null until its first update. */
  async create(accountId: string, name: string, nowMs: number): Promise<ServiceView> {
    const row: ServiceRow = {
      id: randomUUID(),
      account_id: accountId,
      name,
      created_at: nowMs,
      updated_at: null,
    };
    await this.#rows.insert(row);
    return presentService(row);
  }

  /** @throws HttpError 404 when the service is not in the account. */
  async get(accountId: string, id: string): Promise<ServiceView> {
    const row = await this.#rows.get(accountId, id);
    if (!row) throw notFound('status-page service', id);
    return presentService(row);
  }

  /**
   * The service with its linked checks (`checks`: those whose `triggerIncident` names it, by name).
   * @throws HttpError 404 when the service is not in the account.
   */
  async getWithChecks(accountId: string, id: string): Promise<ServiceWithChecks> {
    const [service, linked] = await Promise.all([
      this.get(accountId, id),
      linkedChecksOf(this.#db, accountId),
    ]);
    return { ...service, checks: linked.get(id) ?? [] };
  }

  /**
   * One page of services from the cursor on, or all of them (`paginated`
   * false: `nextId` is then null), each with its linked checks.
   * @throws HttpError 400 naming `nextId` for a cursor this service did not answer.
   */
  async list(
    accountId: string,
    query: { limit: number; nextId?: string; paginated: boolean },
  ): Promise<{ entries: ServiceWithChecks[]; nextId: string | null }> {
    const [page, linked] = await Promise.all([
      query.paginated
        ? this.#rows.page(accountId, query)
        : this.#rows.all(accountId, query.nextId).then((rows) => ({ rows, nextId: null })),
      linkedChecksOf(this.#db, accountId),
    ]);
    const entries = page.rows.map((row) => ({ ...presentService(row), checks: linked.get(row.id) ?? [] }));
    return { entries, nextId: page.nextId };
  }

  /** Renames a service. @throws HttpError 404 when it is not in the account. */
  async rename(accountId: string, id: string, name: string, nowMs: number): Promise<ServiceView> {
    if (!(await this.#rows.rename(accountId, id, name, nowMs))) throw notFound('status-page service', id);
    return this.get(accountId, id);
  }

  /**
   * Deletes a service; incidents that listed it just lose the link.
   * @throws HttpError 404 when it is not in the account; 409 while a card of a
   * status page shows it (`attributes.statusPageIds`), so no page changes silently.
   */
  async delete(accountId: string, id: string): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      const services = new ServiceQueries(trx);
      if (!(await services.get(accountId, id))) throw notFound('status-page service', id);
      // Cards live in the page document; the LIKE only narrows what is parsed.
      const pages = await new PageQueries(trx).mentioning(accountId, id);
      const users = pages
        .filter((p) => readDoc(p.doc).cards.some((c) => c.serviceIds.includes(id)))
        .map((p) => p.id);
      if (users.length > 0) {
        throw new HttpError(
          'OUTPOST_ERR_STATUS_PAGE_SERVICE_IN_USE',
          `status-page service ${id} is shown on status pages ${users.join(', ')}; remove it from their cards first`,
          {
            id,
            statusPageIds: users,
          },
        );
      }
      await services.delete(accountId, id);
    });
  }
}
