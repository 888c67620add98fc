import type { AuthEventListener } from './platform/http/auth-events.js';
import type { Kysely } from 'kysely';
import type { CredentialView } from './platform/store/secret-fields.js';
import type { CheckResult } from '../protocol/index.js';
import type { Logger } from '../common/logger.js';
import { closeSenders, providersFromEnv, senders } from './alerting/channels/index.js';
import { DeliveryWorker, type DeliveryWorkerOptions } from './alerting/delivery/worker.js';
import type { ProviderConfig } from './alerting/types.js';
import { AnalyticsWorkers } from './analytics/workers.js';
import { HeartbeatMonitor, type HeartbeatMonitorOptions } from './heartbeats/monitor.js';
import { MODULES, retentionTasks } from './modules.js';
import { OutboundPolicy, type OutboundPolicyOptions } from './platform/http/outbound-policy.js';
import type { Database } from './platform/store/database.js';
import { DEFAULT_RETENTION, type RetentionPolicy, RetentionWorker } from './platform/store/retention.js';
import { ArtifactStore, type Artifacts } from './runs/artifacts/artifacts.js';
import { DatabaseArtifactStore } from './runs/artifacts/database-store.js';
import { JobQueue } from './runs/queue/queue.js';
import type { ResultIngest } from './runs/results/ingest.js';
import { type NamedResultHook, ResultOutbox, type ResultOutboxOptions } from './runs/results/outbox.js';
import { CheckSessions } from './runs/sessions/sessions.js';
import { CustomDomainPolicy } from './status-pages/admin/custom-domains.js';
import { CustomDomains } from './status-pages/public/access.js';

/**
 * What every module's routes share (docs/architecture.md, "Modules"): the store, the log, the shutdown
 * signal, the settings every feature reads, and every worker by name. Built once by {@link createContext};
 * nothing in the service finds a worker any other way.
 */
export type ServiceContext = {
  db: Kysely<Database>;
  log: Logger;
  /** Aborts when the service starts closing, so long polls answer at once. */
  shutdown: AbortSignal;
  /**
   * Tells the modules of each sign-in, failed sign-in and sign-out of the web app (the audit log records
   * them): set by `build()` from the modules' `requestHooks`; a no-op until then.
   */
  authEvents: AuthEventListener;
  /**
   * Where people open the service (`OUTPOST_APP_URL`), without a trailing slash: the base of links the
   * service writes (check sessions, alerts, ping URLs, status-page feeds and mail).
   */
  appUrl: string;
  /**
   * Which addresses the URLs users give (alert channels) may reach (OUTPOST_OUTBOUND_ALLOW,
   * OUTPOST_OUTBOUND_PRIVATE; docs/alerting.md, "Where alerts may go").
   */
  outbound: OutboundPolicy;
  /**
   * How answers to API-key requests show stored credentials (OUTPOST_API_CREDENTIALS): `masked` or `clear`;
   * web-app sessions always see them masked (platform/http/auth.ts, credentialViewOf).
   */
  apiCredentials: CredentialView;
  /**
   * Status-page custom domains (docs/status-pages.md, "Custom domains"): the service's own host names, the
   * operator's allow-list (OUTPOST_STATUS_PAGE_DOMAINS) and the TXT lookup (OUTPOST_DNS_SERVERS).
   */
  customDomains: CustomDomainPolicy;
  /** The job queue: enqueue, claims (long polls), leases, expiry. */
  queue: JobQueue;
  /** Result ingestion: stores each result with its retries, session, outbox rows and recorders. */
  results: ResultIngest;
  /** Check sessions: runs started together and followed to their end. */
  sessions: CheckSessions;
  /** Files agents upload for their runs (traces, screenshots, …). */
  artifacts: Artifacts;
  /** Reader threads for analytics over a store file; null for an in-memory store or one core. */
  analyticsWorkers: AnalyticsWorkers | null;
  /** Runs the modules' result hooks from the outbox, after each result's commit. */
  outbox: ResultOutbox;
  /** Delivers alert notifications and subscriber mail; kick it after a commit that queued some. */
  delivery: DeliveryWorker;
  /** Heartbeat pings and the sweeper that finds late heartbeats. */
  heartbeats: HeartbeatMonitor;
  /** The verified custom domains of status pages, served at their root (fastify's `rewriteUrl`). */
  statusPageDomains: CustomDomains;
  /** Deletes old data (the modules' retention tasks); null when retention is off. */
  retention: RetentionWorker | null;
  /**
   * Where the service's own mail to people goes (invitations, password resets): OUTPOST_SMTP_URL and
   * OUTPOST_SMTP_FROM, as alert email; null when they are not set.
   */
  smtp: { url: string; from: string } | null;
};

