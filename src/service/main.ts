import type { Kysely } from 'kysely';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { assertPortFree, listenError } from '../common/ports.js';
import { OutpostError } from '../common/errors.js';
import type { NamedResultHook } from './runs/results/outbox.js';
import type { Logger } from '../common/logger.js';
import { build, type Service } from './app.js';
import { ensureAccount, rotateEmbeddedAgentKey, seedDemoChecks } from './bootstrap.js';
import type { ServiceConfig } from './config.js';
import { Scheduler } from './runs/scheduler/scheduler.js';
import { sealStoredSecrets } from './platform/store/secrets-at-rest.js';
import { SECRET_DOC_TABLES } from './modules.js';
import { type Database, openSqliteDatabase } from './platform/store/database.js';
import { openPostgresDatabase, redactDatabaseUrl } from './platform/store/postgres.js';
import { latestMigration } from './platform/store/migrations/index.js';
import { probeStoreWrites } from './platform/store/probe.js';
import { attachSecretBox, openSecretBox } from './platform/store/secret-box.js';
import { AccountQueries } from './platform/store/accounts.js';
import { HttpError } from './platform/http/errors.js';
import type { Role } from './platform/http/permissions.js';
import { checkPassword, Users } from './users/index.js';

/**
 * Opens and migrates the embedded SQLite store of `config`, and tries a real write.
 * @throws OutpostError OUTPOST_ERR_STARTUP naming OUTPOST_DATA_DIR and what to do.
 */
async function openSqliteStore(config: ServiceConfig, log: Logger): Promise<Kysely<Database>> {
  let db: Kysely<Database>;
  try {
    db = await openSqliteDatabase(config.databaseFile);
  } catch (err) {
    throw dataDirError(err, config, log);
  }
  // A store on a full disk opens (nothing to migrate) and then fails every write, or dies of SIGBUS on its
  // memory-mapped -shm index: a real write is tried now, before anything is created, printed or listened on.
  try {
    await probeStoreWrites(db, config.databaseFile);
  } catch (err) {
    await db.destroy().catch(() => {});
    throw dataDirError(err, config, log);
  }
  return db;
}

/** First and longest wait between two attempts to reach PostgreSQL at start, ms. */
const POSTGRES_RETRY_MS = { first: 500, max: 15_000 };

/**
 * Opens and migrates the PostgreSQL store at `url`. A database that cannot be reached yet (it starts
 * after the service, a failover is under way) is tried again with a doubling wait up to 15 s, each
 * failure logged with the URL's password redacted: a replica never exits in a loop because its
 * database is late. A refused login or a failed migration is not retried: it stops the start.
 */
async function openPostgresStore(
  url: string,
  preparedStatements: boolean,
  log: Logger,
): Promise<Kysely<Database>> {
  let waitMs = POSTGRES_RETRY_MS.first;
  for (;;) {
    try {
      return await openPostgresDatabase(url, { preparedStatements });
    } catch (err) {
      if (!isUnreachable(err)) throw err;
      log.warn(
        { database: redactDatabaseUrl(url), err: (err as Error).message, retryInMs: waitMs },
        'PostgreSQL cannot be reached yet; trying again',
      );
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      waitMs = Math.min(POSTGRES_RETRY_MS.max, waitMs * 2);
    }
  }
}

/**
 * A stand-in on the service's port while the PostgreSQL store is being reached at start: `GET /-/liveness`
 * answers 200 (the process is well: an orchestrator must not restart it for a database that is late),
 * `/-/readiness` and every other request 503 with `retry-after`, so load balancers keep traffic away and
 * agents retry. Closed, with its connections, before the service itself listens.
 */
async function answerProbesUntilReady(config: ServiceConfig): Promise<{ close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const alive = request.url?.split('?')[0] === '/-/liveness';
    response.writeHead(alive ? 200 : 503, {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
      ...(alive ? {} : { 'retry-after': '5' }),
      connection: 'close',
    });
    response.end(alive ? 'ok\n' : 'store unreachable\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Network codes, and PostgreSQL's "starting up / shutting down" states, that say: try again later. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // cannot_connect_now, admin_shutdown, crash_shutdown (PostgreSQL error codes, class 57P)
  '57P03',
  '57P01',
  '57P02',
]);

