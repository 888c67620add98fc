import type { Kysely } from 'kysely';
import type { CheckType } from '../../protocol/index.js';
import { notFound } from '../platform/http/errors.js';
import { firstRunAt } from '../runs/index.js';
import type { Database } from '../platform/store/database.js';
import { readDoc, writeDoc } from '../platform/store/schema.js';
import { secretBoxOf } from '../platform/store/secret-box.js';
import { CHECK_SECRETS, sealSecrets } from '../platform/store/secret-fields.js';
import { deleteCheckStatuses } from '../resources/index.js';
import { checkTypeEntry } from './types/registry.js';
import { type CheckDoc, openCheckSecrets } from './checks.js';

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
