import type { Kysely } from 'kysely';
import type { Database } from '../platform/store/database.js';
import { readDoc, type StoredJson, writeDoc } from '../platform/store/schema.js';
import type { DashboardDoc } from './dashboards.js';

/** A dashboard row: ids, its document as JSON text, times in epoch ms. */
export type DashboardRow = {
  id: number;
  account_id: string;
  dashboard_id: string;
  doc: StoredJson<DashboardDoc>;
  created_at: number;
  updated_at: number | null;
};

/** What the public page reads of a check: never its document (URL, headers, scripts, variables). */
export type DashboardCheckRow = {
  id: string;
  name: string;
  checkType: string;
  activated: boolean;
  tags: string[];
};

/** The latest final result of a check: its status and when it stopped (epoch ms). */
export type LastResultRow = {
  check_id: string;
  status: string;
  has_failures: number;
  has_errors: number;
  is_degraded: number;
  stopped_at: number;
};

/** Runs and failed runs of a check since a time. */
export type RunCounts = { check_id: string; runs: number; failures: number };

const COLUMNS = ['id', 'account_id', 'dashboard_id', 'doc', 'created_at', 'updated_at'] as const;

/**
 * The `dashboards` table's queries (every one scoped to one account but the public look-up by `custom_url`),
 * and what the public page reads of the account's checks: names, types, tags, latest results and hourly
 * roll-ups, never a check's document.
 */
export class DashboardQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Inserts a dashboard created at `nowMs`; returns its row. */
  async insert(
    accountId: string,
    dashboardId: string,
    doc: DashboardDoc,
    nowMs: number,
  ): Promise<DashboardRow> {
    const text = writeDoc(doc);
    const { id } = await this.#db
      .insertInto('dashboards')
      .values({
        account_id: accountId,
        dashboard_id: dashboardId,
        custom_url: doc.customUrl?.toLowerCase() ?? null,
        custom_domain: doc.customDomain?.toLowerCase() ?? null,
        doc: text,
        created_at: nowMs,
        updated_at: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return {
      id: Number(id),
      account_id: accountId,
      dashboard_id: dashboardId,
      doc: text,
      created_at: nowMs,
      updated_at: null,
    };
  }

  /** The dashboard `dashboardId` of the account; undefined when it has none. */
  get(accountId: string, dashboardId: string): Promise<DashboardRow | undefined> {
    return this.#db
      .selectFrom('dashboards')
      .select(COLUMNS)
      .where('account_id', '=', accountId)
      .where('dashboard_id', '=', dashboardId)
      .executeTakeFirst();
  }

  /** One page of the account's dashboards, by id. */
  list(accountId: string, limit: number, offset: number): Promise<DashboardRow[]> {
    return this.#db
      .selectFrom('dashboards')
      .select(COLUMNS)
      .where('account_id', '=', accountId)
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute();
  }

  /** The id of the dashboard (of any account) whose lower-cased `customUrl` is `url`. */
  async idOfUrl(url: string): Promise<number | undefined> {
    const row = await this.#db
      .selectFrom('dashboards')
      .select('id')
      .where('custom_url', '=', url)
      .executeTakeFirst();
    return row === undefined ? undefined : Number(row.id);
  }

  /** The dashboard (of any account) served at `/dashboards/{url}`, `url` lower-cased. */
  byUrl(url: string): Promise<DashboardRow | undefined> {
    return this.#db.selectFrom('dashboards').select(COLUMNS).where('custom_url', '=', url).executeTakeFirst();
  }

  /** Replaces the document of the row `id` (and its look-up columns), updated at `nowMs`. */
  async update(id: number, doc: DashboardDoc, nowMs: number): Promise<void> {
    await this.#db
      .updateTable('dashboards')
      .set({
        doc: writeDoc(doc),
        custom_url: doc.customUrl?.toLowerCase() ?? null,
        custom_domain: doc.customDomain?.toLowerCase() ?? null,
        updated_at: nowMs,
      })
      .where('id', '=', id)
      .execute();
  }

  /** Deletes the dashboard; false when the account has none such. */
  async delete(accountId: string, dashboardId: string): Promise<boolean> {
    const result = await this.#db
      .deleteFrom('dashboards')
      .where('account_id', '=', accountId)
      .where('dashboard_id', '=', dashboardId)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** The account's checks, oldest first: id, name, type, whether activated, tags. */
  async checks(accountId: string): Promise<DashboardCheckRow[]> {
    const rows = await this.#db
      .selectFrom('checks')
      .select(['id', 'name', 'check_type', 'activated', 'tags'])
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      checkType: r.check_type,
      activated: Number(r.activated) === 1,
      tags: readDoc(r.tags) ?? [],
    }));
  }

  /** The latest final result of each of the account's checks that has one. */
  lastResults(accountId: string): Promise<LastResultRow[]> {
    return this.#db
      .selectFrom('check_last_results')
      .select(['check_id', 'status', 'has_failures', 'has_errors', 'is_degraded', 'stopped_at'])
      .where('account_id', '=', accountId)
      .execute();
  }

  /** Runs and failed runs of each of the account's checks in the hours starting at or after `sinceMs`. */
  async runCounts(accountId: string, sinceMs: number): Promise<RunCounts[]> {
    const rows = await this.#db
      .selectFrom('check_stats_hourly')
      .select((eb) => [
        'check_id',
        eb.fn.sum<number>('runs').as('runs'),
        eb.fn.sum<number>('failures').as('failures'),
      ])
      .where('account_id', '=', accountId)
      .where('hour_start', '>=', sinceMs)
      .groupBy('check_id')
      .execute();
    return rows.map((r) => ({ check_id: r.check_id, runs: Number(r.runs), failures: Number(r.failures) }));
  }
}
