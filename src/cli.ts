#!/usr/bin/env node
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import type { CheckResult } from './protocol/index.js';
import { OutpostError } from './common/errors.js';
import { createLogger, type Logger } from './common/logger.js';
import { VERSION } from './common/paths.js';

const USAGE = `outpost ${VERSION}: self-hosted synthetic monitoring

Usage:
  outpost up        service + one agent serving location local (this machine), on the embedded store (npm start)
  outpost service   the control plane: HTTP API on PORT, SQLite under OUTPOST_DATA_DIR
  outpost agent     the private-location agent: polls SERVICE_URL with API_KEY
  outpost migrate   applies the store's pending migrations and exits (OUTPOST_DATABASE_URL or OUTPOST_DATA_DIR)
  outpost backup <file>
                    an online copy of the SQLite store under OUTPOST_DATA_DIR into a new file
  outpost migrate-store --from sqlite:<data dir> --to postgres://…
                    copies a stopped SQLite store into an empty PostgreSQL database
  outpost users create --email <email> [--name <name>] [--role <role>] [--account <id>] [--password-stdin]
                    creates a person who signs in with a password (printed once unless read from stdin)
  outpost --version

Configuration is read from the environment; see docs/configuration.md.
\`outpost <command> --help\` says what a command does.`;

/** What `outpost <command> --help` prints. */
const COMMAND_HELP = {
  up: `outpost up: the service and one agent in one process tree, on the embedded SQLite store

Starts the HTTP API and the web app on HOST:PORT (default 127.0.0.1:3000), stores everything under
OUTPOST_DATA_DIR (default ./data), prints an API key once and seeds demo checks on an empty store,
then starts an agent serving the private location local (this machine) and prints one line per result.
Ctrl-C stops it: the agent finishes its running checks first.

Variables: those of \`outpost service\`, in docs/configuration.md (its section \`outpost service\`).`,
  service: `outpost service: the control plane alone

Serves the HTTP API (/v1), the web app and the public status pages on HOST:PORT (default
127.0.0.1:3000), schedules runs, queues jobs for agents, stores results under OUTPOST_DATA_DIR
(default ./data) or in PostgreSQL (OUTPOST_DATABASE_URL, several service processes may share it)
and sends alerts. Probes: /-/liveness, /-/readiness (the store answers). Run agents with \`outpost agent\`.

Variables: docs/configuration.md (its section \`outpost service\`).`,
  migrate: `outpost migrate: brings the store's schema up to this version, then exits

Applies every pending migration to the store the service would use (OUTPOST_DATABASE_URL, else the SQLite
store under OUTPOST_DATA_DIR) and prints the latest one. The service also migrates at start (on PostgreSQL
under a lock, so replicas starting together migrate once); run this first to upgrade before any replica
of the new version serves. Exit 0 when the store is migrated.

Variables: those of \`outpost service\`, in docs/configuration.md.`,
  users: `outpost users create: a person of the account who signs in to the web app with a password

Usage: outpost users create --email <email> [--name <name>] [--role <role>] [--account <id>] [--password-stdin]

Creates an ACTIVE person in the store the service would use (OUTPOST_DATABASE_URL, else the SQLite store
under OUTPOST_DATA_DIR), in the account <id> or the store's oldest. --role is READ_ONLY, READ_WRITE,
ADMIN or OWNER (default OWNER). The password is generated and printed once, or read from stdin with
--password-stdin (12 to 128 characters; one trailing newline is dropped). Emails are unique across the
store. Exit 0 when created, 1 when refused (the reason on stderr), 2 for bad arguments.

Variables: those of \`outpost service\`, in docs/configuration.md.`,
  backup: `outpost backup: a consistent copy of the SQLite store, taken while the service runs

Usage: outpost backup <file>

Copies <OUTPOST_DATA_DIR>/outpost.db (default ./data) into <file> with SQLite's online backup: the service
may run and write meanwhile. <file> must not exist (it is never overwritten) and is made with mode 0600; it
is a whole store on its own (restore it as outpost.db of a data directory: docs/backup.md). Prints its path
and size. The encryption key is not in it: keep encryption.key of the data directory (or your
OUTPOST_ENCRYPTION_KEY) with the backup, else its secrets are lost.

With OUTPOST_DATABASE_URL set it copies nothing (exit 2) and prints the pg_dump command to use instead.
Exit 0 when the backup is written and checked, 1 when it cannot be, 2 on a bad argument.`,
  'migrate-store': `outpost migrate-store: moves a stopped SQLite store into an empty PostgreSQL database

Usage: outpost migrate-store --from sqlite:<data dir> --to postgres://user:password@host:5432/db

Copies the embedded SQLite store of <data dir> (its outpost.db) into an empty PostgreSQL database:
accounts, API keys, checks, groups, variables, alert channels, results and history, every table, in one
transaction (a failure leaves the database empty). Both stores are migrated to this version first. Then it
checks that each table holds as many rows in both, moves the id sequences past the copied ids, and opens
every sealed secret with the key the PostgreSQL service will use: OUTPOST_ENCRYPTION_KEY when set, else
<data dir>/encryption.key, whose value it then prints (set it as OUTPOST_ENCRYPTION_KEY, kept as a secret).

Stop the service on the SQLite store first: a store another process has open is refused. The target must
hold no account (a new database, or one \`outpost migrate\` prepared). --to may be left out when
OUTPOST_DATABASE_URL is set (keeping the password off the command line; PGPASSWORD works too). The
password is never printed. Exit 0 when copied and verified, 1 when refused or failed, 2 on a bad argument.
Then start \`outpost service\` with OUTPOST_DATABASE_URL and OUTPOST_ENCRYPTION_KEY (docs/deployment.md).`,
  agent: `outpost agent: the private-location agent

Polls SERVICE_URL for jobs with API_KEY (or API_KEY_FILE), runs them, and posts their results. Its
health server answers on AGENT_HEALTH_PORT (default 8081): /-/readiness, /-/liveness, /health, /metrics.
Scripts, browser checks and check suites run as uids of their own; that needs root or six
capabilities (docs/security.md), else the agent refuses them and says why.

Variables: docs/configuration.md (its section \`outpost agent\`).`,
} as const;

