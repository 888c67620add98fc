import { registerHealthRoutes } from './platform/http/health.js';
import { StoreNotifier } from './platform/store/store-notifier.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { TSchema } from '@sinclair/typebox';
import type { CredentialView } from './platform/store/secret-fields.js';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from '../common/logger.js';
import type { DeliveryWorker, DeliveryWorkerOptions } from './alerting/delivery/worker.js';
import type { ProviderConfig } from './alerting/types.js';
import { closeContextResources, createContext, type ServiceContext } from './context.js';
import type { HeartbeatMonitor, HeartbeatMonitorOptions } from './heartbeats/monitor.js';
import { MODULES } from './modules.js';
import { AuthFailureLimiter, authHook } from './platform/http/auth.js';
import { requirePermissions } from './platform/http/permissions.js';
import { registerCompression } from './platform/http/compression.js';
import { answerFrameworkError, installErrorHandling } from './platform/http/errors.js';
import { registerOpenApi } from './platform/http/openapi.js';
import type { OutboundPolicyOptions } from './platform/http/outbound-policy.js';
import { cachedSerializerCompiler } from './platform/http/serializers.js';
import { bodyValidator, queryAjv } from './platform/http/validation.js';
import type { Database } from './platform/store/database.js';
import type { RetentionPolicy, RetentionWorker } from './platform/store/retention.js';
import { registerWebApp } from './platform/web/plugin.js';
import type { JobQueue } from './runs/queue/queue.js';
import type { NamedResultHook, ResultOutbox, ResultOutboxOptions } from './runs/results/outbox.js';
import { backfillCustomDomains } from './status-pages/admin/store.js';
import { passwordSignIn } from './users/index.js';

/** Options of `build`. Times in milliseconds. */
export type BuildOptions = {
  db: Kysely<Database>;
  log: Logger;
  /** Lease granted per claim; default 300 000 (docs/protocol.md). */
  leaseMs?: number;
  /** How long a job waits to be claimed before it expires; default 360 000. */
  queueExpiryMs?: number;
  /** Base of `checkSessionLink` and of heartbeat `pingUrl`s; default http://localhost:3000. */
  appUrl?: string;
  /**
   * How answers to API-key requests show stored credentials (OUTPOST_API_CREDENTIALS; docs/security.md,
   * "Credentials in answers"); default `masked`.
   */
  /**
   * On a PostgreSQL store: whether replicas wake each other's long polls with LISTEN/NOTIFY (default true;
   * OUTPOST_DATABASE_NOTIFY=off behind a transaction-pooling proxy, where waiters then poll every second).
   */
  storeNotify?: boolean;
  apiCredentials?: CredentialView;
  /** The store's file, for analytics reader threads; omitted or ":memory:" runs analytics on one thread. */
  databaseFile?: string;
  /**
   * Hooks run from the result outbox after each new result is stored, after the built-in ones.
   * Each name is written into the outbox rows: keep it the same across restarts, or rows written
   * before a restart find no hook after it.
   */
  resultHooks?: NamedResultHook[];
  /**
   * Folder of uploaded artifacts (created on the first upload); `main` passes
   * `<OUTPOST_DATA_DIR>/artifacts`. Default: a new folder under the OS temp dir, made on first
   * use and left in place at close.
   */
  artifactsDir?: string;
  /**
   * Where uploaded artifacts are kept (OUTPOST_ARTIFACT_STORE): `files` under `artifactsDir` (the default),
   * or `database`, rows of the store that every replica shares (runs/artifacts/database-store.ts).
   */
  artifactStore?: 'files' | 'database';
  /**
   * Data retention (OUTPOST_*_RETENTION_DAYS); default 90 days of results, 30 of artifacts,
   * 30 of agent reports. `false`: no retention worker (tests that keep old rows).
   */
  retention?: RetentionPolicy | false;
  /**
   * Folder of the built web app served at `/` (docs/web-app.md, "Serving"); default `dist/app` under the
   * package root.
   */
  appDir?: string;
  /** Claims per job before a lost lease ends it; default 3. */
  maxClaims?: number;
  /**
   * The result outbox worker: its back-off (see ResultOutboxOptions) and whether build starts
   * it (default true; false leaves rows for a later start, as a crash would).
   */
  resultOutbox?: Pick<ResultOutboxOptions, 'baseDelayMs' | 'maxDelayMs' | 'maxAttempts' | 'pollMs'> & {
    start?: boolean;
  };
  /**
   * Heartbeat monitors (docs/heartbeats.md): the clock pings and the sweeper read (default
   * Date.now), the sweeper's safety poll (default 1 000 ms) and whether it runs (default true).
   */
  heartbeats?: HeartbeatMonitorOptions;
  /**
   * The outbound address policy of the URLs users give (docs/alerting.md, "Where alerts may go"): the
   * allow-list (OUTPOST_OUTBOUND_ALLOW; default none), whether private addresses are allowed
   * (OUTPOST_OUTBOUND_PRIVATE; default `allow`) and, for tests, the name resolution. The service's own port,
   * once it listens, is refused on every address of the machine.
   */
  outbound?: Pick<OutboundPolicyOptions, 'allow' | 'privateNetworks' | 'lookup'>;
  /**
   * Alert delivery (docs/alerting.md): where providers are reached (default: from the
   * environment, OUTPOST_SMTP_URL, OUTPOST_PAGERDUTY_URL, …; see providersFromEnv), the delivery
   * worker's timings, and whether build starts it (default true; false leaves notifications
   * queued, as a crash would).
   */
  alerting?: {
    /** The providers; their `outbound` is replaced by the policy built from `outbound` below. */
    providers?: ProviderConfig;
    delivery?: Omit<DeliveryWorkerOptions, 'log' | 'senders' | 'providers'> & { start?: boolean };
  };
  /**
   * Status-page custom domains (docs/status-pages.md, "Custom domains"): the operator's allow-list of domains
   * active without a TXT record (OUTPOST_STATUS_PAGE_DOMAINS; default none), the DNS servers the TXT check
   * asks (OUTPOST_DNS_SERVERS; default the system's), the longest a lookup may take (default 10 000 ms),
   * how often the refresh reloads the domains (default 30 000 ms) and checks a pending domain again
   * (default 300 000 ms).
   */
  customDomains?: {
    allowList?: readonly string[];
    dnsServers?: readonly string[];
    lookupTimeoutMs?: number;
    refreshMs?: number;
    recheckMs?: number;
  };
};

