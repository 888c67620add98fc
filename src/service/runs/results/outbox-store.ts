import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/store/database.js';
import { isPostgres } from '../../platform/store/dialect.js';
import { Statement } from '../../platform/store/statement.js';

/** How long a row taken by one replica's pass stays invisible to the others' (PostgreSQL), ms. */
export const OUTBOX_TAKE_MS = 120_000;

/**
 * Longest result document (characters) read together with the rest of a pass's results; a longer one is read
 * on its own ({@link OutboxQueries.result}), so a pass of 50 rows holds at most 50 × 64 Ki characters of
 * documents at once (a result may be 8 MiB).
 */
export const BATCHED_DOC_CHARS = 65_536;

/** What a result hook gets of a stored result; `doc` null when it is too long to be read with others. */
export type HookedResult = {
  job_id: string;
  check_id: string;
  doc: Selectable<Database['check_results']>['doc'] | null;
};

/** A row of `result_outbox`: one result hook to run for one stored result. */
export type OutboxRow = Selectable<Database['result_outbox']>;

/** The values of a result's outbox rows: `hook0` … `hook{n-1}`, one per hook. */
type OutboxInsertValues = { accountId: string; resultId: string; nowMs: number } & Record<
  `hook${number}`,
  string
>;

/**
 * The insert of a result's outbox rows for `count` hooks, built once per count (a service has a fixed set of
 * hooks; platform/store/statement.ts).
 */
const insertStatements = new Map<number, Statement<Database, OutboxInsertValues, unknown>>();

function insertStatement(count: number): Statement<Database, OutboxInsertValues, unknown> {
  let statement = insertStatements.get(count);
  if (statement === undefined) {
    statement = new Statement((db: Kysely<Database>, v: OutboxInsertValues) =>
      db.insertInto('result_outbox').values(
        Array.from({ length: count }, (_, i) => ({
          account_id: v.accountId,
          result_id: v.resultId,
          hook: v[`hook${i}`] as string,
          next_attempt_at: v.nowMs,
          created_at: v.nowMs,
        })),
      ),
    );
    insertStatements.set(count, statement);
  }
  return statement;
}

/**
 * Every statement of the result outbox (outbox.ts) against the store: rows are written in the
 * result's transaction, then read, retried and deleted by the ResultOutbox worker. Portable SQL
 * but for the take of due rows on PostgreSQL ({@link OutboxQueries.due}); the `result_outbox` id is the one autoincrement column (store/migrations/dialect.ts).
 */
export class OutboxQueries {
  readonly #db: Kysely<Database> | Transaction<Database>;

  /** `db`: the store, or the transaction that stores the result. */
  constructor(db: Kysely<Database> | Transaction<Database>) {
    this.#db = db;
  }

  /** Inserts one row per hook name for a result, due at `nowMs` (epoch ms). */
  async insert(hookNames: readonly string[], row: { accountId: string; resultId: string; nowMs: number }) {
    if (hookNames.length === 0) return;
    const values: OutboxInsertValues = { ...row };
    for (const [i, hook] of hookNames.entries()) values[`hook${i}`] = hook;
    await insertStatement(hookNames.length).run(this.#db, values);
  }

  /** Rows due by `nowMs`, oldest due first (index `result_outbox_due`), at most `limit`. */
  async due(nowMs: number, limit: number): Promise<OutboxRow[]> {
    if (isPostgres(this.#db)) return this.#take(nowMs, limit);
    return this.#db
      .selectFrom('result_outbox')
      .selectAll()
      .where('next_attempt_at', '<=', nowMs)
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /**
   * PostgreSQL, where several replicas run the worker: takes the due rows as {@link due} finds them, and in
   * the same statement moves their `next_attempt_at` {@link OUTBOX_TAKE_MS} on, so another replica's pass
   * skips them (rows a pass is taking are skipped, not waited for: `FOR UPDATE SKIP LOCKED`). A replica that
   * dies mid-pass leaves its rows due again once that time has passed; a row done is deleted, a failed one
   * gets its back-off time from `retryLater`.
   */
  async #take(nowMs: number, limit: number): Promise<OutboxRow[]> {
    const rows = await this.#db
      .updateTable('result_outbox')
      .set({ next_attempt_at: nowMs + OUTBOX_TAKE_MS })
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('result_outbox')
          .select('id')
          .where('next_attempt_at', '<=', nowMs)
          .orderBy('next_attempt_at')
          .orderBy('id')
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .returningAll()
      .execute();
    return rows.sort((a, b) => a.next_attempt_at - b.next_attempt_at || a.id - b.id);
  }

  /**
   * What hooks get of the stored results `resultIds`, in one statement, by id; a result gone (retention) is
   * not in the map, and a document longer than {@link BATCHED_DOC_CHARS} comes back as `doc: null` (read it
   * with {@link result}).
   */
  async results(resultIds: readonly string[]): Promise<Map<string, HookedResult>> {
    if (resultIds.length === 0) return new Map();
    const rows = await this.#db
      .selectFrom('check_results')
      .select([
        'id',
        'job_id',
        'check_id',
        sql<
          Database['check_results']['doc'] | null
        >`case when length(doc) <= ${sql.lit(BATCHED_DOC_CHARS)} then doc end`.as('doc'),
      ])
      .where('id', 'in', [...resultIds])
      .execute();
    return new Map(rows.map(({ id, ...result }) => [id, result]));
  }

  /** What a hook gets of a stored result, or undefined when the result is gone. */
  async result(resultId: string) {
    return this.#db
      .selectFrom('check_results')
      .select(['job_id', 'check_id', 'doc'])
      .where('id', '=', resultId)
      .executeTakeFirst();
  }

  /** Deletes a row (its hook ran, or will never run). */
  async delete(id: number): Promise<void> {
    await this.#db.deleteFrom('result_outbox').where('id', '=', id).execute();
  }

  /** Deletes rows by id, in one statement (a pass's finished rows). */
  async deleteMany(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.#db
      .deleteFrom('result_outbox')
      .where('id', 'in', [...ids])
      .execute();
  }

  /** Records a failed attempt: the attempts so far, when to try again (epoch ms) and the error. */
  async retryLater(id: number, attempts: number, nextAttemptAtMs: number, lastError: string): Promise<void> {
    await this.#db
      .updateTable('result_outbox')
      .set({ attempts, next_attempt_at: nextAttemptAtMs, last_error: lastError })
      .where('id', '=', id)
      .execute();
  }
}