function isUnreachable(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE.has(code)) return true;
    if (/timeout exceeded when trying to connect|Connection terminated/i.test(e.message)) return true;
  }
  return false;
}

/**
 * `outpost migrate`: opens the configured store (OUTPOST_DATABASE_URL, else the SQLite store under
 * OUTPOST_DATA_DIR), which applies every pending migration (on PostgreSQL under Kysely's advisory lock, so
 * replicas starting at the same time wait for it), and closes it. Nothing else starts.
 * @returns the store's kind and its latest migration's name.
 * @throws OutpostError OUTPOST_ERR_STARTUP when the store cannot be opened or a migration fails.
 */
export async function migrateStore(
  config: ServiceConfig,
  log: Logger,
): Promise<{ store: 'postgres' | 'sqlite'; latest: string | null }> {
  const db = config.databaseUrl
    ? await openPostgresStore(config.databaseUrl, config.databasePreparedStatements, log)
    : await openSqliteStore(config, log);
  try {
    const latest = await latestMigration(db as unknown as Kysely<unknown>);
    return { store: config.databaseUrl ? 'postgres' : 'sqlite', latest };
  } finally {
    await db.destroy();
  }
}

/** What `outpost users create` asks for (docs/teams.md, "The command line"). */
export type NewPerson = {
  email: string;
  name?: string | undefined;
  role: Role;
  /** 12–128 characters (docs/teams.md, "Passwords"). */
  password: string;
  /** The account; default the store's oldest (the one `outpost up` made). */
  accountId?: string | undefined;
};

/**
 * Creates an ACTIVE person in the store the service would use (`outpost users create`): opens and migrates
 * it as the service does, the account being `person.accountId` or the oldest.
 * @returns the person's email as stored (lower-cased) and their account.
 * @throws Error saying why: no account yet (start the service once), an unknown account, a password of the
 *   wrong length, or an email that belongs to a person already.
 */
export async function createPerson(
  config: ServiceConfig,
  log: Logger,
  person: NewPerson,
): Promise<{ email: string; accountId: string }> {
  const db = config.databaseUrl
    ? await openPostgresStore(config.databaseUrl, config.databasePreparedStatements, log)
    : await openSqliteStore(config, log);
  try {
    const accounts = new AccountQueries(db);
    const accountId = person.accountId ?? (await accounts.oldestId());
    if (accountId === undefined)
      throw new Error('the store has no account yet: start the service once first');
    if (person.accountId !== undefined && (await accounts.find(person.accountId)) === undefined) {
      throw new Error(`the store has no account ${person.accountId}`);
    }
    try {
      checkPassword(person.password, 'password');
      const row = await new Users(db).create(accountId, person, Date.now());
      return { email: row.email, accountId };
    } catch (err) {
      if (err instanceof HttpError) throw new Error(err.message);
      throw err;
    }
  } finally {
    await db.destroy();
  }
}

/**
 * A store start-up failure (OUTPOST_ERR_STARTUP) logged and given the variable it is about,
 * `OUTPOST_DATA_DIR`; any other error as it is.
 */
function dataDirError(err: unknown, config: ServiceConfig, log: Logger): unknown {
  if (!(err instanceof OutpostError && err.code === 'OUTPOST_ERR_STARTUP')) return err;
  log.error({ err, dataDir: config.dataDir }, 'the store could not be opened');
  return new OutpostError('OUTPOST_ERR_STARTUP', `OUTPOST_DATA_DIR: ${err.message}`, { cause: err.cause });
}

/** A running service. */
export type RunningService = {
  url: string;
  accountId: string;
  /** The API key, only when it was created by this start (print it once). */
  createdApiKey: string | null;
  /** The first person and their generated password, only when created by this start (print them once). */
  createdAdmin: { email: string; password: string } | null;
  /** A fresh key for an embedded agent, when asked for. */
  embeddedAgentKey: string | null;
  seededChecks: string[];
  service: Service;
  /** Stops the scheduler, answers long polls, closes the server and the store. Idempotent. */
  stop(): Promise<void>;
};

/**
 * Opens the store, bootstraps the first account, starts the scheduler and
 * listens. Used by `outpost service` and `outpost up`.
 */
