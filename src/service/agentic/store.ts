import type { Kysely, Transaction } from 'kysely';
import type { CheckType } from '../../protocol/index.js';
import { isPostgres } from '../platform/store/dialect.js';
import type { Database } from '../platform/store/database.js';
import { readDoc, type StoredJson, writeDoc } from '../platform/store/schema.js';
import type { CheckDoc } from '../checks/index.js';
import type { AgenticRepairTable } from '../platform/store/schema.js';

/** A repair's row as stored (migration 0034_agentic). */
export type RepairRow = AgenticRepairTable;

/**
 * An AGENTIC check's script state as its row holds it: the stored document's text (`rawDoc`, secrets still
 * sealed: what a conditional update compares), its type, `script` and `scriptVersion`, `repairMode`.
 */
export type ScriptState = {
  rawDoc: StoredJson<CheckDoc>;
  checkType: CheckType;
  script: string | null;
  scriptVersion: number;
  repairMode: 'AUTO' | 'REVIEW';
};

/** One month's model usage of an account: sums over its stored AGENTIC results. */
export type UsageSums = {
  runs: number;
  modelCalls: number;
  durationMs: number;
  promptTokens: number;
  completionTokens: number;
};

/**
 * The queries of AGENTIC checks (docs/checks.md, "Agentic"): the script fields of a check's row, read under
 * a row lock on PostgreSQL and written by a conditional update; the `agentic_repairs` and `agentic_runs`
 * tables. Pass a transaction as `db` to run them inside it.
 */
export class AgenticQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * The check's script state; on PostgreSQL its row stays locked (`FOR UPDATE`) until the transaction ends,
   * so no other replica's ingest or update changes the script in between (SQLite has one writer at a time).
   * Undefined when the check is not in the account.
   */
  async lockScript(accountId: string, checkId: string): Promise<ScriptState | undefined> {
    const row = await this.#db
      .selectFrom('checks')
      .select(['doc', 'check_type'])
      .where('account_id', '=', accountId)
      .where('id', '=', checkId)
      .$if(isPostgres(this.#db), (q) => q.forUpdate())
      .executeTakeFirst();
    if (!row) return undefined;
    const doc = readDoc(row.doc);
    const script = typeof doc.script === 'string' && doc.script !== '' ? doc.script : null;
    return {
      rawDoc: row.doc,
      checkType: row.check_type,
      script,
      scriptVersion: script === null ? 0 : Number(doc.scriptVersion ?? 1),
      repairMode: doc.repairMode === 'REVIEW' ? 'REVIEW' : 'AUTO',
    };
  }

  /**
   * Stores `script` as version `version` of the check, only if its row still holds the document `state`
   * was read from (a conditional update: a row changed since, by any writer, is left alone). The document's
   * other fields, sealed secrets included, are kept as stored; `updated_at` moves to `nowMs` (epoch ms).
   * @returns whether the row was updated.
   */
  async setScript(
    accountId: string,
    checkId: string,
    state: ScriptState,
    script: string,
    version: number,
    nowMs: number,
  ): Promise<boolean> {
    const doc: CheckDoc = {
      ...readDoc(state.rawDoc),
      script,
      scriptVersion: version,
      updated_at: new Date(nowMs).toISOString(),
    };
    const result = await this.#db
      .updateTable('checks')
      .set({ doc: writeDoc(doc), updated_at: nowMs })
      .where('account_id', '=', accountId)
      .where('id', '=', checkId)
      .where('doc', '=', state.rawDoc)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async insertRepair(row: RepairRow): Promise<void> {
    await this.#db.insertInto('agentic_repairs').values(row).execute();
  }

  /** The check's repairs, newest first, at most `limit`. */
  async listRepairs(accountId: string, checkId: string, limit: number): Promise<RepairRow[]> {
    return this.#db
      .selectFrom('agentic_repairs')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('check_id', '=', checkId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  /** One repair of the check; on PostgreSQL its row locked until the transaction ends. */
  async lockRepair(accountId: string, checkId: string, id: string): Promise<RepairRow | undefined> {
    return this.#db
      .selectFrom('agentic_repairs')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('check_id', '=', checkId)
      .where('id', '=', id)
      .$if(isPostgres(this.#db), (q) => q.forUpdate())
      .executeTakeFirst();
  }

  /** Records the decision on a repair: its status, the version it became (null unless applied), when and by whom. */
  async decide(
    id: string,
    decision: { status: string; newVersion: number | null; decidedAt: number; decidedBy: string | null },
  ): Promise<void> {
    await this.#db
      .updateTable('agentic_repairs')
      .set({
        status: decision.status,
        new_version: decision.newVersion,
        decided_at: decision.decidedAt,
        decided_by: decision.decidedBy,
      })
      .where('id', '=', id)
      .execute();
  }

  /**
   * Marks STALE the check's PENDING repairs made over another version than `currentVersion` (the script moved
   * under them: they can no longer be applied), decided at `nowMs` by nobody.
   */
  async staleOthers(
    accountId: string,
    checkId: string,
    currentVersion: number,
    nowMs: number,
  ): Promise<void> {
    await this.#db
      .updateTable('agentic_repairs')
      .set({ status: 'STALE', decided_at: nowMs })
      .where('account_id', '=', accountId)
      .where('check_id', '=', checkId)
      .where('status', '=', 'PENDING')
      .where('base_version', '<>', currentVersion)
      .execute();
  }

  /** Deletes the check's repairs (with the check; its runs' usage stays in the account's figures). */
  async deleteRepairs(accountId: string, checkId: string): Promise<void> {
    await this.#db
      .deleteFrom('agentic_repairs')
      .where('account_id', '=', accountId)
      .where('check_id', '=', checkId)
      .execute();
  }

  /** Records the model usage of one stored AGENTIC result (once: the result's id is the key). */
  async insertRun(row: Database['agentic_runs']): Promise<void> {
    await this.#db.insertInto('agentic_runs').values(row).execute();
  }

  /** The account's usage over results stored in `[fromMs, toMs)` (epoch ms): one aggregate over the index. */
  async usage(accountId: string, fromMs: number, toMs: number): Promise<UsageSums> {
    const row = await this.#db
      .selectFrom('agentic_runs')
      .select((eb) => [
        eb.fn.countAll<string | number>().as('runs'),
        eb.fn.sum<string | number | null>('model_calls').as('model_calls'),
        eb.fn.sum<string | number | null>('duration_ms').as('duration_ms'),
        eb.fn.sum<string | number | null>('prompt_tokens').as('prompt_tokens'),
        eb.fn.sum<string | number | null>('completion_tokens').as('completion_tokens'),
      ])
      .where('account_id', '=', accountId)
      .where('created_at', '>=', fromMs)
      .where('created_at', '<', toMs)
      .executeTakeFirst();
    return {
      runs: Number(row?.runs ?? 0),
      modelCalls: Number(row?.model_calls ?? 0),
      durationMs: Number(row?.duration_ms ?? 0),
      promptTokens: Number(row?.prompt_tokens ?? 0),
      completionTokens: Number(row?.completion_tokens ?? 0),
    };
  }
}

/** A transaction of the store, or the store (what recorders and check-type writes are given). */
export type Tx = Kysely<Database> | Transaction<Database>;
