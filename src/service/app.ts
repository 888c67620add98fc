import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from '../shared/logger.js';
import { bodyAjv, queryAjv } from './ajv.js';
import { AnalyticsWorkers } from './analytics/workers.js';
import { ArtifactStore } from './artifacts.js';
import { authHook } from './auth.js';
import type { ResultHook, ServiceContext } from './context.js';
import { errorGroupsHook } from './error-groups.js';
import { installErrorHandling } from './errors.js';
import { JobQueue } from './queue.js';
import { registerOpenApi } from './openapi.js';
import { ROUTES } from './routes/index.js';
import { CheckSessions } from './sessions.js';
import type { Database } from './store/database.js';

/** Options of `build`. Times in milliseconds. */
export type BuildOptions = {
  db: Kysely<Database>;
  log: Logger;
  /** Lease granted per claim; default 300 000 (design.md §2). */
  leaseMs?: number;
  /** How long a job waits to be claimed before it expires; default 360 000. */
  queueExpiryMs?: number;
  /** Base of `checkSessionLink`; default http://localhost:3000. */
  appUrl?: string;
  /** The store's file, for analytics reader threads; omitted or ":memory:" runs analytics on one thread. */
  databaseFile?: string;
  /** Hooks run after each new result is stored, after the built-in ones. */
  resultHooks?: ResultHook[];
  /**
   * Folder of uploaded artifacts (created on the first upload); `main` passes
   * `<OUTPOST_DATA_DIR>/artifacts`. Default: a new folder under the OS temp dir, made on first
   * use and left in place at close.
   */
  artifactsDir?: string;
};

/** The built service: the fastify app (not listening) and what `main` needs to run it. */
export type Service = {
  app: FastifyInstance;
  queue: JobQueue;
  context: ServiceContext;
  /** Aborts long polls, then closes the app. Idempotent. */
  close(): Promise<void>;
};

/**
 * Builds the service without listening, so tests use `app.inject` or
 * `app.listen({ port: 0 })` (design.md §4).
 */
export async function build(options: BuildOptions): Promise<Service> {
  const shutdown = new AbortController();
  const queue = new JobQueue(options.db, {
    leaseMs: options.leaseMs ?? 300_000,
    queueExpiryMs: options.queueExpiryMs ?? 360_000,
  });
  const context: ServiceContext = {
    db: options.db,
    queue,
    sessions: new CheckSessions(options.db, queue, options.appUrl ?? 'http://localhost:3000'),
    log: options.log,
    shutdown: shutdown.signal,
    resultHooks: [errorGroupsHook(options.db), ...(options.resultHooks ?? [])],
    analyticsWorkers: AnalyticsWorkers.for(options.databaseFile),
    artifacts: new ArtifactStore(options.artifactsDir),
  };

  const app: FastifyInstance = Fastify({
    loggerInstance: options.log.child({ component: 'http' }) as FastifyBaseLogger,
    // Agents long-poll constantly; one log line per request would drown the rest.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
    // Path parameters up to 128 characters (artifact names) must reach their schemas, not a 414.
    routerOptions: { maxParamLength: 256 },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    httpPart === 'body' ? bodyAjv.compile(schema) : queryAjv.compile(schema),
  );
  installErrorHandling(app);
  await registerOpenApi(app);

  await app.register(async (v1) => {
    v1.addHook('onRequest', authHook(options.db));
    for (const routes of ROUTES) await routes(v1, context);
  });

  let closing: Promise<void> | undefined;
  return {
    app,
    queue,
    context,
    close() {
      closing ??= (async () => {
        shutdown.abort();
        await app.close();
        await context.analyticsWorkers?.close();
      })();
      return closing;
    },
  };
}