export async function startService(
  config: ServiceConfig,
  options: {
    log: Logger;
    embeddedAgent?: boolean;
    seedDemo?: boolean;
    resultHooks?: NamedResultHook[];
  },
): Promise<RunningService> {
  // Before the store is opened: a taken port must not leave a created-but-never-printed API key.
  await assertPortFree('PORT', config.port, config.host);
  let db: Kysely<Database>;
  if (config.databaseUrl) {
    // While PostgreSQL is not reached, the port already answers the probes: alive, not ready.
    const waiting = await answerProbesUntilReady(config);
    try {
      db = await openPostgresStore(config.databaseUrl, config.databasePreparedStatements, options.log);
    } finally {
      await waiting.close();
    }
  } else {
    db = await openSqliteStore(config, options.log);
  }
  // Secrets at rest: the key from OUTPOST_ENCRYPTION_KEY or the data directory's key file; values stored in
  // clear by an older version are sealed now, and a wrong key stops the start here (OUTPOST_ERR_ENCRYPTION_KEY).
  try {
    attachSecretBox(
      db,
      openSecretBox({
        encryptionKey: config.encryptionKey,
        dataDir: config.dataDir,
        inMemory: !config.databaseUrl && config.databaseFile === ':memory:',
      }),
    );
    await sealStoredSecrets(db, SECRET_DOC_TABLES);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  // No child process (the embedded agent, its scripts) may inherit the key.
  delete process.env.OUTPOST_ENCRYPTION_KEY;
  const boot = await ensureAccount(db, {
    accountId: config.accountId,
    apiKey: config.apiKey,
    adminEmail: config.adminEmail,
  });
  const embeddedAgentKey = options.embeddedAgent ? await rotateEmbeddedAgentKey(db, boot.accountId) : null;
  const service = await build({
    db,
    ...(config.databaseUrl ? {} : { databaseFile: config.databaseFile }),
    log: options.log,
    leaseMs: config.leaseMs,
    queueExpiryMs: config.queueExpiryMs,
    retention: {
      resultDays: config.resultRetentionDays,
      artifactDays: config.artifactRetentionDays,
      agentDays: config.agentRetentionDays,
      passingDetailHours: config.passingDetailHours,
    },
    appUrl: config.appUrl,
    apiCredentials: config.apiCredentials,
    artifactStore: config.artifactStore,
    storeNotify: config.databaseNotify,
    outbound: { allow: config.outboundAllow, privateNetworks: config.outboundPrivate },
    customDomains: {
      allowList: config.statusPageDomains,
      ...(config.dnsServers === undefined ? {} : { dnsServers: config.dnsServers }),
    },
    // An in-memory store keeps its artifacts in a temp folder too (build's default).
    ...(config.databaseFile === ':memory:' ? {} : { artifactsDir: join(config.dataDir, 'artifacts') }),
    ...(options.resultHooks ? { resultHooks: options.resultHooks } : {}),
    // The embedded SQLite store belongs to this one process: sends a crash cut short go again at once. A
    // PostgreSQL store is shared with other replicas, whose leases are theirs: expired leases are taken back.
    alerting: { delivery: { releaseLeasesAtStart: !config.databaseUrl } },
  });
  const scheduler = new Scheduler(db, service.queue, { log: options.log.child({ component: 'scheduler' }) });
  let address: string;
  try {
    address = await service.app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await scheduler.stop();
    await service.close();
    await db.destroy();
    throw listenError('PORT', config.port, config.host, err);
  }
  const url = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '[::1]');
  // Seeded once listening: the demo API check calls this service's own OpenAPI document.
  const seededChecks = options.seedDemo ? await seedDemoChecks(db, boot.accountId, { serviceUrl: url }) : [];
  scheduler.start();
  options.log.info({ address, dataDir: config.dataDir }, 'service listening');
  let stopping: Promise<void> | undefined;
  return {
    url,
    accountId: boot.accountId,
    createdApiKey: boot.createdApiKey,
    createdAdmin: boot.createdAdmin,
    embeddedAgentKey,
    seededChecks,
    service,
    stop() {
      stopping ??= (async () => {
        await scheduler.stop();
        await service.close();
        await db.destroy();
      })();
      return stopping;
    },
  };
}
