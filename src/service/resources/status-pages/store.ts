import { type Kysely, type Selectable, sql } from 'kysely';
import { inKeysetOrder, keysetPage } from '../../http/cursor.js';
import type { StatusPageDoc } from './status-pages.js';
import type { Database } from '../../store/database.js';
import type { StoredJson } from '../../store/schema.js';

/** A status page row: its document as JSON text (cards, hashed keys); times in epoch ms. */
export type PageRow = {
  id: string;
  account_id: string;
  doc: StoredJson<StatusPageDoc>;
  created_at: number;
  updated_at: number | null;
};

/** A status-page service row. */
export type ServiceRow = Selectable<Database['status_page_services']>;

/** A cursor page query: `limit` rows from the opaque cursor `nextId` on (see http/cursor.ts). */
type CursorPage = { limit: number; nextId?: string | undefined };

const PAGE_COLUMNS = ['id', 'account_id', 'doc', 'created_at', 'updated_at'] as const;

/** The `status_pages` table's queries, every one scoped to one account. */
export class PageQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Inserts a page. @throws the driver's unique-constraint error when `url` is taken in the account. */
  async insert(row: PageRow, url: string): Promise<void> {
    await this.#db
      .insertInto('status_pages')
      .values({ ...row, url })
      .execute();
  }

  /** The page's row; undefined when it is not in the account. */
  get(accountId: string, id: string): Promise<PageRow | undefined> {
    return this.#db
      .selectFrom('status_pages')
      .select(PAGE_COLUMNS)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** One page of the account's status pages in `(created_at, id)` order from the cursor on. */
  page(accountId: string, query: CursorPage): Promise<{ rows: PageRow[]; nextId: string | null }> {
    return keysetPage(
      this.#db.selectFrom('status_pages').select(PAGE_COLUMNS).where('account_id', '=', accountId),
      query,
    );
  }

  /** Whether another page of the account (not `selfId`) uses `url`. */
  async urlTaken(accountId: string, url: string, selfId?: string): Promise<boolean> {
    let q = this.#db
      .selectFrom('status_pages')
      .select('id')
      .where('account_id', '=', accountId)
      .where('url', '=', url);
    if (selfId !== undefined) q = q.where('id', '!=', selfId);
    return (await q.executeTakeFirst()) !== undefined;
  }

  /** Pages of the account whose document mentions `text` (a narrowing LIKE; callers parse to be sure). */
  mentioning(accountId: string, text: string): Promise<Pick<PageRow, 'id' | 'doc'>[]> {
    return this.#db
      .selectFrom('status_pages')
      .select(['id', 'doc'])
      .where('account_id', '=', accountId)
      .where(sql<boolean>`doc like ${`%${text}%`}`)
      .execute();
  }

  /** Replaces the page's document and `url`. @throws the driver's unique-constraint error when `url` is taken. */
  async update(
    accountId: string,
    id: string,
    doc: StoredJson<StatusPageDoc>,
    url: string,
    nowMs: number,
  ): Promise<void> {
    await this.#db
      .updateTable('status_pages')
      .set({ doc, url, updated_at: nowMs })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }

  /** Deletes the page; false when it is not in the account. */
  async delete(accountId: string, id: string): Promise<boolean> {
    const res = await this.#db
      .deleteFrom('status_pages')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
  }
}

/** The `status_page_services` table's queries, every one scoped to one account. */
export class ServiceQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Inserts a service row. */
  async insert(row: ServiceRow): Promise<void> {
    await this.#db.insertInto('status_page_services').values(row).execute();
  }

  /** The service's row; undefined when it is not in the account. */
  get(accountId: string, id: string): Promise<ServiceRow | undefined> {
    return this.#db
      .selectFrom('status_page_services')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** The account's services among `ids`. */
  byIds(accountId: string, ids: readonly string[]): Promise<ServiceRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.#db
      .selectFrom('status_page_services')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .execute();
  }

  /** Every service of the account in `(created_at, id)` order, from the cursor `nextId` on when given. */
  all(accountId: string, nextId: string | undefined): Promise<ServiceRow[]> {
    return inKeysetOrder(
      this.#db.selectFrom('status_page_services').selectAll().where('account_id', '=', accountId),
      nextId,
    ).execute();
  }

  /** One page of the account's services in `(created_at, id)` order from the cursor on. */
  page(accountId: string, query: CursorPage): Promise<{ rows: ServiceRow[]; nextId: string | null }> {
    return keysetPage(
      this.#db.selectFrom('status_page_services').selectAll().where('account_id', '=', accountId),
      query,
    );
  }

  /** Renames the service; false when it is not in the account. */
  async rename(accountId: string, id: string, name: string, nowMs: number): Promise<boolean> {
    const res = await this.#db
      .updateTable('status_page_services')
      .set({ name, updated_at: nowMs })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  /** Deletes the service (a no-op when it is not in the account); incidents lose their links to it. */
  async delete(accountId: string, id: string): Promise<void> {
    await this.#db
      .deleteFrom('status_page_services')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }
}
