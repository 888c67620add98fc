import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database } from './database.js';
import { resultPartitionName } from './migrations/0025_result_partitions.js';

/** One UTC day, ms: the span of a result partition. */
const DAY_MS = 86_400_000;

/** Days ahead of a retention pass's day whose partitions it makes sure of (as migration 0025 made them first). */
export const PARTITION_DAYS_AHEAD = 7;

/**
 * Days back from today past which results a store already holds stay in the default partition rather than get
 * one of their day's (migration 0025 for a converted store, `migrate-store` for a moved one).
 */
export const PARTITION_DAYS_BACK = 400;

/** The advisory lock replicas take turns under to create or drop result partitions. */
const PARTITION_LOCK_ID = 0x72_65_73_70; // "resp"

/**
 * How long a partition's creation or drop waits for a lock before giving up until the next pass, ms. While it
 * waits for `check_results`' exclusive lock (behind a long read), the result inserts queued after it wait too:
 * this bounds that stall. (`DETACH PARTITION … CONCURRENTLY`, which would not block them, is refused on a
 * table with a default partition.)
 */
const LOCK_TIMEOUT_MS = 1000;

/** A day partition of `check_results`: its name and the UTC day it holds (epoch ms). */
type DayPartition = { name: string; dayStartMs: number };

/** What a {@link ResultPartitions.dropEndedBy} pass did. */
export type PartitionDrop = {
  /** Partitions dropped, and the result rows they held. */
  dropped: number;
  rows: number;
  /** Partitions past the cut-off left for the batched deletes: a row still has artifact files, or the lock was busy. */
  kept: string[];
};

/**
 * The day partitions of `check_results` on PostgreSQL (migration 0025_result_partitions): created ahead of
 * the days they hold, and dropped whole once their day ended by the retention cut-off. Every replica's
 * retention pass calls both; they take turns under one advisory lock, each creation and drop in its own
 * short transaction that waits at most {@link LOCK_TIMEOUT_MS} for the table (a drop takes an exclusive lock
 * on `check_results`, so result inserts wait for it that long at most). On SQLite, which keeps one table,
 * both do nothing.
 */
export class ResultPartitions {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** The day partitions that exist, oldest first (not the default partition). */
  async list(): Promise<DayPartition[]> {
    if (!isPostgres(this.#db)) return [];
    const { rows } = await sql<{ name: string }>`
      SELECT c.relname AS name FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        JOIN pg_class p ON p.oid = i.inhparent
      WHERE p.relname = 'check_results' AND c.relname ~ '^check_results_p[0-9]{8}$'
      ORDER BY c.relname`.execute(this.#db);
    return rows.map(({ name }) => {
      const digits = name.slice(-8);
      const day = Date.UTC(
        Number(digits.slice(0, 4)),
        Number(digits.slice(4, 6)) - 1,
        Number(digits.slice(6, 8)),
      );
      return { name, dayStartMs: day };
    });
  }

  /**
   * Creates the partitions of the UTC days from the one holding `fromMs` to the one holding `toMs` that do not
   * exist yet. A day whose rows the default partition already holds (the service was stopped past the days it
   * had made) keeps them there: PostgreSQL refuses a partition that would take rows from the default one, so
   * that day is skipped, and the batched deletes remove its rows in time.
   * @returns the names of the partitions made.
   */
  async ensureDays(fromMs: number, toMs: number): Promise<string[]> {
    if (!isPostgres(this.#db)) return [];
    const existing = new Set((await this.list()).map((p) => p.name));
    const made: string[] = [];
    for (let day = Math.floor(fromMs / DAY_MS) * DAY_MS; day <= toMs; day += DAY_MS) {
      const name = resultPartitionName(day);
      if (existing.has(name)) continue;
      const created = await this.#locked(async (tx) => {
        const { rows } = await sql<{ taken: number }>`
          SELECT count(*)::int AS taken FROM (
            SELECT 1 FROM check_results_default WHERE created_at >= ${sql.lit(day)} AND created_at < ${sql.lit(day + DAY_MS)} LIMIT 1
          ) t`.execute(tx);
        if ((rows[0]?.taken ?? 0) > 0) return false;
        await sql`CREATE TABLE IF NOT EXISTS ${sql.table(name)} PARTITION OF check_results
          FOR VALUES FROM (${sql.lit(day)}) TO (${sql.lit(day + DAY_MS)})`.execute(tx);
        return true;
      });
      if (created) made.push(name);
    }
    return made;
  }

  /**
   * Drops the day partitions whose day ended by `cutoffMs` (epoch ms; results stored before it go), each
   * counted first. A partition with a row whose artifact files are still kept (`has_artifacts = 1`) stays: the
   * artifact task removes the files first, and the batched deletes take the rows. The default partition is
   * never dropped.
   */
  async dropEndedBy(cutoffMs: number): Promise<PartitionDrop> {
    const out: PartitionDrop = { dropped: 0, rows: 0, kept: [] };
    for (const partition of await this.list()) {
      if (partition.dayStartMs + DAY_MS > cutoffMs) break;
      const rows = await this.#locked(async (tx) => {
        const { rows: found } = await sql<{ n: string | null; artifacts: number | null }>`
          SELECT count(*) AS n, max(has_artifacts) AS artifacts FROM ${sql.table(partition.name)}`.execute(
          tx,
        );
        if (Number(found[0]?.artifacts ?? 0) > 0) return null;
        await sql`DROP TABLE ${sql.table(partition.name)}`.execute(tx);
        return Number(found[0]?.n ?? 0);
      });
      if (rows === null) out.kept.push(partition.name);
      else {
        out.dropped += 1;
        out.rows += rows;
      }
    }
    return out;
  }

  /**
   * Runs `work` in a transaction of its own under the partition lock, waiting at most LOCK_TIMEOUT_MS for a
   * table lock. Resolves null when a lock was busy or the partition went meanwhile (another replica's pass).
   */
  async #locked<T>(work: (tx: Kysely<Database>) => Promise<T>): Promise<T | null> {
    try {
      return await this.#db.transaction().execute(async (tx) => {
        await sql`SELECT set_config('lock_timeout', ${String(LOCK_TIMEOUT_MS)}, true)`.execute(tx);
        await sql`SELECT pg_advisory_xact_lock(${sql.lit(PARTITION_LOCK_ID)})`.execute(tx);
        return work(tx);
      });
    } catch (err) {
      // 55P03 lock_not_available (lock_timeout); 42P01 undefined_table (dropped by another replica first);
      // 23514 check_violation (a row of the day reached the default partition between the check and the creation).
      const code = (err as { code?: string }).code;
      if (code === '55P03' || code === '42P01' || code === '23514') return null;
      throw err;
    }
  }
}
