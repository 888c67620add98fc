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
import { openSqliteDatabase } from './platform/store/database.js';
import { probeStoreWrites } from './platform/store/probe.js';
import { attachSecretBox, openSecretBox } from './platform/store/secret-box.js';

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
  let db: Awaited<ReturnType<typeof openSqliteDatabase>>;
  try {
    db = await openSqliteDatabase(config.databaseFile);
  } catch (err) {
    throw dataDirError(err, config, options.log);
  }
  // A store on a full disk opens (nothing to migrate) and then fails every write, or dies of SIGBUS on its
  // memory-mapped -shm index: a real write is tried now, before anything is created, printed or listened on.
  try {
    await probeStoreWrites(db, config.databaseFile);
  } catch (err) {
    await db.destroy().catch(() => {});
    throw dataDirError(err, config, options.log);
  }
  // Secrets at rest: the key from OUTPOST_ENCRYPTION_KEY or the data directory's key file; values stored in
  // clear by an older version are sealed now, and a wrong key stops the start here (OUTPOST_ERR_ENCRYPTION_KEY).
  try {
    attachSecretBox(
      db,
      openSecretBox({
        encryptionKey: config.encryptionKey,
        dataDir: config.dataDir,
        inMemory: config.databaseFile === ':memory:',
      }),
    );
    await sealStoredSecrets(db, SECRET_DOC_TABLES);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  // No child process (the embedded agent, its scripts) may inherit the key.
  delete process.env.OUTPOST_ENCRYPTION_KEY;
  const boot = await ensureAccount(db, { accountId: config.accountId, apiKey: config.apiKey });
  const embeddedAgentKey = options.embeddedAgent ? await rotateEmbeddedAgentKey(db, boot.accountId) : null;
  const service = await build({
    db,
    databaseFile: config.databaseFile,
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
    outbound: { allow: config.outboundAllow, privateNetworks: config.outboundPrivate },
    customDomains: {
      allowList: config.statusPageDomains,
      ...(config.dnsServers === undefined ? {} : { dnsServers: config.dnsServers }),
    },
    // An in-memory store keeps its artifacts in a temp folder too (build's default).
    ...(config.databaseFile === ':memory:' ? {} : { artifactsDir: join(config.dataDir, 'artifacts') }),
    ...(options.resultHooks ? { resultHooks: options.resultHooks } : {}),
    // The embedded SQLite store belongs to this one process: sends a crash cut short go again at once.
    alerting: { delivery: { releaseLeasesAtStart: true } },
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
