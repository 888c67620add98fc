import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import { OutpostError } from '../../../common/errors.js';
import { openSqliteDatabase } from './database.js';
import { latestMigration } from './migrations/index.js';
import { openPostgresDatabase, redactDatabaseUrl } from './postgres.js';
import { PARTITION_DAYS_BACK, ResultPartitions } from './result-partitions.js';
import type { Database } from './schema.js';
import { KEY_FILE_NAME, loadOrCreateKeyFile, parseSecretKey, SecretBox } from './secret-box.js';
import { mapSecrets } from './secret-fields.js';
import type { SecretDocTable } from './secrets-at-rest.js';
import { SQLite } from './sqlite.js';

/** Name of the SQLite store file inside a data directory (as `outpost service` names it). */
const STORE_FILE_NAME = 'outpost.db';

/** Rows read from the SQLite store per query (keyset on rowid), at most. */
const READ_BATCH_ROWS = 500;
/** Bytes of values a read batch should stay near: a batch of large rows makes the next one smaller. */
const READ_BATCH_BYTES = 32 * 1024 * 1024;
/** Bytes of values one INSERT carries at most (a single larger row still goes alone). */
const INSERT_MAX_BYTES = 16 * 1024 * 1024;
/** Bound parameters of one INSERT at most (PostgreSQL's protocol allows 65535). */
const INSERT_MAX_PARAMETERS = 60_000;
/** Transaction-scoped advisory lock taken by the copy, so two copies into one database take turns. */
const MOVE_LOCK_ID = 0x6f7073; // "ops"

/**
 * A move that was refused or failed, with the one line a person reads (no password: the target is named
 * with {@link redactDatabaseUrl}). Nothing was kept in the target when this is thrown.
 */
export class MoveStoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MoveStoreError';
  }
}

/** What {@link moveSqliteToPostgres} needs. */
export type MoveStoreOptions = {
  /** The SQLite data directory (`OUTPOST_DATA_DIR` of the service that wrote it), or its `outpost.db` file. */
  from: string;
  /** The PostgreSQL URL (`postgres://user:password@host:5432/db`); only its redacted form is ever printed. */
  to: string;
  /**
   * `OUTPOST_ENCRYPTION_KEY` as set for the PostgreSQL service (base64 or hex text), or undefined: the key
   * file of the data directory is used, and must then be given to the PostgreSQL service.
   */
  encryptionKey: string | undefined;
  /** The tables whose documents hold sealed secrets (src/service/modules.ts, SECRET_DOC_TABLES). */
  secretDocTables: readonly SecretDocTable[];
  /** Called once per table, in copy order, when its rows are copied and counted in both stores. */
  onTable?: (table: TableReport) => void;
};

/** One copied table: its name and its row count (the same in both stores). */
export type TableReport = { table: string; rows: number };

/** What {@link moveSqliteToPostgres} did once the copy is committed. */
export type MoveReport = {
  /** The SQLite store file read. */
  sourceFile: string;
  /** The target, password redacted. */
  target: string;
  /** The latest migration of both stores. */
  migration: string;
  /** Every copied table in copy order (foreign keys first). */
  tables: TableReport[];
  /** Sum of `tables[].rows`. */
  rows: number;
  /** Identity sequences moved past the largest copied (or ever used) id. */
  sequences: number;
  /** Sealed secrets opened with the key (`verified`), and secrets still in clear that the service seals at start. */
  secrets: { verified: number; clear: number };
  /**
   * The planner's statistics of the copied tables: `gathered` by an ANALYZE after the commit, or `left to
   * autovacuum` when that ANALYZE failed (the copy stands; reads may take the wrong index until then).
   */
  statistics: 'gathered' | 'left to autovacuum';
  /**
   * The key the PostgreSQL service must use: `env` (OUTPOST_ENCRYPTION_KEY, already set), `file` (the data
   * directory's key file: `base64` is the value to set as OUTPOST_ENCRYPTION_KEY), or `none` (no key exists
   * and the store holds no sealed secret: any new key will do).
   */
  key: { source: 'env' } | { source: 'file'; path: string; base64: string } | { source: 'none' };
};

/** A table of the SQLite store to copy: its columns, the tables it references, and how to page through it. */
type TablePlan = { name: string; columns: string[]; references: string[]; rowid: boolean };

/** The key and box the copy is verified with, and how the report names it. */
type KeyChoice = { box: SecretBox | undefined; key: MoveReport['key'] };

