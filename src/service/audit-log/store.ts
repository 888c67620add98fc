import type { Kysely, Selectable } from 'kysely';
import { decodeCursor, encodeCursor } from '../platform/http/cursor.js';
import type { Database } from '../platform/store/database.js';
import type { AuditLogTable } from '../platform/store/schema.js';

/** A stored audit entry (0033_audit_log); times in epoch ms, documents as masked JSON text. */
export type AuditRow = Selectable<AuditLogTable>;

/** The filters of a listing: each narrows it; times in epoch ms, `from` inclusive and `to` exclusive. */
export type AuditFilter = {
  actorId?: string | undefined;
  resourceType?: string | undefined;
  resourceId?: string | undefined;
  action?: string | undefined;
  fromMs?: number | undefined;
  toMs?: number | undefined;
};

/**
 * The `audit_log` table's queries, each scoped to one account (indexes `audit_log_account_time`,
 * `audit_log_account_resource`, `audit_log_account_actor`).
 */
export class AuditQueries {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Stores one entry. */
  async insert(row: AuditRow): Promise<void> {
    await this.#db.insertInto('audit_log').values(row).execute();
  }

  /**
   * The `after` of the newest entry of the resource whose action is one of `actions` (its last known
   * document, masked); null when there is none.
   */
  async lastAfter(
    accountId: string,
    resourceType: string,
    resourceId: string,
    actions: readonly string[],
  ): Promise<string | null> {
    const row = await this.#db
      .selectFrom('audit_log')
      .select('after')
      .where('account_id', '=', accountId)
      .where('resource_type', '=', resourceType)
      .where('resource_id', '=', resourceId)
      .where('action', 'in', actions)
      .orderBy('occurred_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.after ?? null;
  }

  /**
   * One page of the account's entries matching `filter`, newest first: at most `limit`, from the entry the
   * cursor `nextId` names on, and the cursor of the next page (null at the end).
   * @throws HttpError 400 naming `nextId` when it is not a cursor this service answered.
   */
  async page(
    accountId: string,
    filter: AuditFilter,
    page: { limit: number; nextId?: string | undefined },
  ): Promise<{ rows: AuditRow[]; nextId: string | null }> {
    let query = this.#db.selectFrom('audit_log').selectAll().where('account_id', '=', accountId);
    if (filter.actorId !== undefined) query = query.where('actor_id', '=', filter.actorId);
    if (filter.resourceType !== undefined) query = query.where('resource_type', '=', filter.resourceType);
    if (filter.resourceId !== undefined) query = query.where('resource_id', '=', filter.resourceId);
    if (filter.action !== undefined) query = query.where('action', '=', filter.action);
    if (filter.fromMs !== undefined) query = query.where('occurred_at', '>=', filter.fromMs);
    if (filter.toMs !== undefined) query = query.where('occurred_at', '<', filter.toMs);
    if (page.nextId !== undefined) {
      const from = decodeCursor(page.nextId);
      query = query.where((eb) =>
        eb.or([
          eb('occurred_at', '<', from.createdAtMs),
          eb.and([eb('occurred_at', '=', from.createdAtMs), eb('id', '<=', from.id)]),
        ]),
      );
    }
    const rows = await query
      .orderBy('occurred_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit + 1)
      .execute();
    if (rows.length <= page.limit) return { rows, nextId: null };
    const next = rows[page.limit]!;
    return {
      rows: rows.slice(0, page.limit),
      nextId: encodeCursor({ createdAtMs: Number(next.occurred_at), id: next.id }),
    };
  }

  /** Deletes up to `limit` entries (of any account) older than `cutoffMs`; returns how many. */
  async deleteOlderThan(cutoffMs: number, limit: number): Promise<number> {
    const rows = await this.#db
      .selectFrom('audit_log')
      .select('id')
      .where('occurred_at', '<', cutoffMs)
      .limit(limit)
      .execute();
    if (rows.length === 0) return 0;
    await this.#db
      .deleteFrom('audit_log')
      .where(
        'id',
        'in',
        rows.map((row) => row.id),
      )
      .execute();
    return rows.length;
  }
}
