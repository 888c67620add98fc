import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { startWalCheckpointer } from './wal-checkpointer.js';
import { SQLite, type SQLiteDatabase } from './sqlite.js';
import {
  type BinaryOperationNode,
  ColumnNode,
  Kysely,
  type Driver,
  type LimitNode,
  OperatorNode,
  type QueryCompiler,
  ReferenceNode,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteQueryCompiler,
  type SqliteStatement,
  ValueNode,
} from 'kysely';
import { OutpostError } from '../../../common/errors.js';
import { migrateToLatest } from './migrations/index.js';
import type { Database } from './schema.js';

export type { Database };

/** A ROLLBACK or ROLLBACK TO (savepoint) statement, as Kysely writes them. */
const ROLLBACK = /^\s*rollback\b/i;

/** Stands in for a ROLLBACK when SQLite already ended the transaction (see {@link skipsDeadRollback}). */
const NO_OP_STATEMENT: SqliteStatement = {
  reader: false,
  run: () => ({ changes: 0, lastInsertRowid: 0 }),
  all: () => [],
  iterate: () => [][Symbol.iterator](),
};

/**
 * Whether `sql` is a ROLLBACK with no transaction left to roll back. SQLite ends a transaction by itself
 * when a statement in it fails with SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY or SQLITE_NOMEM
 * (sqlite.org/lang_transaction.html, "Response To Errors Within A Transaction"); Kysely's ROLLBACK that
 * follows would then fail with `cannot rollback - no transaction is active` (or `no such savepoint`), and
 * that error, not the first one, would reach the caller, the log and the answer. Skipped, the first error
 * is the one Kysely rethrows.
 */
function skipsDeadRollback(sqlite: SQLiteDatabase, sql: string): boolean {
  return !sqlite.inTransaction && ROLLBACK.test(sql);
}

/** Statement methods whose errors are recorded while the store opens. */
const STATEMENT_CALLS = new Set(['all', 'get', 'run', 'iterate']);

/**
 * A better-sqlite3 handle for Kysely that records the first error any statement threw, for the
 * start-up error (a migration fails on a full disk with SQLITE_FULL, a damaged store with
 * SQLITE_CORRUPT…). A ROLLBACK after SQLite ended the transaction itself is skipped
 * ({@link skipsDeadRollback}). `close` is a no-op: the handle outlives this Kysely instance.
 */
function recordingHandle(sqlite: SQLiteDatabase, onError: (err: unknown) => void) {
  const record = <T>(call: () => T): T => {
    try {
      return call();
    } catch (err) {
      onError(err);
      throw err;
    }
  };
  return {
    close() {},
    prepare(sql: string) {
      if (skipsDeadRollback(sqlite, sql)) return NO_OP_STATEMENT;
      const statement = record(() => sqlite.prepare(sql));
      return new Proxy(statement, {
        get(target, prop) {
          const value = Reflect.get(target, prop, target) as unknown;
          if (typeof value !== 'function') return value;
          if (!STATEMENT_CALLS.has(String(prop))) return value.bind(target);
          return (...args: unknown[]) =>
            record(() => (value as (...a: unknown[]) => unknown).apply(target, args));
        },
      });
    },
  };
}

/**
 * Columns that a partial index's condition compares with a constant: `check_results_final_job` (`WHERE
 * result_type = 'FINAL'`) and `check_results_details_pending` (`WHERE details_settled = 0`). Their values take
 * few forms (FINAL or ATTEMPT, 0 or 1), so writing them into the SQL adds a statement or two to the cache.
 */
const PARTIAL_INDEX_COLUMNS: ReadonlySet<string> = new Set(['result_type', 'details_settled']);

