import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Kysely, sql } from 'kysely';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createAccount } from '../../../../src/service/platform/http/auth.js';
import { retentionTasks } from '../../../../src/service/modules.js';
import type { Database } from '../../../../src/service/platform/store/database.js';
import { resultPartitionName } from '../../../../src/service/platform/store/migrations/0025_result_partitions.js';
import { migrateTo, migrateToLatest } from '../../../../src/service/platform/store/migrations/index.js';
import { openPostgresDatabase } from '../../../../src/service/platform/store/postgres.js';
import { ResultPartitions } from '../../../../src/service/platform/store/result-partitions.js';
import { RetentionWorker } from '../../../../src/service/platform/store/retention.js';
import { ArtifactStore } from '../../../../src/service/runs/artifacts/artifacts.js';
import { openSqliteDatabase } from '../../../../src/service/platform/store/database.js';
import { createDatabase, dropDatabase } from '../../../helpers/postgres.js';
import { TEST_DATABASE, testStore } from '../../../helpers/service.js';

// Issue 25, 4: on PostgreSQL results are partitioned by day (migration 0025); retention drops the partitions of
// days past OUTPOST_RESULT_RETENTION_DAYS and makes the week ahead's. SQLite keeps one table and deletes in batches.

const DAY = 86_400_000;
const NOW = Date.now();
const TODAY = Math.floor(NOW / DAY) * DAY;

let drop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await drop?.();
  drop = undefined;
});

/** A FINAL result row of `accountId` stored (created_at) at `createdAt`. */
function resultRow(accountId: string, createdAt: number, hasArtifacts = 0) {
  return {
    id: randomUUID(),
    account_id: accountId,
    check_id: 'c1',
    job_id: randomUUID(),
    check_session_id: null,
    run_location: 'eu-west-1',
    status: 'PASSED' as const,
    has_failures: 0,
    has_errors: 0,
    is_degraded: 0,
    response_time: 10,
    result_type: 'FINAL' as const,
    started_at: createdAt - 100,
    stopped_at: createdAt - 50,
    doc: '{}' as never,
    created_at: createdAt,
    phase_wait: null,
    phase_dns: null,
    phase_tcp: null,
    phase_first_byte: null,
    phase_download: null,
    status_code: null,
    agent_id: null,
    result_hash: null,
    has_artifacts: hasArtifacts,
  };
}

/** The partition each of `ids` is stored in (PostgreSQL's `tableoid`), by id. */
async function partitionsOf(db: Kysely<Database>): Promise<Map<string, string>> {
  const { rows } = await sql<{ id: string; part: string }>`
    SELECT id, tableoid::regclass::text AS part FROM check_results`.execute(db);
  return new Map(rows.map((r) => [r.id, r.part]));
}

const worker = (db: Kysely<Database>) =>
  new RetentionWorker(
    db,
    retentionTasks({ artifacts: new ArtifactStore(join(tmpdir(), `outpost-artifacts-${randomUUID()}`)) }),
    {
      resultDays: 90,
      artifactDays: 30,
      agentDays: 30,
      log: pino({ level: 'silent' }),
    },
  );