/** The built service: the fastify app (not listening) and what `main` needs to run it. */
export type Service = {
  app: FastifyInstance;
  queue: JobQueue;
  context: ServiceContext;
  /** The worker running result hooks from the outbox (started by build). */
  outbox: ResultOutbox;
  /** The retention worker (started by build); null when `retention: false`. */
  retention: RetentionWorker | null;
  /** Heartbeat pings and the sweeper that finds late heartbeats (started by build). */
  heartbeats: HeartbeatMonitor;
  /** The worker delivering alert notifications (started by build unless told otherwise). */
  delivery: DeliveryWorker;
  /**
   * Resolves once what the request hooks took on after the answers given so far is done (the audit log's
   * entries are written after the answer): a test's reads of the store then see every entry.
   */
  settled(): Promise<void>;
  /** Aborts long polls, then closes the app. Idempotent. */
  close(): Promise<void>;
};

/**
 * Builds the service without listening, so tests use `app.inject` or `app.listen({ port: 0 })`
 * (docs/architecture.md, "The service"): the context with every worker (context.ts), then the platform
 * (errors, OpenAPI, the web app's sessions), then each module's keyless and `/v1` routes (modules.ts),
 * then the workers start.
 */
export async function build(options: BuildOptions): Promise<Service> {
  const shutdown = new AbortController();
  const { start: startDelivery = true, ...delivery } = options.alerting?.delivery ?? {};
  const { start: startOutbox = true, ...resultOutbox } = options.resultOutbox ?? {};
  // The app's server, once built: the outbound policy refuses the service's own port.
  let server: FastifyInstance['server'] | undefined;
  const context = createContext({
    ...options,
    shutdown: shutdown.signal,
    resultOutbox,
    outbound: {
      ...options.outbound,
      ownPort: () => {
        const address = server?.address();
        return address !== null && typeof address === 'object' ? address.port : null;
      },
    },
    alerting: { ...options.alerting, delivery },
  });
  // Status pages written before migration 0012 get their custom_domain column (idempotent); a page's
  // verified custom domain serves it at the domain's root (rewriteUrl below).
  await backfillCustomDomains(options.db);
  await context.statusPageDomains.start();
  const app = await platformApp(options, context);
  server = app.server;
  registerHealthRoutes(app, { db: options.db, shutdown: shutdown.signal });
  // Replicas on one PostgreSQL store wake each other's long polls (null on SQLite: one process).
  const notifier = options.storeNotify === false ? null : StoreNotifier.for(options.db, options.log);
  if (notifier) {
    context.queue.attachNotifier(notifier);
    const reloadDomains = context.statusPageDomains.followReplicas(() =>
      notifier.publish('outpost_status_pages', '*'),
    );
    notifier.subscribe(({ channel }) => {
      if (channel === 'outpost_status_pages') reloadDomains();
    });
    await notifier.start();
  }
  // The web app (docs/web-app.md): session cookies for every scope, /auth/session, the app and the trace
  // viewer. Failed sign-ins and wrong keys on /v1 count in the same limiter.
  const authFailures = new AuthFailureLimiter(undefined, options.db);
  // What modules add to every request (module.ts, RequestHooks): sign-in events here, /v1 hooks below.
  const requestHooks = MODULES.flatMap((module) => module.requestHooks?.(context) ?? []);
  context.authEvents = (event) => {
    for (const hooks of requestHooks) hooks.authEvent?.(event);
  };
  const webSessions = await registerWebApp(app, {
    db: options.db,
    appUrl: options.appUrl ?? 'http://localhost:3000',
    limiter: authFailures,
    onAuthEvent: context.authEvents,
    passwordSignIn: passwordSignIn(options.db),
    ...(options.appDir === undefined ? {} : { appDir: options.appDir }),
  });
  await app.register(async (scope) => {
    const open = scope.withTypeProvider<TypeBoxTypeProvider>();
    for (const module of MODULES) await module.publicRoutes?.(open, context);
  });
  await app.register(async (scope) => {
    // Types only: request parts typed from the route schemas; the compilers above still validate.
    const v1 = scope.withTypeProvider<TypeBoxTypeProvider>();
    // Every /v1 route declares the one permission it needs; the auth hook checks it (permissions.ts).
    v1.addHook('onRoute', requirePermissions);
    v1.addHook(
      'onRequest',
      authHook(options.db, undefined, { limiter: authFailures, sessions: webSessions }),
    );
    for (const hooks of requestHooks) hooks.v1?.(v1);
    for (const module of MODULES) await module.routes?.(v1, context);
  });

  if (startOutbox) context.outbox.start();
  context.retention?.start();
  await context.heartbeats.start();
  if (startDelivery) context.delivery.start();
  let closing: Promise<void> | undefined;
  return {
    app,
    queue: context.queue,
    context,
    outbox: context.outbox,
    retention: context.retention,
    heartbeats: context.heartbeats,
    settled: async () => {
      // A turn of the loop first: `onResponse` hooks run once the answer is out, which may be after its
      // caller (an inject) resumed.
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.all(requestHooks.map((hooks) => hooks.settled?.()));
    },
    delivery: context.delivery,
    close() {
      closing ??= (async () => {
        shutdown.abort();
        context.statusPageDomains.stop();
        await app.close();
        await notifier?.stop();
        await context.heartbeats.stop();
        await context.outbox.stop();
        await context.delivery.stop();
        await context.retention?.stop();
        await closeContextResources(context);
      })();
      return closing;
    },
  };
}