/** A refused or failed SQLite statement's code (`SQLITE_BUSY`…), or null. */
function codeOf(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

/**
 * The store file of `from`: `<dir>/outpost.db` for a directory, the file itself for a file.
 * @throws MoveStoreError when there is no store there (it is never created).
 */
function sourceFileOf(from: string): string {
  const path = resolve(from);
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch {
    throw new MoveStoreError(`--from: ${path} does not exist (give the data directory of the SQLite store)`);
  }
  const file = isFile ? path : join(path, STORE_FILE_NAME);
  if (!existsSync(file)) {
    throw new MoveStoreError(
      `--from: there is no SQLite store ${file} (give the service's OUTPOST_DATA_DIR)`,
    );
  }
  return file;
}

/**
 * Fails when another process has the SQLite store open (a running `outpost service` keeps its connection
 * for its whole life): an exclusive lock (`locking_mode = EXCLUSIVE`, `BEGIN IMMEDIATE`, no busy wait) is
 * refused with SQLITE_BUSY then. The lock is released at once.
 * @throws MoveStoreError saying to stop the service.
 */
function assertSourceNotInUse(file: string): void {
  let probe: InstanceType<typeof SQLite> | undefined;
  try {
    probe = new SQLite(file, { fileMustExist: true });
    probe.pragma('busy_timeout = 0');
    probe.pragma('locking_mode = EXCLUSIVE');
    probe.exec('BEGIN IMMEDIATE');
    probe.exec('ROLLBACK');
  } catch (err) {
    if (codeOf(err)?.startsWith('SQLITE_BUSY') || codeOf(err)?.startsWith('SQLITE_LOCKED')) {
      throw new MoveStoreError(
        `the SQLite store ${file} is in use by another process: stop \`outpost service\` (or \`outpost up\`) on it first, so that nothing is written during the copy`,
        { cause: err },
      );
    }
    throw new MoveStoreError(
      `the SQLite store ${file} cannot be opened: ${(err as Error).message.split('\n')[0]}`,
      {
        cause: err,
      },
    );
  } finally {
    probe?.close();
  }
}

/**
 * The key the PostgreSQL service will use: `encryptionKey` (OUTPOST_ENCRYPTION_KEY) when given, else the
 * data directory's key file read by the secret box's own reader (mode and format checked), else none.
 * @throws OutpostError OUTPOST_ERR_CONFIG when `encryptionKey` is not a 32-byte base64 or hex key;
 *   OUTPOST_ERR_ENCRYPTION_KEY when the key file is unsafe or holds no key.
 */
function chooseKey(encryptionKey: string | undefined, dataDir: string): KeyChoice {
  if (encryptionKey !== undefined) {
    const key = parseSecretKey(encryptionKey);
    if (key === null) {
      throw new OutpostError(
        'OUTPOST_ERR_CONFIG',
        `OUTPOST_ENCRYPTION_KEY must be 32 bytes as base64 (44 characters) or hex (64), got ${encryptionKey.trim().length} characters`,
      );
    }
    return { box: new SecretBox(key, 'OUTPOST_ENCRYPTION_KEY'), key: { source: 'env' } };
  }
  const path = join(dataDir, KEY_FILE_NAME);
  if (!existsSync(path)) return { box: undefined, key: { source: 'none' } };
  // The file exists, so this only reads it (refusing a file readable by others or without a key).
  const key = loadOrCreateKeyFile(dataDir);
  return {
    box: new SecretBox(key, path),
    key: { source: 'file', path, base64: key.toString('base64') },
  };
}

/** Rows of a raw query on either store. */
async function rows<T>(db: Kysely<Database> | Transaction<Database>, query: RawBuilder<T>): Promise<T[]> {
  return (await query.execute(db)).rows;
}

/** The tables of the SQLite store to copy (not SQLite's own, not Kysely's migration tables), with their columns. */
async function planTables(source: Kysely<Database>): Promise<TablePlan[]> {
  const tables = await rows(
    source,
    sql<{ name: string; sql: string | null }>`select name, sql from sqlite_master
      where type = 'table' and name not like 'sqlite\\_%' escape '\\' and name not like 'kysely\\_migration%' escape '\\'
      order by name`,
  );
  const plans: TablePlan[] = [];
  for (const { name, sql: ddl } of tables) {
    const columns = (
      await rows(source, sql<{ name: string }>`select name from pragma_table_info(${name}) order by cid`)
    ).map((c) => c.name);
    const references = (
      await rows(
        source,
        sql<{ table: string }>`select distinct "table" from pragma_foreign_key_list(${name})`,
      )
    )
      .map((r) => r.table)
      .filter((t) => t !== name);
    plans.push({ name, columns, references, rowid: !/\bwithout\s+rowid\b/i.test(ddl ?? '') });
  }
  return plans;
}

/**
 * `plans` in an order where every table comes after the tables it references (Kahn's algorithm, names in
 * alphabetical order among the ready ones).
 * @throws MoveStoreError on a cycle of references, which no insert order satisfies.
 */
function inForeignKeyOrder(plans: TablePlan[]): TablePlan[] {
  const byName = new Map(plans.map((p) => [p.name, p]));
  const done = new Set<string>();
  const ordered: TablePlan[] = [];
  while (ordered.length < plans.length) {
    const ready = plans.find(
      (p) => !done.has(p.name) && p.references.every((r) => done.has(r) || !byName.has(r)),
    );
    if (ready === undefined) {
      const left = plans.filter((p) => !done.has(p.name)).map((p) => p.name);
      throw new MoveStoreError(
        `the foreign keys of ${left.join(', ')} form a cycle: no copy order satisfies them`,
      );
    }
    done.add(ready.name);
    ordered.push(ready);
  }
  return ordered;
}

/**
 * Fails unless the target has exactly the source's tables and, in each, the same columns (they were
 * migrated by the same migrations, so anything else is a store this version did not make). The partitions of
 * a partitioned table (`check_results`' days, migration 0025) are part of their table, not tables of their own.
 */
async function assertSameTables(target: Kysely<Database>, plans: TablePlan[]): Promise<void> {
  const found = await rows(
    target,
    sql<{
      table_name: string;
      column_name: string;
    }>`select table_name, column_name from information_schema.columns
      where table_schema = current_schema() and table_name not like 'kysely\\_migration%'
        and table_name not in (select relname from pg_class where relispartition)`,
  );
  const columns = new Map<string, Set<string>>();
  for (const { table_name, column_name } of found) {
    const set = columns.get(table_name) ?? new Set<string>();
    set.add(column_name);
    columns.set(table_name, set);
  }
  const problems: string[] = [];
  for (const plan of plans) {
    const there = columns.get(plan.name);
    if (there === undefined) {
      problems.push(`${plan.name} is missing`);
      continue;
    }
    const missing = plan.columns.filter((c) => !there.has(c));
    const extra = [...there].filter((c) => !plan.columns.includes(c));
    if (missing.length > 0 || extra.length > 0) {
      problems.push(
        `${plan.name} differs (missing: ${missing.join(', ') || '-'}; extra: ${extra.join(', ') || '-'})`,
      );
    }
    columns.delete(plan.name);
  }
  for (const table of columns.keys()) problems.push(`${table} is not in the SQLite store`);
  if (problems.length > 0) {
    throw new MoveStoreError(`the two stores' tables differ: ${problems.join('; ')}`);
  }
}

/** Rough size of a row's values in bytes (strings and buffers by length), to bound batches. */
function sizeOf(row: Record<string, unknown>): number {
  let bytes = 0;
  for (const value of Object.values(row)) {
    if (typeof value === 'string') bytes += value.length;
    else if (Buffer.isBuffer(value)) bytes += value.length;
    else bytes += 8;
  }
  return bytes;
}

/** Inserts `batch` into `table` of the target with as few statements as the parameter and size bounds allow. */
async function insertRows(
  tx: Transaction<Database>,
  plan: TablePlan,
  batch: Record<string, unknown>[],
): Promise<void> {
  const maxRows = Math.max(1, Math.floor(INSERT_MAX_PARAMETERS / Math.max(1, plan.columns.length)));
  const columnList = sql.join(plan.columns.map((c) => sql.id(c)));
  let chunk: Record<string, unknown>[] = [];
  let bytes = 0;
  const flush = async () => {
    if (chunk.length === 0) return;
    const values = sql.join(chunk.map((row) => sql`(${sql.join(plan.columns.map((c) => row[c] ?? null))})`));
    await sql`insert into ${sql.id(plan.name)} (${columnList}) values ${values}`.execute(tx);
    chunk = [];
    bytes = 0;
  };
  for (const row of batch) {
    const size = sizeOf(row);
    if (chunk.length > 0 && (chunk.length >= maxRows || bytes + size > INSERT_MAX_BYTES)) await flush();
    chunk.push(row);
    bytes += size;
  }
  await flush();
}

/**
 * Copies every row of one table from the source into the target transaction, in batches read by rowid
 * (limit/offset for a table without rowid: the source is locked, so offsets are stable).
 * @returns the number of rows copied.
 */
async function copyTable(
  source: Kysely<Database>,
  tx: Transaction<Database>,
  plan: TablePlan,
): Promise<number> {
  const columnList = sql.join(plan.columns.map((c) => sql.id(c)));
  let copied = 0;
  let lastRowid = Number.MIN_SAFE_INTEGER;
  let limit = READ_BATCH_ROWS;
  for (;;) {
    const batch = plan.rowid
      ? await rows(
          source,
          sql<
            Record<string, unknown>
          >`select rowid as outpost_move_rowid, ${columnList} from ${sql.id(plan.name)}
            where rowid > ${lastRowid} order by rowid limit ${limit}`,
        )
      : await rows(
          source,
          sql<
            Record<string, unknown>
          >`select ${columnList} from ${sql.id(plan.name)} order by 1 limit ${limit} offset ${copied}`,
        );
    if (batch.length === 0) return copied;
    if (plan.rowid) lastRowid = Number(batch.at(-1)!.outpost_move_rowid);
    await insertRows(tx, plan, batch);
    copied += batch.length;
    // Large rows (results with bodies) make the next batch smaller, so memory stays near READ_BATCH_BYTES.
    const bytes = batch.reduce((sum, row) => sum + sizeOf(row), 0);
    limit = Math.max(
      1,
      Math.min(READ_BATCH_ROWS, Math.floor((READ_BATCH_BYTES * batch.length) / Math.max(1, bytes))),
    );
  }
}

/** Rows of `table` in a store. */
async function countRows(db: Kysely<Database> | Transaction<Database>, table: string): Promise<number> {
  const [row] = await rows(db, sql<{ n: number | string }>`select count(*) as n from ${sql.id(table)}`);
  return Number(row?.n ?? 0);
}

/**
 * Moves every identity (or serial) column's sequence of the target past the largest id copied, and past
 * the largest id SQLite ever gave the table (`sqlite_sequence`: `autoincrement` never reuses an id, even
 * one whose row was deleted), so new rows neither collide nor reuse an id.
 * @returns the number of sequences set.
 */
async function moveSequences(source: Kysely<Database>, tx: Transaction<Database>): Promise<number> {
  const identities = await rows(
    tx,
    sql<{
      table_name: string;
      column_name: string;
    }>`select table_name, column_name from information_schema.columns
      where table_schema = current_schema() and (is_identity = 'YES' or column_default like 'nextval(%')
      order by table_name`,
  );
  const hasSqliteSequence =
    (
      await rows(
        source,
        sql<{
          n: number;
        }>`select count(*) as n from sqlite_master where type = 'table' and name = 'sqlite_sequence'`,
      )
    )[0]?.n === 1;
  const used = new Map<string, number>();
  if (hasSqliteSequence) {
    for (const row of await rows(
      source,
      sql<{ name: string; seq: number }>`select name, seq from sqlite_sequence`,
    )) {
      used.set(row.name, Number(row.seq));
    }
  }
  let moved = 0;
  for (const { table_name: table, column_name: column } of identities) {
    const [max] = await rows(
      tx,
      sql<{ max: number | string | null }>`select max(${sql.id(column)}) as max from ${sql.id(table)}`,
    );
    const value = Math.max(Number(max?.max ?? 0), used.get(table) ?? 0);
    if (value < 1) continue;
    await sql`select setval(pg_get_serial_sequence(${`"${table.replaceAll('"', '""')}"`}, ${column}), ${value})`.execute(
      tx,
    );
    moved += 1;
  }
  return moved;
}