describe('result partitions', () => {
  it('stores each result in its day partition on PostgreSQL (one table on SQLite), with the week ahead made', async () => {
    const store = await testStore();
    drop = store.drop;
    const { db } = store;
    const accountId = await createAccount(db, 'A');
    const today = resultRow(accountId, NOW);
    const old = resultRow(accountId, NOW - 500 * DAY);
    await db.insertInto('check_results').values([today, old]).execute();
    const parts = new ResultPartitions(db);
    if (TEST_DATABASE === 'sqlite') {
      expect(await parts.list()).toEqual([]);
      expect(await parts.ensureDays(NOW, NOW + 7 * DAY)).toEqual([]);
      expect(await parts.dropEndedBy(NOW)).toEqual({ dropped: 0, rows: 0, kept: [] });
      return;
    }
    const names = (await parts.list()).map((p) => p.name);
    for (let d = 0; d <= 7; d++) expect(names).toContain(resultPartitionName(TODAY + d * DAY));
    const where = await partitionsOf(db);
    expect(where.get(today.id)).toBe(resultPartitionName(TODAY));
    // A day without a partition (500 days back) is held by the default partition.
    expect(where.get(old.id)).toBe('check_results_default');
    // Reads see the table whole.
    expect(await db.selectFrom('check_results').select('id').orderBy('created_at').execute()).toEqual([
      { id: old.id },
      { id: today.id },
    ]);
  });

  it('retention drops the days past the cut-off as partitions, counts their rows, and deletes the rest in batches', async () => {
    const store = await testStore();
    drop = store.drop;
    const { db } = store;
    const accountId = await createAccount(db, 'A');
    const parts = new ResultPartitions(db);
    // Days 95 to 100 back get partitions of their own (on a store that has run that long they would exist).
    const made = await parts.ensureDays(NOW - 100 * DAY, NOW - 95 * DAY);
    expect(made.length).toBe(TEST_DATABASE === 'postgres' ? 6 : 0);
    const expired = [
      ...[100, 99, 98, 97, 96, 95].flatMap((d) => [
        resultRow(accountId, TODAY - d * DAY + 1000),
        resultRow(accountId, TODAY - d * DAY + 5000),
      ]),
      resultRow(accountId, NOW - 300 * DAY), // the default partition's
    ];
    const kept = [resultRow(accountId, NOW - 89 * DAY), resultRow(accountId, NOW)];
    await db
      .insertInto('check_results')
      .values([...expired, ...kept])
      .execute();
    const outcome = await worker(db).runOnce(NOW);
    expect(outcome.results).toBe(expired.length);
    const left = await db.selectFrom('check_results').select('id').execute();
    expect(left.map((r) => r.id).sort()).toEqual(kept.map((r) => r.id).sort());
    if (TEST_DATABASE === 'sqlite') return;
    const names = (await parts.list()).map((p) => p.name);
    for (const d of [100, 99, 98, 97, 96, 95])
      expect(names).not.toContain(resultPartitionName(TODAY - d * DAY));
    // Yesterday to a week ahead exist after a pass.
    for (let d = -1; d <= 7; d++) expect(names).toContain(resultPartitionName(TODAY + d * DAY));
    // A second pass has nothing to do.
    expect((await worker(db).runOnce(NOW)).results).toBe(0);
  });

  it('keeps a partition past the cut-off that holds a result with artifact files, and a day the default partition holds', async () => {
    const store = await testStore();
    drop = store.drop;
    const { db } = store;
    if (TEST_DATABASE === 'sqlite') {
      expect(await new ResultPartitions(db).dropEndedBy(NOW)).toEqual({ dropped: 0, rows: 0, kept: [] });
      return;
    }
    const accountId = await createAccount(db, 'A');
    const parts = new ResultPartitions(db);
    await parts.ensureDays(NOW - 120 * DAY, NOW - 119 * DAY);
    await db
      .insertInto('check_results')
      .values([resultRow(accountId, TODAY - 120 * DAY + 10, 1), resultRow(accountId, TODAY - 119 * DAY + 10)])
      .execute();
    const dropped = await parts.dropEndedBy(NOW - 90 * DAY);
    expect(dropped).toEqual({ dropped: 1, rows: 1, kept: [resultPartitionName(TODAY - 120 * DAY)] });
    // A day whose rows went to the default partition gets no partition: PostgreSQL would refuse it.
    await db
      .insertInto('check_results')
      .values(resultRow(accountId, TODAY - 200 * DAY + 10))
      .execute();
    expect(await parts.ensureDays(TODAY - 201 * DAY, TODAY - 199 * DAY)).toEqual([
      resultPartitionName(TODAY - 201 * DAY),
      resultPartitionName(TODAY - 199 * DAY),
    ]);
  });

  it('the migration moves the results a store already holds into their day partitions, indexes and all', async () => {
    let db: Kysely<Database>;
    if (TEST_DATABASE === 'postgres') {
      const admin = inject('postgresAdminUrl')!;
      const url = await createDatabase(admin);
      db = await openPostgresDatabase(url, { migrate: false });
      drop = async () => {
        await db.destroy();
        await dropDatabase(admin, url);
      };
    } else {
      db = await openSqliteDatabase(':memory:');
      drop = () => db.destroy();
      // openSqliteDatabase migrated it: this dialect has nothing to convert; the rows still read back.
    }
    if (TEST_DATABASE === 'postgres') await migrateTo(db as Kysely<unknown>, '0024_daily_rollups');
    const accountId = await createAccount(db, 'A');
    const rows = [
      resultRow(accountId, NOW),
      resultRow(accountId, NOW - 3 * DAY),
      resultRow(accountId, NOW - 3 * DAY + 1),
      resultRow(accountId, NOW - 450 * DAY),
    ];
    await db.insertInto('check_results').values(rows).execute();
    const before =
      TEST_DATABASE === 'postgres'
        ? (
            await sql<{
              indexname: string;
            }>`SELECT indexname FROM pg_indexes WHERE tablename = 'check_results'`.execute(db)
          ).rows.map((r) => r.indexname)
        : [];
    await migrateToLatest(db as Kysely<unknown>);
    const back = await db.selectFrom('check_results').selectAll().orderBy('created_at').execute();
    expect(back.map((r) => r.id)).toEqual(
      [...rows].sort((a, b) => a.created_at - b.created_at).map((r) => r.id),
    );
    expect(back.map((r) => Number(r.started_at))).toEqual(
      [...rows].sort((a, b) => a.created_at - b.created_at).map((r) => r.started_at),
    );
    if (TEST_DATABASE === 'sqlite') return;
    const where = await partitionsOf(db);
    expect(where.get(rows[0]!.id)).toBe(resultPartitionName(TODAY));
    expect(where.get(rows[1]!.id)).toBe(resultPartitionName(Math.floor((NOW - 3 * DAY) / DAY) * DAY));
    // Beyond the 400 days the migration makes partitions for: the default partition.
    expect(where.get(rows[3]!.id)).toBe('check_results_default');
    const { rows: kind } = await sql<{ relkind: string }>`
      SELECT relkind FROM pg_class WHERE relname = 'check_results'`.execute(db);
    expect(kind).toEqual([{ relkind: 'p' }]);
    // Every index of the earlier migrations is back under its own name, but the unique one of one FINAL result
    // per job (the ingest keeps that rule); the primary key now holds the partition key.
    const after = (
      await sql<{
        indexname: string;
      }>`SELECT indexname FROM pg_indexes WHERE tablename = 'check_results'`.execute(db)
    ).rows.map((r) => r.indexname);
    expect(after.sort()).toEqual(before.filter((n) => n !== 'check_results_final_job').sort());
    const { rows: pk } = await sql<{ def: string }>`
      SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'check_results_pkey'`.execute(
      db,
    );
    expect(pk).toEqual([{ def: 'PRIMARY KEY (id, created_at)' }]);
  });
});
