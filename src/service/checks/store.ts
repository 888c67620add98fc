import { type Expression, type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import type { CheckType } from '../../protocol/index.js';
import { inKeysetOrder, encodeCursor } from '../platform/http/cursor.js';
import { notFound } from '../platform/http/errors.js';
import { isPostgres, lowered } from '../platform/store/dialect.js';
import { firstRunAt } from '../runs/index.js';
import type { Database } from '../platform/store/database.js';
import { readDoc, writeDoc } from '../platform/store/schema.js';
import { secretBoxOf } from '../platform/store/secret-box.js';
import { CHECK_SECRETS, sealSecrets } from '../platform/store/secret-fields.js';
import { deleteCheckStatuses } from '../resources/index.js';
import { checkTypeEntry } from './types/registry.js';
import { type CheckDoc, openCheckSecrets } from './checks.js';

/**
 * The condition "the row's `tags` (a JSON array of strings) holds every one of `tags`": on PostgreSQL one JSON
 * containment (`tags::jsonb @> '["a","b"]'`), on SQLite one `json_each` look-up per tag.
 */
function hasTags(
  eb: ExpressionBuilder<Database, 'checks'>,
  tags: readonly string[],
  postgres: boolean,
): Expression<SqlBool> {
  if (postgres) return sql<SqlBool>`${eb.ref('tags')}::jsonb @> ${JSON.stringify(tags)}::jsonb`;
  return eb.and(
    tags.map(
      (tag) =>
        sql<SqlBool>`exists (select 1 from json_each(${eb.ref('checks.tags')}) where json_each.value = ${tag})`,
    ),
  );
}

/** Row columns derived from a check document (plaintext): its secrets are sealed in `doc`. */
function columns(db: Kysely<Database>, doc: CheckDoc, nowMs: number) {
  return {
    check_type: doc.checkType,
    name: doc.name,
    activated: doc.activated ? 1 : 0,
    tags: writeDoc(doc.tags ?? []),
    frequency: doc.frequency,
    frequency_offset: doc.frequencyOffset ?? null,
    doc: writeDoc(sealSecrets(secretBoxOf(db), doc, CHECK_SECRETS, 'checks', doc.id)),
    // A type no agent runs (HEARTBEAT) is never scheduled.
    next_run_at: doc.activated && checkTypeEntry(doc.checkType).runnable ? firstRunAt(nowMs) : null,
  };
}

/**
 * What `GET /v1/checks` keeps of the account's checks; every field given must hold, an absent one keeps all.
 * - `tags`: checks holding every one of these tags (exact, case-sensitive);
 * - `checkType`: checks of this type;
 * - `search`: checks whose name contains it, case-insensitive (both lowered as JavaScript's `toLowerCase`
 *   lowers them: see `lowered` in platform/store/dialect.ts).
 */
export type CheckFilter = {
  tags?: readonly string[] | undefined;
  checkType?: CheckType | undefined;
  search?: string | undefined;
};

/**
 * Which of the filtered checks, oldest first (`created_at`, then `id`): at most `limit` (≥ 1) of them, from
 * the `page`th page of `limit` (from 1) or from the row the opaque cursor `nextId` names (a previous page's
 * `nextId`), not both.
 */
export type CheckPaging = { limit: number; page?: number | undefined; nextId?: string | undefined };

/** A page of checks: their documents, secrets opened, and the cursor of the next row (null after the last). */
export type CheckPage = { docs: CheckDoc[]; nextId: string | null };

/**
 * The `checks` table's queries for the checks resource and the resources that refer to checks.
 * (The columns runs keep, `next_run_at` and `location_cursor`, and the queue's look-ups are the
 * runs' own statements, in src/service/runs/.) Documents go in and come
 * out with their secrets in clear; the stored row holds them sealed (see sealSecrets,
 * CHECK_SECRETS). Pass a transaction as `db` to run them inside it.
 */
export class CheckQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insert(accountId: string, doc: CheckDoc, nowMs: number): Promise<void> {
    await this.#db
      .insertInto('checks')
      .values({
        id: doc.id,
        account_id: accountId,
        ...columns(this.#db, doc, nowMs),
        location_cursor: 0,
        created_at: nowMs,
        updated_at: null,
      })
      .execute();
  }

  /** @throws HttpError 404 when the check is not in the account. */
  async get(accountId: string, id: string): Promise<CheckDoc> {
    const row = await this.#db
      .selectFrom('checks')
      .select('doc')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('check', id);
    return openCheckSecrets(this.#db, readDoc(row.doc));
  }

  /** The account's checks, oldest first. */
  async list(accountId: string): Promise<CheckDoc[]> {
    const rows = await this.#db
      .selectFrom('checks')
      .select('doc')
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .execute();
    return rows.map((r) => openCheckSecrets(this.#db, readDoc(r.doc)));
  }

  /**
   * The account's checks kept by `filter`, oldest first (`created_at`, then `id`), the filters in SQL; without
   * `paging` every one, else one page of them (only its rows are read and opened) with the cursor of the next
   * row, which names it by its sort key: rows created or deleted between two pages neither repeat nor skip
   * the rows that were there all along. The `(account_id, created_at, id)` index serves the order.
   * @throws HttpError 400 naming `nextId` in the querystring when it is not a cursor this service answered.
   */
  async find(accountId: string, filter: CheckFilter, paging?: CheckPaging): Promise<CheckPage> {
    const postgres = isPostgres(this.#db);
    const { tags, checkType, search } = filter;
    let q = this.#db
      .selectFrom('checks')
      .select(['id', 'created_at', 'doc'])
      .where('account_id', '=', accountId);
    if (checkType !== undefined) q = q.where('check_type', '=', checkType);
    if (search !== undefined) {
      const name = await lowered(this.#db as Kysely<unknown>, sql.ref<string>('name'));
      const needle = search.toLowerCase();
      q = q.where(
        postgres ? sql<SqlBool>`strpos(${name}, ${needle}) > 0` : sql<SqlBool>`instr(${name}, ${needle}) > 0`,
      );
    }
    if (tags !== undefined && tags.length > 0) q = q.where((eb) => hasTags(eb, tags, postgres));
    if (!paging) {
      const rows = await q.orderBy('created_at').orderBy('id').execute();
      return { docs: rows.map((r) => openCheckSecrets(this.#db, readDoc(r.doc))), nextId: null };
    }
    const { limit, page = 1, nextId } = paging;
    const ordered = inKeysetOrder(q, nextId).limit(limit + 1);
    const rows = await (nextId === undefined ? ordered.offset((page - 1) * limit) : ordered).execute();
    const next = rows.length > limit ? rows[limit]! : undefined;
    return {
      docs: rows.slice(0, limit).map((r) => openCheckSecrets(this.#db, readDoc(r.doc))),
      nextId: next ? encodeCursor({ createdAtMs: Number(next.created_at), id: next.id }) : null,
    };
  }

  /**
   * The account's checks by id with their own `alertChannelSubscriptions` (secrets not opened: none are
   * read), for an alert channel's view of what it alerts for.
   */
  async channelSubscriptions(
    accountId: string,
  ): Promise<{ id: string; subscriptions: { alertChannelId: number; activated: boolean }[] }[]> {
    const rows = await this.#db
      .selectFrom('checks')
      .select(['id', 'doc'])
      .where('account_id', '=', accountId)
      .execute();
    return rows.map((r) => ({ id: r.id, subscriptions: readDoc(r.doc).alertChannelSubscriptions ?? [] }));
  }

  /** Ids of the account's checks. */
  async ids(accountId: string): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('checks')
      .select('id')
      .where('account_id', '=', accountId)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Whether the check is in the account. */
  async exists(accountId: string, id: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom('checks')
      .select('id')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Name and type of a check of the account; undefined when it is not in the account. */
  async summary(accountId: string, id: string): Promise<{ name: string; checkType: CheckType } | undefined> {
    const row = await this.#db
      .selectFrom('checks')
      .select(['name', 'check_type'])
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && { name: row.name, checkType: row.check_type };
  }

  /** Replaces the stored document; a changed schedule restarts from now. */
  async update(accountId: string, before: CheckDoc, doc: CheckDoc, nowMs: number): Promise<void> {
    const scheduleChanged =
      before.activated !== doc.activated ||
      before.frequency !== doc.frequency ||
      before.frequencyOffset !== doc.frequencyOffset;
    const { next_run_at, ...rest } = columns(this.#db, doc, nowMs);
    await this.#db
      .updateTable('checks')
      .set({ ...rest, ...(scheduleChanged ? { next_run_at } : {}), updated_at: nowMs })
      .where('account_id', '=', accountId)
      .where('id', '=', doc.id)
      .execute();
  }

  /**
   * Deletes a check with its error groups, latest status and hourly figures, and what its type keeps beside
   * it (the type's `onDelete` hook: a HEARTBEAT check's heartbeat and pings), in one transaction.
   * @returns true when a check was deleted.
   */
  async delete(accountId: string, id: string): Promise<boolean> {
    return this.#db.transaction().execute(async (tx) => {
      const deleted = await tx
        .deleteFrom('checks')
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .returning('check_type')
        .executeTakeFirst();
      if (!deleted) return false;
      await tx
        .deleteFrom('error_groups')
        .where('account_id', '=', accountId)
        .where('check_id', '=', id)
        .execute();
      await checkTypeEntry(deleted.check_type).onDelete?.(tx, accountId, id);
      // Its latest result and hourly figures (the checks page's rollups) go with it.
      await deleteCheckStatuses(tx, accountId, id);
      return true;
    });
  }
}