/** A header value or password that is only a `{{VARIABLE}}` reference: no secret, never sealed. */
const VARIABLE_REFERENCE = /^\{\{\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\}$/;

/**
 * Opens every sealed secret of the copied rows with the key the PostgreSQL service will use: the values the
 * service's start-up verifies (`sealStoredSecrets`), secret variables and the secret fields of `docTables`'
 * documents, at the same places (`<table>:<id>:<path>`). Values still in clear (a store written before
 * secrets were sealed) are counted: the service seals them at its first start.
 * @throws MoveStoreError naming the first value that does not open, or saying that no key exists.
 */
async function verifySecrets(
  tx: Transaction<Database>,
  box: SecretBox | undefined,
  docTables: readonly SecretDocTable[],
): Promise<{ verified: number; clear: number }> {
  const report = { verified: 0, clear: 0 };
  const open = (value: string, aad: string): string => {
    if (!SecretBox.isSealed(value)) {
      report.clear += 1;
      return value;
    }
    if (box === undefined) {
      throw new MoveStoreError(
        `the store holds sealed secrets (${aad}) but there is no key: set OUTPOST_ENCRYPTION_KEY to the key the SQLite service used, or put its ${KEY_FILE_NAME} back in the data directory`,
      );
    }
    try {
      box.open(value, aad);
    } catch (err) {
      throw new MoveStoreError((err as Error).message, { cause: err });
    }
    report.verified += 1;
    return value;
  };
  const variables = await tx
    .selectFrom('variables')
    .select(['id', 'value'])
    .where('secret', '=', 1)
    .execute();
  for (const row of variables) open(row.value, `variables:${row.id}:value`);
  const seeds = await tx
    .selectFrom('users')
    .select(['id', 'totp_secret'])
    .where('totp_secret', 'is not', null)
    .execute();
  for (const row of seeds) open(row.totp_secret!, `users:${row.id}:totp_secret`);
  const clients = await tx.selectFrom('sso_settings').select(['account_id', 'client_secret']).execute();
  for (const row of clients) open(row.client_secret, `sso_settings:${row.account_id}:client_secret`);
  for (const { table, layoutOf } of docTables) {
    const docs = (await tx.selectFrom(table).select(['id', 'doc']).execute()) as {
      id: string | number;
      doc: string;
    }[];
    for (const row of docs) {
      mapSecrets(JSON.parse(row.doc) as Record<string, unknown>, layoutOf(row.doc), (value, place) =>
        (place.kind === 'pair' || place.kind === 'password') &&
        (value === '' || VARIABLE_REFERENCE.test(value.trim()))
          ? value
          : open(value, `${table}:${row.id}:${place.path}`),
      );
    }
  }
  return report;
}

/**
 * Copies the embedded SQLite store of a data directory into an empty PostgreSQL database, so a service
 * started on SQLite moves to PostgreSQL with its accounts, keys, checks, results and history.
 *
 * In order: refuses a source another process has open (a running service; SQLITE_BUSY on an exclusive
 * lock); opens the target (migrated to the latest migration) and refuses it when it holds an account;
 * opens the source (migrated too) and refuses when the two stores' latest migrations differ, when their
 * tables or columns differ, or when the source breaks a foreign key. Then, holding an exclusive lock on the
 * source and inside one PostgreSQL transaction (a failure leaves the target as it was: empty): copies every
 * table but Kysely's migration tables, in foreign-key order, in batches (≤ 500 rows read per query, INSERTs
 * of ≤ 60000 parameters and ≈16 MiB), values as they are (sealed secrets stay sealed under the same key,
 * JSON documents are text in both stores); compares each table's row count in both stores; moves identity
 * sequences past the largest id; opens every sealed secret with the key the PostgreSQL service will use
 * (`encryptionKey`, else the data directory's key file). Then commits.
 *
 * @returns what was copied, and which key the PostgreSQL service needs.
 * @throws MoveStoreError (one line, the password redacted) for every refusal and failed check; nothing is
 *   kept in the target then.
 * @throws OutpostError OUTPOST_ERR_STARTUP when a store cannot be opened or migrated;
 *   OUTPOST_ERR_ENCRYPTION_KEY when the key file is unsafe or holds no key.
 */
export async function moveSqliteToPostgres(options: MoveStoreOptions): Promise<MoveReport> {
  const sourceFile = sourceFileOf(options.from);
  const dataDir = dirname(sourceFile);
  const target = redactDatabaseUrl(options.to);
  const keyChoice = chooseKey(options.encryptionKey, dataDir);
  assertSourceNotInUse(sourceFile);

  const pg = await openPostgresDatabase(options.to, { poolSize: 2 });
  let source: Kysely<Database> | undefined;
  try {
    if ((await countRows(pg, 'accounts')) > 0) {
      throw new MoveStoreError(
        `the target ${target} already holds an account: migrate-store copies into an empty database only (create a new one, or drop this one's tables)`,
      );
    }
    source = await openSqliteDatabase(sourceFile);
    const [from, to] = await Promise.all([
      latestMigration(source as unknown as Kysely<unknown>),
      latestMigration(pg as unknown as Kysely<unknown>),
    ]);
    if (from === null || from !== to) {
      throw new MoveStoreError(
        `the stores are at different migrations (SQLite ${from ?? 'none'}, PostgreSQL ${to ?? 'none'}): run this with the version of outpost that runs both`,
      );
    }
    const migration = from;

    // From here on nobody else may open the source: its data cannot change under the copy.
    await sql`PRAGMA busy_timeout = 0`.execute(source);
    await sql`PRAGMA locking_mode = EXCLUSIVE`.execute(source);
    try {
      await sql`BEGIN IMMEDIATE`.execute(source);
    } catch (err) {
      throw new MoveStoreError(
        `the SQLite store ${sourceFile} is in use by another process: stop the service on it first`,
        { cause: err },
      );
    }
    try {
      const broken = await rows(
        source,
        sql<{ table: string }>`select distinct "table" from pragma_foreign_key_check()`,
      );
      if (broken.length > 0) {
        throw new MoveStoreError(
          `the SQLite store has rows whose foreign keys point nowhere, in ${broken.map((b) => b.table).join(', ')}: PostgreSQL would refuse them`,
        );
      }
      const plans = inForeignKeyOrder(await planTables(source));
      await assertSameTables(pg, plans);
      // The results' day partitions (migration 0025) for the days the source's results were stored on, so they
      // land in their day's partition and retention drops them by the day; older than the migration's reach,
      // they go to the default partition. Empty tables are all a failed copy leaves of these.
      const [oldest] = await rows(
        source,
        sql<{ t: number | null }>`select min(created_at) as t from check_results`,
      );
      if (oldest?.t != null) {
        const fromMs = Math.max(Number(oldest.t), Date.now() - PARTITION_DAYS_BACK * 86_400_000);
        await new ResultPartitions(pg).ensureDays(fromMs, Date.now());
      }
      const sourceDb = source;
      const moved = await pg.transaction().execute(async (tx) => {
        await sql`select pg_advisory_xact_lock(${sql.lit(MOVE_LOCK_ID)})`.execute(tx);
        // A service starting on the target now waits for this commit before it makes its first account.
        await sql`lock table accounts in exclusive mode`.execute(tx);
        if ((await countRows(tx, 'accounts')) > 0) {
          throw new MoveStoreError(`the target ${target} got an account meanwhile: nothing was copied`);
        }
        const tables: TableReport[] = [];
        for (const plan of plans) {
          let copied: number;
          try {
            copied = await copyTable(sourceDb, tx, plan);
          } catch (err) {
            if (err instanceof MoveStoreError) throw err;
            const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
            throw new MoveStoreError(`copying ${plan.name} failed: ${reason}`, { cause: err });
          }
          const [inSource, inTarget] = [await countRows(sourceDb, plan.name), await countRows(tx, plan.name)];
          if (inSource !== copied || inTarget !== inSource) {
            throw new MoveStoreError(
              `${plan.name}: ${inSource} rows in SQLite, ${copied} copied, ${inTarget} in PostgreSQL`,
            );
          }
          const report = { table: plan.name, rows: inTarget };
          tables.push(report);
          options.onTable?.(report);
        }
        const sequences = await moveSequences(sourceDb, tx);
        const secrets = await verifySecrets(tx, keyChoice.box, options.secretDocTables);
        return {
          sourceFile,
          target,
          migration,
          tables,
          rows: tables.reduce((sum, t) => sum + t.rows, 0),
          sequences,
          secrets,
          key: keyChoice.key,
          statistics: 'left to autovacuum' as MoveReport['statistics'],
        };
      });
      // Committed. The planner has no statistics of the new rows yet, and until autovacuum gathers them (a
      // minute or more) it may pick the wrong index: a check's hourly rows read through the account's index
      // took 26 ms instead of 0.3 ms at 10,000 checks. PostgreSQL's advice after a bulk load: ANALYZE.
      try {
        await sql`ANALYZE`.execute(pg);
        moved.statistics = 'gathered';
      } catch {
        // The copy stands; autovacuum gathers them in its time.
      }
      return moved;
    } finally {
      await sql`ROLLBACK`.execute(source).catch(() => {});
    }
  } catch (err) {
    if (err instanceof MoveStoreError) throw err;
    // Opening a store explains itself (OUTPOST_ERR_STARTUP, the URL redacted), as do key file problems.
    if (err instanceof OutpostError) throw err;
    // A driver error may quote the URL it was given: only the redacted form leaves this function.
    const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
    throw new MoveStoreError(`the copy into ${target} failed: ${reason.replaceAll(options.to, target)}`, {
      cause: err,
    });
  } finally {
    await source?.destroy().catch(() => {});
    await pg.destroy().catch(() => {});
  }
}