/**
 * Kysely's SQLite compiler, but values that SQLite would make it prepare a statement again on every run are
 * written into the SQL instead of bound (Kysely binds every value):
 * - a LIMIT of a whole number (`limit 16`, not `limit ?`). SQLite 3.53 (better-sqlite3 12) prepares a statement
 *   whose LIMIT is a bound parameter again on every run: the delivery worker's due-notification query took 18 µs
 *   with `limit ?` and 1.7 µs with `limit 16` (an empty index range either way). A LIMIT that is not a whole
 *   number ≥ 0 (a Statement's placeholder, an expression) is compiled as Kysely compiles it. Each distinct limit
 *   is a statement of its own in the cache: a handful per query (page sizes, batch sizes).
 * - a string or number compared with `=` to a column of PARTIAL_INDEX_COLUMNS (`result_type = 'FINAL'`). To
 *   decide whether a partial index can serve a statement, SQLite compares the statement's terms with the
 *   index's condition, and for a term on the same column it uses the value bound, so it marks the statement
 *   to be prepared again at every bind. With the ten indexes of `check_results` that planning is dear: the
 *   alerting's newer-run probe, run for every result, took 21–24 µs with the value bound and 5–6 µs written
 *   (20,000 runs each on a store of 10,000 results). A Statement's placeholder stays bound.
 * Strings are written as Kysely writes any string literal (quotes doubled).
 */
export class LiteralSqliteCompiler extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    const limit = node.limit;
    if (
      ValueNode.is(limit) &&
      typeof limit.value === 'number' &&
      Number.isSafeInteger(limit.value) &&
      limit.value >= 0
    ) {
      this.append(`limit ${limit.value}`);
      return;
    }
    super.visitLimit(node);
  }

  protected override visitBinaryOperation(node: BinaryOperationNode): void {
    const { leftOperand: left, operator, rightOperand: right } = node;
    if (
      ReferenceNode.is(left) &&
      ColumnNode.is(left.column) &&
      PARTIAL_INDEX_COLUMNS.has(left.column.column.name) &&
      OperatorNode.is(operator) &&
      operator.operator === '=' &&
      ValueNode.is(right) &&
      !right.immediate &&
      (typeof right.value === 'string' || (typeof right.value === 'number' && Number.isFinite(right.value)))
    ) {
      super.visitBinaryOperation({ ...node, rightOperand: ValueNode.createImmediate(right.value) });
      return;
    }
    super.visitBinaryOperation(node);
  }
}

/** Kysely's SqliteDialect with {@link LiteralSqliteCompiler}. */
export class OutpostSqliteDialect extends SqliteDialect {
  readonly #closed: (() => Promise<void>) | undefined;

  /**
   * @param config Kysely's, and `closed`: resolves once everything of the store that closes with it (the WAL
   *   checkpointer's thread) has closed; `Kysely.destroy()` waits for it.
   */
  constructor(config: SqliteDialectConfig & { closed?: (() => Promise<void>) | undefined }) {
    super(config);
    this.#closed = config.closed;
  }

  override createQueryCompiler(): QueryCompiler {
    return new LiteralSqliteCompiler();
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    const closed = this.#closed;
    if (closed === undefined) return driver;
    // Kysely's SQLite driver closes the handle and returns: the checkpointer's connection is waited for here.
    const destroy = driver.destroy.bind(driver);
    driver.destroy = async () => {
      await destroy();
      await closed();
    };
    return driver;
  }
}

/** Statements kept prepared per store (see cachingHandle); the service's queries are a few hundred shapes. */
const STATEMENT_CACHE_SIZE = 2000;

/**
 * A better-sqlite3 handle for Kysely that keeps prepared statements by SQL text: Kysely prepares
 * every query it runs, which costs as much as running a small one (a fifth of the CPU of storing a
 * result). Safe because Kysely runs each statement to completion synchronously (`all`/`run`); the
 * service never streams (`iterate`), which would keep a statement busy. Past
 * STATEMENT_CACHE_SIZE shapes (queries built with varying `in` lists grow it, and the LIMITs and
 * partial-index values {@link LiteralSqliteCompiler} writes into the SQL by a handful each) the
 * cache starts over. A ROLLBACK after SQLite ended the transaction itself is skipped
 * ({@link skipsDeadRollback}), so a failed transaction reports its first error.
 */