/** One line a person reads for each stored result in `outpost up`. */
function describeResult(checkName: string, result: CheckResult): string {
  const icmp = result.icmpCheckResult;
  const mark =
    result.status === 'PASSED' ? 'PASSED  ' : result.status === 'DEGRADED' ? 'DEGRADED' : 'FAILED  ';
  const detail = icmp
    ? `${icmp.resolvedIp ?? icmp.hostname}  sent ${icmp.packetsSent} received ${icmp.packetsReceived} loss ${icmp.packetLoss}%  avg ${icmp.latency.avg?.toFixed(3) ?? '-'} ms (min ${icmp.latency.min?.toFixed(3) ?? '-'}, max ${icmp.latency.max?.toFixed(3) ?? '-'})`
    : `response ${result.responseTime} ms`;
  const http = result.httpCheckResult;
  const httpDetail = http?.response ? `HTTP ${http.response.statusCode}  ` : '';
  // One result, one line: a message spanning lines is joined.
  const error = result.errorMessage ? `  ${result.errorMessage.replace(/\s*\n\s*/g, ' ')}` : '';
  const attempt = result.resultType === 'ATTEMPT' ? `  (attempt ${result.attempts}; retrying)` : '';
  return `${result.stoppedAt}  ${mark}  ${checkName}  [${result.runLocation}]  ${httpDetail}${detail}${error}${attempt}`;
}

/**
 * A pino JSON record as one short line for a person: `<time> <LEVEL> <name>[/<component>]: <msg>[ (<err.message>)]`,
 * never a stack and never a line break. A line that is not a JSON record is returned as it is (trimmed).
 */
function shortLogLine(record: string): string {
  const line = record.trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return line;
  }
  if (typeof parsed !== 'object' || parsed === null) return line;
  const r = parsed as {
    time?: unknown;
    level?: unknown;
    name?: unknown;
    component?: unknown;
    msg?: unknown;
    err?: { message?: unknown };
  };
  const level = (typeof r.level === 'number' ? pino.levels.labels[r.level] : undefined) ?? String(r.level);
  const source = r.component === undefined ? String(r.name) : `${String(r.name)}/${String(r.component)}`;
  const cause = typeof r.err?.message === 'string' ? ` (${r.err.message})` : '';
  return `${String(r.time)} ${level.toUpperCase()} ${source}: ${String(r.msg ?? '')}${cause}`.replace(
    /\s*\n\s*/g,
    ' ',
  );
}