/**
 * An empty body sent as `application/json` is no body, not a 400: clients send it so on DELETE and on
 * bodiless POSTs (the hosted API's Go SDK, and so its Terraform provider). A route whose body is required
 * still answers its validation error, naming the body. Any other body is parsed by Fastify's own JSON
 * parser, prototype poisoning refused as before.
 */
function acceptEmptyJsonBodies(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    json(request, typeof body === 'string' ? body : body.toString('utf8'), done);
  });
}

/**
 * The fastify app with the platform's parts: limits, validators, error bodies, compressed JSON answers and the
 * OpenAPI document.
 */
async function platformApp(options: BuildOptions, context: ServiceContext): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: options.log.child({ component: 'http' }) as FastifyBaseLogger,
    // Agents long-poll constantly; one log line per request would drown the rest.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
    // Path parameters up to 128 characters (artifact names) must reach their schemas, not a 414.
    routerOptions: { maxParamLength: 256 },
    return503OnClosing: true,
    // A URL that does not decode or a path parameter over the limit: the spec's body too.
    frameworkErrors: answerFrameworkError,
    forceCloseConnections: 'idle',
    rewriteUrl: (req) => context.statusPageDomains.rewrite(req),
  });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    httpPart === 'body' ? bodyValidator(schema as TSchema) : queryAjv.compile(schema),
  );
  app.setSerializerCompiler(cachedSerializerCompiler);
  acceptEmptyJsonBodies(app);
  installErrorHandling(app);
  // Before every route (the plugin hooks each route as it is added): JSON answers compressed when asked.
  await registerCompression(app);
  await registerOpenApi(app);
  return app;
}