function cachingHandle(sqlite: SQLiteDatabase, beforeClose?: () => unknown) {
  const statements = new Map<string, ReturnType<SQLiteDatabase['prepare']>>();
  return {
    close() {
      beforeClose?.();
      statements.clear();
      sqlite.close();
    },
    prepare(sql: string) {
      if (skipsDeadRollback(sqlite, sql)) return NO_OP_STATEMENT;
      let statement = statements.get(sql);
      if (!statement) {
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear();
        statement = sqlite.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

/** Mode of the data directory: its owner only (docs/configuration.md, "The data directory"). */
export const DATA_DIR_MODE = 0o700;
/** Mode of the store's files (`outpost.db`, `-wal`, `-shm`): read and written by their owner only. */
export const STORE_FILE_MODE = 0o600;

/**
 * Takes from `path` every permission `mode` does not grant (group and others, for 0700 and 0600) when it
 * exists and belongs to this process's user; a path of another user, a failure (read-only mount) or a
 * platform without uids leaves it as it is: opening the store then says what is wrong, if anything.
 */
function tighten(path: string, mode: number): void {
  try {
    const st = statSync(path);
    const uid = process.getuid?.();
    if (uid === undefined || st.uid !== uid || (st.mode & 0o777 & ~mode) === 0) return;
    chmodSync(path, st.mode & 0o777 & mode);
  } catch {
    // Missing, another user's or a read-only mount: nothing to do here.
  }
}

/** The system or SQLite code of an error (`SQLITE_FULL`, `ENOSPC`…); null when it has none. */
function codeOf(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

/** What a code means for the data directory, and what to do; null for a code this does not know. */
function explain(code: string, dir: string, file: string): string | null {
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_IOERR_WRITE') {
    return `${dir} is full: free space on its disk, or point it to a folder on a disk with room`;
  }
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS' || code === 'EACCES' || code === 'EPERM') {
    return `${dir} is read-only or not writable by this user: make it writable, or point it to a writable folder`;
  }
  if (code === 'ENOTDIR' || code === 'EEXIST') {
    return `${dir} cannot be created: a file is in the way of it or of a parent folder; move the file, or point it to a folder`;
  }
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
    return `the store ${file} is damaged: restore it from a backup, or move it (and its -wal and -shm files) away to start empty`;
  }
  return null;
}

/**
 * The real reason the folder cannot hold the store, found by writing a small file in it:
 * SQLite reports a read-only mount or a full disk as SQLITE_CANTOPEN or SQLITE_IOERR.
 * Null when the write works.
 */
function probeWrite(dir: string): unknown {
  // A folder that was not made (mkdir can fail silently on a read-only mount): its nearest parent.
  let at = dir;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  const probe = join(at, `.outpost-write-probe-${process.pid}`);
  try {
    writeFileSync(probe, Buffer.alloc(64 * 1024));
    return null;
  } catch (err) {
    return err;
  } finally {
    rmSync(probe, { force: true });
  }
}

/**
 * The one-line OUTPOST_ERR_STARTUP error for a store that could not be opened: names the
 * folder and what to do, and quotes the first real error (`first`), not a later one it caused.
 */
export function storeError(dir: string, file: string, first: unknown, last: unknown): OutpostError {
  let cause = first ?? last;
  let code = codeOf(cause);
  if (code === null || explain(code, dir, file) === null) {
    const probed = probeWrite(dir);
    if (probed !== null) {
      cause = probed;
      code = codeOf(probed);
    }
  }
  const message = (cause instanceof Error ? cause.message : String(cause)).split('\n')[0] ?? '';
  const what = (code !== null ? explain(code, dir, file) : null) ?? `the store ${file} cannot be opened`;
  const quoted = code !== null && !message.startsWith(code) ? `${code}: ${message}` : message;
  return new OutpostError('OUTPOST_ERR_STARTUP', `${what} (${quoted})`, { cause });
}

/**
 * Opens the embedded SQLite store at `file` (":memory:" for tests) in WAL
 * mode and migrates it. The returned Kysely instance is the only handle the
 * rest of the service uses, so a PostgresDialect can replace SqliteDialect.
 *
 * The folder of `file` is created when missing (parents too) with mode 0700, and the store's files with
 * 0600 whatever the umask; a folder or files made earlier with wider modes, and owned by this process's user,
 * are narrowed to those modes.
 *
 * @throws OutpostError `OUTPOST_ERR_STARTUP` with one line naming the folder (or file), what
 *   is wrong — cannot be created, read-only, full, damaged store — what to do, and the first
 *   real error (SQLITE_FULL, SQLITE_READONLY, SQLITE_CANTOPEN, ENOSPC, EROFS…).
 */
export async function openSqliteDatabase(file: string): Promise<Kysely<Database>> {
  if (file === ':memory:') {
    const memory = new SQLite(file);
    return open(memory, cachingHandle(memory));
  }
  const dir = dirname(file);
  try {
    mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
  } catch (err) {
    throw storeError(dir, file, err, err);
  }
  // mkdir's mode is reduced by the umask, and a folder made earlier keeps its mode: made exact here.
  tighten(dir, DATA_DIR_MODE);
  let sqlite: SQLiteDatabase | undefined;
  let first: unknown;
  try {
    // Made with 0600 before SQLite opens it (an empty file is an empty store): SQLite gives the -wal and -shm
    // files it makes the mode of the database file. Files an older version made 0644 are narrowed.
    closeSync(openSync(file, 'a', STORE_FILE_MODE));
    for (const path of [file, `${file}-wal`, `${file}-shm`]) tighten(path, STORE_FILE_MODE);
    sqlite = new SQLite(file);
    const opened = sqlite;
    // Migrated through a recording handle, so the first failing statement is known.
    const migrating = await open(
      opened,
      recordingHandle(opened, (err) => (first ??= err)),
    );
    await migrating.destroy();
    // Its stop may be called again: every call resolves when the thread has ended.
    const stopCheckpoints = startWalCheckpointer(opened, file) ?? undefined;
    return new Kysely<Database>({
      dialect: new OutpostSqliteDialect({
        database: cachingHandle(opened, stopCheckpoints),
        closed: stopCheckpoints,
      }),
    });
  } catch (err) {
    try {
      sqlite?.close();
    } catch {
      // Already unusable; the error below says why.
    }
    throw storeError(dir, file, first, err);
  }
}

/**
 * The functions the store files call beyond SQLite's own, on every connection the service opens:
 * - `outpost_lower(text)`: the text lowered as JavaScript's `toLowerCase` lowers it (every letter; SQLite's
 *   `lower()` lowers ASCII only), so a case-insensitive match is the same on SQLite as on PostgreSQL, whose
 *   `lower()` lowers every letter of a UTF-8 database. Not text (null, a number) passes through.
 */
function registerSqlFunctions(sqlite: SQLiteDatabase): void {
  sqlite.function('outpost_lower', { deterministic: true }, (value: unknown) =>
    typeof value === 'string' ? value.toLowerCase() : value,
  );
}

async function open(
  sqlite: SQLiteDatabase,
  handle: ReturnType<typeof recordingHandle> | ReturnType<typeof cachingHandle> | SQLiteDatabase = sqlite,
): Promise<Kysely<Database>> {
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  registerSqlFunctions(sqlite);
  const db = new Kysely<Database>({ dialect: new OutpostSqliteDialect({ database: handle }) });
  await migrateToLatest(db as Kysely<unknown>);
  return db;
}