/**
 * Where `outpost up` sends the log records of the service and of its agent child, so that stdout holds only
 * the banner and the result lines: each record goes to stderr as one short line (shortLogLine), and whole
 * (stack included) to the log file once one is opened with `openFile`. A pino destination (`write`).
 */
class UpLog {
  #file: WriteStream | undefined;

  /** Appends every later record to `path` (created with mode 0600: records may name hosts and checks). */
  openFile(path: string): void {
    this.#file = createWriteStream(path, { flags: 'a', mode: 0o600 });
    this.#file.on('error', (err) => {
      process.stderr.write(
        `outpost: the log file ${path} cannot be written (${err.message}); logs go to stderr only\n`,
      );
      this.#file = undefined;
    });
  }

  /** One record (a JSON line, or any line the agent child printed on stdout). */
  write(record: string): void {
    if (record.trim() === '') return;
    this.#file?.write(record.endsWith('\n') ? record : `${record}\n`);
    process.stderr.write(`${shortLogLine(record)}\n`);
  }

  /** Resolves once every record written so far is on disk. */
  close(): Promise<void> {
    const file = this.#file;
    this.#file = undefined;
    return file ? new Promise((resolve) => file.end(resolve)) : Promise.resolve();
  }
}

/**
 * Writes a line on stdout, unless its reader is gone (`outpost up | head -1`): a closed pipe ends the
 * printing, not the process, which keeps serving and still stops on SIGTERM.
 */
function stdoutWriter(onClosed: () => void): (line: string) => void {
  let closed = false;
  const onError = (err: NodeJS.ErrnoException) => {
    if (closed) return;
    closed = true;
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') onClosed();
  };
  process.stdout.on('error', onError);
  // stderr carries one line per warning in `up`: a closed one must not end the process either.
  process.stderr.on('error', () => {});
  return (line) => {
    if (!closed) process.stdout.write(`${line}\n`);
  };
}

/**
 * `outpost migrate`: migrates the configured store and prints the latest migration.
 * @throws what the configuration or opening the store throws.
 */
async function runMigrate(): Promise<number> {
  const { parseServiceConfig } = await import('./service/config.js');
  const { migrateStore } = await import('./service/main.js');
  const config = parseServiceConfig(process.env);
  const log = createLogger({ level: config.logLevel, name: 'outpost-migrate' });
  const { store, latest } = await migrateStore(config, log);
  process.stdout.write(
    `outpost: the ${store === 'postgres' ? 'PostgreSQL' : 'SQLite'} store is at migration ${latest}\n`,
  );
  return 0;
}

/** `--name value` or `--name=value` options and positional arguments of a command line. */
type ParsedArgs = { options: Map<string, string>; positional: string[]; error: string | null };

/**
 * Splits `args` into the options named in `names` (`--from x`, `--from=x`) and positional arguments;
 * `error` says what is wrong (an unknown or repeated option, one without its value).
 */
function parseArgs(args: string[], names: readonly string[]): ParsedArgs {
  const options = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    if (!names.includes(name)) return { options, positional, error: `unknown option ${JSON.stringify(arg)}` };
    if (options.has(name)) return { options, positional, error: `--${name} is given twice` };
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || value === '' || (eq === -1 && value.startsWith('--'))) {
      return { options, positional, error: `--${name} needs a value` };
    }
    options.set(name, value);
  }
  return { options, positional, error: null };
}

/** Prints `message` and the command's help on stderr; the exit code of a bad argument. */
function badArguments(command: 'backup' | 'migrate-store' | 'users', message: string): number {
  process.stderr.write(`outpost ${command}: ${message}\n\n${COMMAND_HELP[command]}\n`);
  return 2;
}

/** `1234567` as `1.2 MB` (powers of 1000), for a person. */
function humanBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * `outpost backup <file>`: an online backup of the SQLite store under OUTPOST_DATA_DIR into a new file
 * (src/service/platform/store/backup.ts). With OUTPOST_DATABASE_URL set: the pg_dump advice, exit 2.
 * @returns 0 when written, 1 when refused or failed, 2 on a bad argument or a PostgreSQL store.
 */