/** Options of {@link createContext} (app.ts `BuildOptions` passes them on). Times in milliseconds. */
export type ContextOptions = {
  db: Kysely<Database>;
  log: Logger;
  /** Aborted when the service starts closing. */
  shutdown: AbortSignal;
  /** Lease granted per claim; default 300 000 (docs/protocol.md). */
  leaseMs?: number;
  /** How long a job waits to be claimed before it expires; default 360 000. */
  queueExpiryMs?: number;
  /** Claims per job before a lost lease ends it; default 3. */
  maxClaims?: number;
  /** Base of the links the service writes; default http://localhost:3000. */
  appUrl?: string;
  /** How answers to API-key requests show stored credentials; default `masked`. */
  apiCredentials?: CredentialView;
  /** The store's file, for analytics reader threads; omitted or ":memory:" runs analytics on one thread. */
  databaseFile?: string;
  /** Hooks run from the result outbox after the modules' own (see app.ts `BuildOptions.resultHooks`). */
  resultHooks?: NamedResultHook[];
  /** Folder of uploaded artifacts; default a new folder under the OS temp dir. */
  artifactsDir?: string;
  /** `files` (default: under `artifactsDir`) or `database` (rows of the store; see app.ts BuildOptions). */
  artifactStore?: 'files' | 'database';
  /** Data retention; default DEFAULT_RETENTION; `false`: no retention worker. */
  retention?: RetentionPolicy | false;
  /** The result outbox's back-off. */
  resultOutbox?: Pick<ResultOutboxOptions, 'baseDelayMs' | 'maxDelayMs' | 'maxAttempts' | 'pollMs'>;
  /** Heartbeat monitors: clock, safety poll, whether the sweeper runs. */
  heartbeats?: HeartbeatMonitorOptions;
  /** The outbound address policy; `ownPort` answers the service's port once it listens. */
  outbound?: Pick<OutboundPolicyOptions, 'allow' | 'privateNetworks' | 'lookup' | 'ownPort'>;
  /** Alert providers (default from the environment) and the delivery worker's timings. */
  alerting?: {
    providers?: ProviderConfig;
    delivery?: Omit<DeliveryWorkerOptions, 'log' | 'senders' | 'providers'>;
  };
  /** Status-page custom domains: allow-list, DNS servers, lookup timeout, refresh and recheck periods. */
  customDomains?: {
    allowList?: readonly string[];
    dnsServers?: readonly string[];
    lookupTimeoutMs?: number;
    refreshMs?: number;
    recheckMs?: number;
  };
};

/**
 * Builds every worker of the service, once, and names them in one context (none is started: `build`
 * starts them after the routes are registered). Result recorders and outbox hooks come from the modules
 * (modules.ts), in module order, then `resultHooks`.
 */
