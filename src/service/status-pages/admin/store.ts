import { type Kysely, type Selectable, sql } from 'kysely';
import { inKeysetOrder, keysetPage } from '../../platform/http/cursor.js';
import type { StatusPageDoc } from './status-pages.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc, type StoredJson } from '../../platform/store/schema.js';

/** A status page row: its document as JSON text (cards, hashed keys); times in epoch ms. */
export type PageRow = {
  id: string;
  account_id: string;
  doc: StoredJson<StatusPageDoc>;
  created_at: number;
  updated_at: number | null;
};

/**
 * The custom-domain columns of a page row: the domain (lower-case; null without one) and its verification
 * (migration 0013): when and how it was verified (null while pending), when it was last checked and why that
 * check did not verify it.
 */
export type DomainState = Pick<
  Selectable<Database['status_pages']>,
  | 'custom_domain'
  | 'custom_domain_verified_at'
  | 'custom_domain_verified_by'
  | 'custom_domain_checked_at'
  | 'custom_domain_problem'
>;

/** A page row as the API reads it: with its custom-domain columns. */
export type PageRowWithDomain = PageRow & DomainState;

/** A page's custom domain and its verification, for the checks (custom-domains.ts). */
export type DomainRow = DomainState & { id: string; account_id: string };

/** A status-page service row. */
export type ServiceRow = Selectable<Database['status_page_services']>;

/** A cursor page query: `limit` rows from the opaque cursor `nextId` on (see http/cursor.ts). */
type CursorPage = { limit: number; nextId?: string | undefined };

const PAGE_COLUMNS = [
  'id',
  'account_id',
  'doc',
  'created_at',
  'updated_at',
  'custom_domain',
  'custom_domain_verified_at',
  'custom_domain_verified_by',
  'custom_domain_checked_at',
  'custom_domain_problem',
] as const;

const DOMAIN_COLUMNS = [
  'id',
  'account_id',
  'custom_domain',
  'custom_domain_verified_at',
  'custom_domain_verified_by',
  'custom_domain_checked_at',
  'custom_domain_problem',
] as const;

/** The columns of a domain that is not verified (yet): a new or changed domain starts so. */
const PENDING = {
  custom_domain_verified_at: null,
  custom_domain_verified_by: null,
  custom_domain_checked_at: null,
  custom_domain_problem: null,
} as const;

/** The `status_pages` table's queries, scoped to one account (but the service-wide `…Anywhere`/`…Taken` checks). */
export class PageQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * Inserts a page with its `url` and `custom_domain` columns (the domain lower-cased, see
   * {@link customDomainColumn}); the domain starts pending.
   * @throws the driver's unique-constraint error when `url` is taken in the account.
   */
  async insert(row: PageRow, url: string, customDomain: string | null): Promise<void> {
    await this.#db
      .insertInto('status_pages')
      .values({ ...row, url, custom_domain: customDomainColumn(customDomain) })
      .execute();
  }

  /** The page's row; undefined when it is not in the account. */
  get(accountId: string, id: string): Promise<PageRowWithDomain | undefined> {
    return this.#db
      .selectFrom('status_pages')
      .select(PAGE_COLUMNS)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** One page of the account's status pages in `(created_at, id)` order from the cursor on. */
  page(accountId: string, query: CursorPage): Promise<{ rows: PageRowWithDomain[]; nextId: string | null }> {
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

  /**
   * Whether another page of any account (not `selfId`) uses `url`: `/status/{url}` is one path for the
   * whole service, so a url is unique across accounts.
   */
  async urlTakenAnywhere(url: string, selfId?: string): Promise<boolean> {
    let q = this.#db.selectFrom('status_pages').select('id').where('url', '=', url);
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

  /**
   * Replaces the page's document, `url` and `custom_domain`; a domain that changed (`domainChanged`) starts
   * pending, one that did not keeps its verification.
   * @throws the driver's unique-constraint error when `url` is taken in the account.
   */
  async update(
    accountId: string,
    id: string,
    doc: StoredJson<StatusPageDoc>,
    url: string,
    customDomain: string | null,
    nowMs: number,
    domainChanged: boolean,
  ): Promise<void> {
    await this.#db
      .updateTable('status_pages')
      .set({
        doc,
        url,
        custom_domain: customDomainColumn(customDomain),
        updated_at: nowMs,
        ...(domainChanged ? PENDING : {}),
      })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }

  /** Replaces the page's document only (its keys changed; nothing a visitor sees). */
  async replaceDoc(accountId: string, id: string, doc: StoredJson<StatusPageDoc>): Promise<void> {
    await this.#db
      .updateTable('status_pages')
      .set({ doc })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }

  /** Deletes the page; false when it is not in the account. */
  async delete(accountId: string, id: string): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const res = await trx
        .deleteFrom('status_pages')
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .executeTakeFirst();
      if (res.numDeletedRows === 0n) return false;
      // Its subscribers go with it (mail still queued for them then fails as "unsubscribed").
      await trx
        .deleteFrom('status_page_subscribers')
        .where('account_id', '=', accountId)
        .where('status_page_id', '=', id)
        .execute();
      return true;
    });
  }
}