async function runBackup(args: string[]): Promise<number> {
  const parsed = parseArgs(args, []);
  if (parsed.error !== null) return badArguments('backup', parsed.error);
  if (parsed.positional.length !== 1) {
    return badArguments(
      'backup',
      parsed.positional.length === 0 ? 'give the backup file to write' : 'give one backup file only',
    );
  }
  const { backupSqliteStore, BackupError, postgresBackupAdvice } = await import(
    './service/platform/store/backup.js'
  );
  if ((process.env.OUTPOST_DATABASE_URL ?? '') !== '') {
    process.stderr.write(`${postgresBackupAdvice()}\n`);
    return 2;
  }
  const dataDir = (process.env.OUTPOST_DATA_DIR ?? '') === '' ? './data' : process.env.OUTPOST_DATA_DIR!;
  if (dataDir === ':memory:') {
    process.stderr.write('outpost backup: OUTPOST_DATA_DIR is :memory:, a store that is nowhere on disk\n');
    return 2;
  }
  try {
    const report = await backupSqliteStore(dataDir, parsed.positional[0]!);
    process.stdout.write(
      `outpost: backed up ${report.source} to ${report.file} (${humanBytes(report.bytes)}, ${report.bytes} bytes)\n`,
    );
    const keep = 'without that key the secrets in the backup cannot be opened';
    if ((process.env.OUTPOST_ENCRYPTION_KEY ?? '') !== '') {
      process.stdout.write(
        `Keep the value of OUTPOST_ENCRYPTION_KEY with it (apart from it where you can): ${keep}.\n`,
      );
    } else if (report.keyFile !== null) {
      process.stdout.write(
        `Keep the key file ${report.keyFile} with it (apart from it where you can): ${keep}.\n`,
      );
    } else {
      process.stdout.write(
        `There is no key file in ${dataDir} and OUTPOST_ENCRYPTION_KEY is not set here: if the service runs with OUTPOST_ENCRYPTION_KEY, keep that value with the backup (${keep}).\n`,
      );
    }
    return 0;
  } catch (err) {
    if (err instanceof BackupError) {
      process.stderr.write(`outpost backup: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

/**
 * The artifact files of the SQLite store's data directory (`<dir>/artifacts`), copied into the PostgreSQL
 * store's artifact rows (the default there: OUTPOST_ARTIFACT_STORE=database), with one line saying how many;
 * with OUTPOST_ARTIFACT_STORE=files the files stay where they are and the line says where to copy them.
 * @returns false when a file could not be copied (each named in a line).
 */
async function copyArtifacts(dataDir: string, to: string, print: (line: string) => void): Promise<boolean> {
  const { join } = await import('node:path');
  const folder = join(dataDir, 'artifacts');
  if ((process.env.OUTPOST_ARTIFACT_STORE ?? '').trim().toLowerCase() === 'files') {
    print(
      `  artifacts: left as files in ${folder} (OUTPOST_ARTIFACT_STORE=files): copy them to the replicas' shared OUTPOST_DATA_DIR`,
    );
    return true;
  }
  const { openPostgresDatabase } = await import('./service/platform/store/postgres.js');
  const { DatabaseArtifactStore } = await import('./service/runs/artifacts/database-store.js');
  const { copyArtifactFiles } = await import('./service/runs/artifacts/copy-files.js');
  const db = await openPostgresDatabase(to, { poolSize: 2, migrate: false });
  try {
    const copied = await copyArtifactFiles(folder, new DatabaseArtifactStore(db));
    const mib = (copied.bytes / 1_048_576).toFixed(1);
    print(
      `  artifacts: ${copied.files} ${copied.files === 1 ? 'file' : 'files'} (${mib} MiB) into the database`,
    );
    if (copied.skipped.length > 0) {
      print(
        `  artifacts: left ${copied.skipped.length} paths that are not artifacts: ${copied.skipped.slice(0, 5).join(', ')}`,
      );
    }
    for (const { path, reason } of copied.failed) print(`  artifacts: ${path} was not copied: ${reason}`);
    if (copied.failed.length > 0) {
      print(
        `outpost migrate-store: the rows were copied, ${copied.failed.length} artifact files were not (above): copy them by hand or leave them`,
      );
    }
    return copied.failed.length === 0;
  } finally {
    await db.destroy();
  }
}

/**
 * `outpost migrate-store --from sqlite:<dir> --to postgres://…`: copies a stopped SQLite store into an empty
 * PostgreSQL database (src/service/platform/store/move-store.ts), printing one line per table, a summary
 * and, when the key came from the key file, the value to set as OUTPOST_ENCRYPTION_KEY.
 * @returns 0 when copied and verified, 1 when refused or failed, 2 on a bad argument.
 */
/** Reads all of stdin as UTF-8 text. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `outpost users create …` (docs/teams.md, "The first person and the command line"). */
async function runUsers(args: string[]): Promise<number> {
  if (args[0] !== 'create') return badArguments('users', 'the one subcommand is create');
  const rest = args.slice(1);
  const fromStdin = rest.includes('--password-stdin');
  const parsed = parseArgs(
    rest.filter((arg) => arg !== '--password-stdin'),
    ['email', 'name', 'role', 'account'],
  );
  if (parsed.error !== null) return badArguments('users', parsed.error);
  if (parsed.positional.length > 0) {
    return badArguments('users', `unexpected argument ${JSON.stringify(parsed.positional[0])}`);
  }
  const email = parsed.options.get('email');
  if (email === undefined || !/^[^@\s]+@[^@\s]+$/.test(email)) {
    return badArguments('users', '--email <email> is required');
  }
  const { isRole } = await import('./service/platform/http/permissions.js');
  const role = parsed.options.get('role') ?? 'OWNER';
  if (!isRole(role))
    return badArguments('users', `--role must be READ_ONLY, READ_WRITE, ADMIN or OWNER, got ${role}`);
  const { generatePassword } = await import('./service/bootstrap.js');
  const password = fromStdin ? (await readStdin()).replace(/\r?\n$/, '') : generatePassword();
  const { parseServiceConfig } = await import('./service/config.js');
  const { createPerson } = await import('./service/main.js');
  const config = parseServiceConfig(process.env);
  const log = createLogger({ level: config.logLevel, name: 'outpost-users' });
  try {
    const created = await createPerson(config, log, {
      email,
      name: parsed.options.get('name'),
      role,
      password,
      accountId: parsed.options.get('account'),
    });
    process.stdout.write(`outpost: created ${created.email} (${role}) in account ${created.accountId}\n`);
    if (!fromStdin) {
      process.stdout.write(`  password: ${password}\n  (shown once; it is stored as an Argon2id hash)\n`);
    }
    return 0;
  } catch (err) {
    if (err instanceof OutpostError) throw err;
    process.stderr.write(`outpost users create: ${(err as Error).message}\n`);
    return 1;
  }
}

async function runMigrateStore(args: string[]): Promise<number> {
  const parsed = parseArgs(args, ['from', 'to']);
  if (parsed.error !== null) return badArguments('migrate-store', parsed.error);
  if (parsed.positional.length > 0) {
    return badArguments('migrate-store', `unexpected argument ${JSON.stringify(parsed.positional[0])}`);
  }
  const from = parsed.options.get('from');
  if (from === undefined) return badArguments('migrate-store', '--from sqlite:<data dir> is required');
  if (!from.startsWith('sqlite:') || from.length === 'sqlite:'.length) {
    return badArguments('migrate-store', `--from must be sqlite:<data dir>, got ${JSON.stringify(from)}`);
  }
  const to = parsed.options.get('to') ?? ((process.env.OUTPOST_DATABASE_URL ?? '') || undefined);
  if (to === undefined) {
    return badArguments('migrate-store', '--to postgres://… is required (or OUTPOST_DATABASE_URL)');
  }
  const { moveSqliteToPostgres, MoveStoreError } = await import('./service/platform/store/move-store.js');
  const { redactDatabaseUrl } = await import('./service/platform/store/postgres.js');
  if (!/^postgres(ql)?:\/\//.test(to) || redactDatabaseUrl(to) === '(not a URL)') {
    return badArguments(
      'migrate-store',
      `--to must be a postgres:// or postgresql:// URL, got ${redactDatabaseUrl(to)}`,
    );
  }
  const { SECRET_DOC_TABLES } = await import('./service/modules.js');
  const print = (line: string) => process.stdout.write(`${line}\n`);
  const encryptionKey = process.env.OUTPOST_ENCRYPTION_KEY;
  print(`outpost: copying sqlite:${from.slice('sqlite:'.length)} into ${redactDatabaseUrl(to)}`);
  try {
    const report = await moveSqliteToPostgres({
      from: from.slice('sqlite:'.length),
      to,
      encryptionKey: encryptionKey === '' ? undefined : encryptionKey,
      secretDocTables: SECRET_DOC_TABLES,
      // Empty tables are counted in the summary, not listed: a small store has dozens.
      onTable: ({ table, rows }) => {
        if (rows > 0) print(`  ${table}: ${rows} ${rows === 1 ? 'row' : 'rows'}`);
      },
    });
    const empty = report.tables.filter((t) => t.rows === 0).length;
    print(
      `outpost: copied ${report.rows} rows in ${report.tables.length} tables (${empty} of them empty) from ${report.sourceFile} to ${report.target} (migration ${report.migration}); row counts match, ${report.sequences} id sequences moved, ${report.secrets.verified} sealed secrets open with the key${report.secrets.clear > 0 ? `, ${report.secrets.clear} in clear (sealed at the service's first start)` : ''}; planner statistics ${report.statistics}`,
    );
    if (report.key.source === 'file') {
      print(
        `OUTPOST_ENCRYPTION_KEY is not set: the secrets are sealed with the key file ${report.key.path}. Start the PostgreSQL service (every replica) with this OUTPOST_ENCRYPTION_KEY, and store it as a secret (your secret manager, a Kubernetes Secret; never in the repository):`,
      );
      print(`OUTPOST_ENCRYPTION_KEY=${report.key.base64}`);
    } else if (report.key.source === 'env') {
      print('Start the PostgreSQL service with the same OUTPOST_ENCRYPTION_KEY.');
    } else {
      print(
        'No encryption key was found and no secret is sealed: make one (openssl rand -base64 32) and start the PostgreSQL service with it as OUTPOST_ENCRYPTION_KEY.',
      );
    }
    const artifactsCopied = await copyArtifacts(from.slice('sqlite:'.length), to, print);
    print(
      'The SQLite store was only read: keep it (and its key) until the PostgreSQL service runs as it should.',
    );
    return artifactsCopied ? 0 : 1;
  } catch (err) {
    if (err instanceof MoveStoreError) {
      process.stderr.write(
        `outpost migrate-store: ${err.message}\nNo row was kept in the target database.\n`,
      );
      return 1;
    }
    throw err;
  }
}

/**
 * `outpost service` or `outpost up`: starts the service (and for `up` the embedded agent, printing
 * one line per result), prints where it listens, and resolves with the exit code once it stopped.
 * @throws what the configuration or the start throws (a bad variable, a taken port).
 */
async function runService(mode: 'service' | 'up'): Promise<number> {
  const { parseServiceConfig } = await import('./service/config.js');
  const { startService } = await import('./service/main.js');
  const env = { ...process.env };
  // `up` is for people: results printed as lines, only warnings and errors logged unless asked.
  if (mode === 'up' && !env.LOG_LEVEL) env.LOG_LEVEL = 'WARN';
  const config = parseServiceConfig(env);
  const upLog = mode === 'up' ? new UpLog() : undefined;
  const log = createLogger({
    level: config.logLevel,
    name: 'outpost-service',
    ...(upLog ? { destination: upLog } : {}),
  });
  if (mode === 'up') {
    // The agent child binds its health port later: find a taken one before the API key is printed.
    const { assertPortFree } = await import('./common/ports.js');
    const raw = process.env.AGENT_HEALTH_PORT?.trim();
    const healthPort = raw ? Number(raw) : 8081;
    if (Number.isInteger(healthPort) && healthPort > 0 && healthPort <= 65_535) {
      await assertPortFree('AGENT_HEALTH_PORT', healthPort);
    }
  }
  const writeLine = stdoutWriter(() =>
    log.warn('stdout was closed: results and messages are no longer printed (the log file keeps warnings)'),
  );
  const running = await startService(config, {
    log,
    embeddedAgent: mode === 'up',
    seedDemo: mode === 'up',
    ...(mode === 'up'
      ? {
          resultHooks: [
            {
              name: 'up-print-result',
              run: async ({ accountId, checkId, result }) => {
                const row = await running.service.context.db
                  .selectFrom('checks')
                  .select('name')
                  .where('id', '=', checkId)
                  .where('account_id', '=', accountId)
                  .executeTakeFirst();
                writeLine(describeResult(row?.name ?? checkId, result));
              },
            },
          ],
        }
      : {}),
  });

  const print = (line = '') => writeLine(line);
  // From the banner on, whoever reads it may send SIGTERM at once: without a listener Node would die of it by
  // default, between the write and untilShutdown's handlers. Signals are kept until those handle them.
  const early = new EarlySignals();
  printBanner(print, mode, running, config.appUrl);
  // The data directory exists now (the store is open in it); an in-memory store has none.
  if (upLog && config.databaseFile !== ':memory:') {
    const logFile = join(config.dataDir, 'outpost-up.log');
    upLog.openFile(logFile);
    print(`  logs:       ${logFile} (warnings and errors also on stderr, one line each)`);
  }
  let agent: ChildProcess | undefined;
  if (upLog) {
    print('  results:');
    agent = startEmbeddedAgent(running, upLog);
  }
  return untilShutdown({ mode, log, running, agent, upLog, writeLine, early });
}

/** SIGTERM and SIGINT received before the shutdown handlers are in place, kept in order (see runService). */
class EarlySignals {
  readonly #received: NodeJS.Signals[] = [];
  readonly #keep = (signal: NodeJS.Signals) => this.#received.push(signal);

  constructor() {
    process.on('SIGTERM', this.#keep);
    process.on('SIGINT', this.#keep);
  }

  /** Stops keeping signals and hands those kept to `handle`, in the order they came. */
  replayTo(handle: (signal: NodeJS.Signals) => void): void {
    process.off('SIGTERM', this.#keep);
    process.off('SIGINT', this.#keep);
    for (const signal of this.#received.splice(0)) handle(signal);
  }
}

/** What the CLI uses of a started service (src/service/main.ts, `RunningService`). */
type StartedService = {
  url: string;
  accountId: string;
  createdApiKey: string | null;
  createdAdmin: { email: string; password: string } | null;
  embeddedAgentKey: string | null;
  seededChecks: string[];
  stop(): Promise<void>;
};

/** Prints where the service listens, its account, the web app, the API key when created, the demo checks. */
function printBanner(
  print: (line?: string) => void,
  mode: 'service' | 'up',
  running: StartedService,
  appUrl: string,
): void {
  print(`Outpost ${VERSION} ${mode === 'up' ? 'is up' : 'service is listening'}: ${running.url}`);
  print(`  account id: ${running.accountId}`);
  print(`  web app:    ${appUrl.replace(/\/+$/, '')}/ (sign in with your email and password, or an API key)`);
  if (running.createdAdmin) {
    print(`  sign in as: ${running.createdAdmin.email} (OWNER)`);
    print(`  password:   ${running.createdAdmin.password}`);
    print(
      '  (shown once; it is stored as an Argon2id hash. Change it in the web app, or run outpost users create.)',
    );
  }
  if (running.createdApiKey) {
    print(`  API key:    ${running.createdApiKey}`);
    print('  (shown once; it is stored hashed. Keep it, or set OUTPOST_API_KEY before the first start.)');
  }
  if (running.seededChecks.length > 0)
    print(`  demo checks: ${running.seededChecks.join(', ')} (every minute)`);
}

/**
 * Starts the agent of `outpost up` (`outpost agent` in a child process) against the service, its
 * JSON log records passed through `upLog`.
 */
function startEmbeddedAgent(running: StartedService, upLog: UpLog): ChildProcess {
  // Its own process group (detached): a terminal's Ctrl-C reaches `up` only, which forwards exactly
  // one SIGTERM, so the agent drains instead of seeing two signals and exiting at once. The IPC
  // channel is how the agent notices `up` is gone (even SIGKILLed): it closes, and the agent stops.
  const agent = spawn(process.execPath, [fileURLToPath(import.meta.url), 'agent'], {
    detached: true,
    // Its JSON log records (stdout) go through upLog, never between the result lines.
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    env: {
      ...process.env,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'WARN',
      API_KEY: running.embeddedAgentKey!,
      SERVICE_URL: running.url,
      // Never let a proxy meant for the outside world carry loopback traffic.
      NO_PROXY: [process.env.NO_PROXY, '127.0.0.1', 'localhost', '::1'].filter(Boolean).join(','),
    },
  });
  createInterface({ input: agent.stdout!, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) =>
    upLog.write(line),
  );
  return agent;
}

/** What {@link untilShutdown} stops: the service, the embedded agent of `up`, and their output. */
type Running = {
  mode: 'service' | 'up';
  log: Logger;
  running: StartedService;
  agent: ChildProcess | undefined;
  upLog: UpLog | undefined;
  writeLine: (line: string) => void;
  /** Signals that came before the handlers of untilShutdown, handled by them at once. */
  early: EarlySignals;
};

/**
 * Resolves with the exit code once the service stopped: on SIGTERM or SIGINT the agent drains
 * first, then the service stops (0); a second signal kills the agent's group and exits at once
 * (130 for SIGINT, 143 for SIGTERM); an embedded agent that exits on its own stops the service
 * (its exit code, 1 when it was killed).
 */
function untilShutdown({ mode, log, running, agent, upLog, writeLine, early }: Running): Promise<number> {
  return new Promise<number>((resolve) => {
    let signals = 0;
    const shutdown = (signal: NodeJS.Signals) => {
      signals += 1;
      if (signals > 1) {
        // A second Ctrl-C forces the exit: the agent's whole group (its script processes too) goes with it.
        killGroup(agent, 'SIGKILL');
        process.exit(signal === 'SIGINT' ? 130 : 143);
      }
      log.info({ signal }, 'shutting down');
      if (mode === 'up' && agent?.exitCode === null) {
        writeLine(
          'stopping: the agent finishes its running checks and posts their results (Ctrl-C again to exit at once)',
        );
      }
      const agentExit =
        agent && agent.exitCode === null ? new Promise((r) => agent!.once('exit', r)) : Promise.resolve();
      agent?.kill('SIGTERM');
      // The agent drains first (it needs the service to post its results), then the service stops.
      void agentExit
        .then(() => running.stop())
        .then(() => upLog?.close())
        .then(() => resolve(0));
    };
    process.on('SIGTERM', shutdown);
    process.on('SIGINT', shutdown);
    early.replayTo(shutdown);
    agent?.once('exit', (code, signal) => {
      if (signals === 0) {
        log.error({ code, signal }, 'embedded agent exited; stopping');
        void running
          .stop()
          .then(() => upLog?.close())
          .then(() => resolve(code ?? 1));
      }
    });
  });
}

/** Sends `signal` to the process group of a detached child (its own group), ignoring a gone one. */
function killGroup(child: ReturnType<typeof spawn> | undefined, signal: NodeJS.Signals): void {
  if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

async function main(argv: string[]): Promise<number> {
  const command = argv[0];
  if (command === 'up' || command === 'service' || command === 'agent' || command === 'migrate') {
    const rest = argv.slice(1);
    if (rest.some((arg) => arg === '--help' || arg === '-h' || arg === 'help')) {
      process.stdout.write(`${COMMAND_HELP[command]}\n`);
      return 0;
    }
    // An argument no command takes starts nothing: the configuration is the environment's.
    if (rest.length > 0) {
      process.stderr.write(
        `outpost ${command} takes no argument, got ${JSON.stringify(rest[0])}; configuration is read from the environment\n\n${COMMAND_HELP[command]}\n`,
      );
      return 2;
    }
  }
  if (command === 'users') {
    const rest = argv.slice(1);
    if (rest.length === 0 || rest.some((arg) => arg === '--help' || arg === '-h' || arg === 'help')) {
      process.stdout.write(`${COMMAND_HELP.users}\n`);
      return rest.length === 0 ? 2 : 0;
    }
    return runUsers(rest);
  }
  if (command === 'backup' || command === 'migrate-store') {
    const rest = argv.slice(1);
    if (rest.some((arg) => arg === '--help' || arg === '-h' || arg === 'help')) {
      process.stdout.write(`${COMMAND_HELP[command]}\n`);
      return 0;
    }
    return command === 'backup' ? runBackup(rest) : runMigrateStore(rest);
  }
  switch (command) {
    case 'up':
    case 'service':
      return runService(command);
    case 'migrate':
      return runMigrate();
    case 'agent': {
      const { runAgent } = await import('./agent/main.js');
      return runAgent(process.env);
    }
    case '--version':
    case '-v':
      process.stdout.write(`${VERSION}\n`);
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`unknown command ${JSON.stringify(command)}\n\n${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // A bad variable or an unusable encryption key: one line naming it, no stack trace.
    if (
      err instanceof OutpostError &&
      (err.code === 'OUTPOST_ERR_CONFIG' || err.code === 'OUTPOST_ERR_ENCRYPTION_KEY')
    ) {
      process.stderr.write(`outpost: ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    // A start-up failure (taken port, unusable data directory) explains itself in one line too.
    if (err instanceof OutpostError && err.code === 'OUTPOST_ERR_STARTUP') {
      process.stderr.write(`outpost: ${err.message.replace(/\s*\n\s*/g, ' ')}\n`);
      process.exitCode = 1;
      return;
    }
    process.stderr.write(`outpost: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