export function createContext(options: ContextOptions): ServiceContext {
  const appUrl = options.appUrl ?? 'http://localhost:3000';
  const outbound = new OutboundPolicy(options.outbound ?? {});
  const customDomains = new CustomDomainPolicy({
    appUrl,
    ...(options.customDomains?.allowList ? { allowList: options.customDomains.allowList } : {}),
    ...(options.customDomains?.dnsServers ? { dnsServers: options.customDomains.dnsServers } : {}),
    ...(options.customDomains?.lookupTimeoutMs === undefined
      ? {}
      : { lookupTimeoutMs: options.customDomains.lookupTimeoutMs }),
  });
  const deliveryOptions = options.alerting?.delivery ?? {};
  const providers = options.alerting?.providers ?? providersFromEnv(process.env);
  const artifacts: Artifacts =
    options.artifactStore === 'database'
      ? new DatabaseArtifactStore(options.db)
      : new ArtifactStore(options.artifactsDir);
  // Filled in below: recorders, hooks and the heartbeat monitor keep a reference and read it when they run.
  const ctx = {
    db: options.db,
    log: options.log,
    shutdown: options.shutdown,
    authEvents: ((_event) => {}) as AuthEventListener,
    appUrl: appUrl.replace(/\/+$/, ''),
    smtp: providers.smtp ?? null,
    apiCredentials: options.apiCredentials ?? 'masked',
    outbound,
    customDomains,
    artifacts,
    analyticsWorkers: AnalyticsWorkers.for(options.databaseFile),
    delivery: new DeliveryWorker(options.db, {
      ...deliveryOptions,
      log: options.log.child({ component: 'alert-delivery' }),
      senders,
      providers: { ...providers, outbound },
      appUrl: deliveryOptions.appUrl ?? appUrl,
    }),
    statusPageDomains: new CustomDomains(options.db, {
      appUrl,
      policy: customDomains,
      ...(options.customDomains?.refreshMs === undefined
        ? {}
        : { refreshMs: options.customDomains.refreshMs }),
      ...(options.customDomains?.recheckMs === undefined
        ? {}
        : { recheckMs: options.customDomains.recheckMs }),
      log: options.log.child({ component: 'custom-domains' }),
    }),
    retention:
      options.retention === false
        ? null
        : new RetentionWorker(options.db, retentionTasks({ artifacts }), {
            ...(options.retention ?? DEFAULT_RETENTION),
            log: options.log.child({ component: 'retention' }),
          }),
  } as ServiceContext;
  const hooks = [...MODULES.flatMap((module) => module.hooks?.(ctx) ?? []), ...(options.resultHooks ?? [])];
  ctx.outbox = new ResultOutbox(options.db, hooks, {
    ...options.resultOutbox,
    log: options.log.child({ component: 'result-outbox' }),
  });
  const outbox = ctx.outbox;
  ctx.queue = new JobQueue(options.db, {
    leaseMs: options.leaseMs ?? 300_000,
    queueExpiryMs: options.queueExpiryMs ?? 360_000,
    resultHooks: outbox.hookFilters,
    onResultStored: () => outbox.kick(),
    resultRecorders: MODULES.flatMap((module) => module.recorders?.(ctx) ?? []),
    ...(options.maxClaims === undefined ? {} : { maxClaims: options.maxClaims }),
  });
  ctx.results = ctx.queue.results;
  ctx.sessions = new CheckSessions(options.db, ctx.queue, appUrl);
  ctx.heartbeats = new HeartbeatMonitor(ctx, {
    ...options.heartbeats,
    appUrl,
    log: options.log.child({ component: 'heartbeats' }),
  });
  return ctx;
}

/** Closes what the context's workers hold besides themselves (SMTP pools, analytics threads). */
export async function closeContextResources(ctx: ServiceContext): Promise<void> {
  await closeSenders();
  await ctx.analyticsWorkers?.close();
}

/** A stored result, as result hooks see it. */
export type StoredResult = { accountId: string; jobId: string; checkId: string; result: CheckResult };

/** Something to do after a result is stored. */
export type ResultHook = (stored: StoredResult) => void | Promise<void>;
