import { randomUUID } from 'node:crypto';
import { type Kysely, type Selectable, sql } from 'kysely';
import { inKeysetOrder, keysetPage } from '../../http/cursor.js';
import { badField, HttpError, notFound } from '../../http/errors.js';
import { iso } from '../../http/pagination.js';
import type { ServiceView } from '../incidents/schema.js';
import type { Database } from '../../store/database.js';

type ServiceRow = Selectable<Database['status_page_services']>;

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
  const rows = await db
    .selectFrom('status_page_services')
    .selectAll()
    .where('account_id', '=', accountId)
    .where(
      'id',
      'in',
      refs.map((r) => r.id),
    )
    .execute();
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
  const list = [...new Set(ids)];
  if (list.length === 0) return new Map();
  const rows = await db
    .selectFrom('status_page_services')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', 'in', list)
    .execute();
  return new Map(rows.map((r) => [r.id, presentService(r)]));
}

/**
 * Status-page services (docs/api.md, "Status pages and services"), always scoped to
 * one account. Listed by `(created_at, id)` with an opaque cursor.
 */
export class ServiceStore {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
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
    await this.#db.insertInto('status_page_services').values(row).execute();
    return presentService(row);
  }

  /** @throws HttpError 404 when the service is not in the account. */
  async get(accountId: string, id: string): Promise<ServiceView> {
    const row = await this.#db
      .selectFrom('status_page_services')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('status-page service', id);
    return presentService(row);
  }

  /**
   * One page of services from the cursor on, or all of them (`paginated`
   * false: `nextId` is then null).
   * @throws HttpError 400 naming `nextId` for a cursor this service did not answer.
   */
  async list(
    accountId: string,
    query: { limit: number; nextId?: string; paginated: boolean },
  ): Promise<{ entries: ServiceView[]; nextId: string | null }> {
    const q = this.#db.selectFrom('status_page_services').selectAll().where('account_id', '=', accountId);
    if (!query.paginated) {
      return { entries: (await inKeysetOrder(q, query.nextId).execute()).map(presentService), nextId: null };
    }
    const page = await keysetPage(q, query);
    return { entries: page.rows.map(presentService), nextId: page.nextId };
  }

  /** Renames a service. @throws HttpError 404 when it is not in the account. */
  async rename(accountId: string, id: string, name: string, nowMs: number): Promise<ServiceView> {
    const res = await this.#db
      .updateTable('status_page_services')
      .set({ name, updated_at: nowMs })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (res.numUpdatedRows === 0n) throw notFound('status-page service', id);
    return this.get(accountId, id);
  }

  /**
   * Deletes a service; incidents that listed it just lose the link.
   * @throws HttpError 404 when it is not in the account; 409 while a card of a
   * status page shows it (`attributes.statusPageIds`), so no page changes silently.
   */
  async delete(accountId: string, id: string): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      const found = await trx
        .selectFrom('status_page_services')
        .select('id')
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .executeTakeFirst();
      if (!found) throw notFound('status-page service', id);
      // Cards live in the page document; the LIKE only narrows what is parsed.
      const pages = await trx
        .selectFrom('status_pages')
        .select(['id', 'doc'])
        .where('account_id', '=', accountId)
        .where(sql<boolean>`doc like ${`%${id}%`}`)
        .execute();
      const users = pages
        .filter((p) =>
          (JSON.parse(p.doc) as { cards: { serviceIds: string[] }[] }).cards.some((c) =>
            c.serviceIds.includes(id),
          ),
        )
        .map((p) => p.id);
      if (users.length > 0) {
        throw new HttpError(
          409,
          `status-page service ${id} is shown on status pages ${users.join(', ')}; remove it from their cards first`,
          {
            id,
            statusPageIds: users,
          },
        );
      }
      await trx
        .deleteFrom('status_page_services')
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .execute();
    });
  }
}