/**
 * The custom-domain verification columns of `status_pages` (docs/status-pages.md, "Custom domains"), across
 * every account: one page at most holds a domain verified (a partial unique index). Every write names the
 * domain it expects, so a check that ends after the page's domain changed writes nothing.
 */
export class DomainQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Whether a page other than `selfId`, of any account, holds `domain` (lower-case) verified. */
  async heldElsewhere(domain: string, selfId: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom('status_pages')
      .select('id')
      .where('custom_domain', '=', domain)
      .where('custom_domain_verified_at', 'is not', null)
      .where('id', '!=', selfId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Marks the page's pending `domain` verified `by` at `nowMs`.
   * @returns false when the page no longer has that domain pending, or another page got the domain verified
   *   first (the unique index refused it).
   */
  async markVerified(id: string, domain: string, by: 'TXT' | 'ALLOW_LIST', nowMs: number): Promise<boolean> {
    try {
      const res = await this.#db
        .updateTable('status_pages')
        .set({
          custom_domain_verified_at: nowMs,
          custom_domain_verified_by: by,
          custom_domain_checked_at: nowMs,
          custom_domain_problem: null,
        })
        .where('id', '=', id)
        .where('custom_domain', '=', domain)
        .where('custom_domain_verified_at', 'is', null)
        .executeTakeFirst();
      return res.numUpdatedRows > 0n;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505') return false;
      throw err;
    }
  }

  /** Records a check of the page's `domain` at `nowMs` that did not verify it, and why (`problem`). */
  async recordCheck(id: string, domain: string, problem: string, nowMs: number): Promise<void> {
    await this.#db
      .updateTable('status_pages')
      .set({ custom_domain_checked_at: nowMs, custom_domain_problem: problem })
      .where('id', '=', id)
      .where('custom_domain', '=', domain)
      .execute();
  }

  /** Puts the page's verified `domain` back to pending, saying why. */
  async unverify(id: string, domain: string, problem: string, nowMs: number): Promise<void> {
    await this.#db
      .updateTable('status_pages')
      .set({ ...PENDING, custom_domain_checked_at: nowMs, custom_domain_problem: problem })
      .where('id', '=', id)
      .where('custom_domain', '=', domain)
      .execute();
  }

  /**
   * Pending domains last checked at or before `checkedBeforeMs` (or never), the longest unchecked first, at
   * most `limit`.
   */
  pendingDue(checkedBeforeMs: number, limit: number): Promise<DomainRow[]> {
    return this.#withDomain('pending')
      .where((eb) =>
        eb.or([
          eb('custom_domain_checked_at', 'is', null),
          eb('custom_domain_checked_at', '<=', checkedBeforeMs),
        ]),
      )
      .orderBy(sql`coalesce(custom_domain_checked_at, 0)`)
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /** Every page with a pending domain. */
  pending(): Promise<DomainRow[]> {
    return this.#withDomain('pending').orderBy('created_at').orderBy('id').execute();
  }

  /** Every page with a verified domain. */
  verified(): Promise<DomainRow[]> {
    return this.#withDomain('verified').execute();
  }

  /** The domain columns of the pages whose custom domain is `state`. */
  #withDomain(state: 'pending' | 'verified') {
    return this.#db
      .selectFrom('status_pages')
      .select(DOMAIN_COLUMNS)
      .where('custom_domain', 'is not', null)
      .where('custom_domain_verified_at', state === 'pending' ? 'is' : 'is not', null);
  }
}

/**
 * The `custom_domain` column of a page whose document has `customDomain`: the host name lower-cased (host
 * names compare without case, RFC 4343), so a request's Host finds it with one indexed equality; null
 * without a domain.
 */
export function customDomainColumn(customDomain: string | null | undefined): string | null {
  return customDomain ? customDomain.toLowerCase() : null;
}

/**
 * Fills `status_pages.custom_domain` from the documents for rows written before the column existed
 * (migration 0012): every row whose column is null is read and, when its document has a `customDomain`,
 * updated by id. Idempotent, and portable (documents are read in code, no JSON SQL).
 * @returns how many rows were filled.
 */
export async function backfillCustomDomains(db: Kysely<Database>): Promise<number> {
  const rows = await db
    .selectFrom('status_pages')
    .select(['id', 'doc'])
    .where('custom_domain', 'is', null)
    .execute();
  let filled = 0;
  for (const row of rows) {
    const domain = customDomainColumn(readDoc(row.doc).customDomain);
    if (domain === null) continue;
    await db
      .updateTable('status_pages')
      .set({ custom_domain: domain })
      .where('id', '=', row.id)
      .where('custom_domain', 'is', null)
      .execute();
    filled++;
  }
  return filled;
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
