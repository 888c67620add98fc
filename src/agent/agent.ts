import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Executor } from '../checks/executor.js';
import { type CheckType, jobClassOf } from '../protocol/index.js';
import { sleep } from '../common/abort.js';
import type { Logger } from '../common/logger.js';
import { VERSION } from '../common/paths.js';
import { type AgentConfig, profileRuns } from './config.js';
import { type BackoffOptions, JobDispatcher } from './dispatcher.js';
import { ErrorReporter } from './error-reporter.js';
import {
  type AgentStatus,
  type HealthServer,
  type HealthSnapshot,
  startHealthServer,
  type UserCodeStatus,
} from './health-server.js';
import { AgentMetrics } from './metrics.js';
import { runPoller } from './poller.js';
import { ServiceClient } from './service-client.js';
import { createNetworkDiagnostics } from './network-diagnostics.js';

/** Extra time given to jobs aborted at the end of the grace period to settle, milliseconds. */
const AFTER_HARD_ABORT_MS = 10_000;

/** How long a stopping agent waits for the service to hear that it stopped, ms. */
const STOPPED_TIMEOUT_MS = 2_000;

/** Options of {@link Agent}. */
export type AgentOptions = {
  config: AgentConfig;
  /** Executors by check type; the profile and these decide the advertised check types. */
  executors: ReadonlyMap<CheckType, Executor>;
  logger: Logger;
  /** Sent as `x-agent-id`; default a fresh UUID. */
  agentId?: string;
  /** Address the health server binds; default all interfaces. */
  healthHost?: string;
  /** Runtime ids advertised in claims; default none (no sandbox yet). */
  runtimes?: readonly string[];
  /** Back-off of claims, result posts and lease renewals; default 1 s → 30 s. Tests shorten it. */
  backoff?: BackoffOptions;
  /** How long a result post is retried, milliseconds; default 600 000. */
  resultRetryMs?: number;
  /** The browser pool of an agent that runs browser and multi-step checks (src/browser/pool.ts). */
  browsers?: AgentBrowsers;
  /** Whether user code runs apart from the agent (the `userCode` part of `GET /health`); absent: not said. */
  userCode?: UserCodeStatus;
};

/** What the agent asks of its browser pool besides lending browsers to the executors. */
export type AgentBrowsers = {
  /**
   * Runs the start-up compatibility check of every browser runtime (in the background: browser
   * checks are not claimed before their runtime passed it). Never rejects; a runtime that fails
   * is unavailable, said in `/health` and the log.
   */
  start(): Promise<void>;
  /** True while a browser check of `checkType` could start now (a runtime available, a slot and memory free). */
  canAdmit(checkType: CheckType): boolean;
  /** The `browsers` part of `GET /health`. */
  status(): unknown;
  /** Stops every browser host and runner. Idempotent. */
  close(): Promise<void>;
};

/** Check types that run in a browser: claimed only while the browser pool can admit one. */
const BROWSER_CHECK_TYPES: ReadonlySet<CheckType> = new Set<CheckType>([
  'BROWSER',
  'MULTI_STEP',
  'PLAYWRIGHT',
  'AGENTIC',
]);

/**
 * The private-location agent (docs/architecture.md, "The agent"): a health server, one claim loop and a
 * job dispatcher, stopped by one idempotent `stop()`.
 *
 * Job classes: each class (uptime, main) gets `JOB_CONCURRENCY` slots of its own, so
 * slow browser runs never starve ICMP/DNS/TCP/URL checks; a class gets 0 slots when
 * the profile is `uptime` (main) or when no executor of that class is present.
 */
export class Agent {
  /** The id sent as `x-agent-id`. */
  readonly agentId: string;
  /** Resolves after a clean `stop()`; rejects with the ServiceError of a fatal claim answer (401/403/400). */
  readonly done: Promise<void>;
  readonly #options: AgentOptions;
  readonly #log: Logger;
  readonly #client: ServiceClient;
  readonly #dispatcher: JobDispatcher;
  readonly #reporter: ErrorReporter;
  readonly #metrics: AgentMetrics;
  readonly #checkTypes: CheckType[];
  readonly #stopClaiming = new AbortController();
  readonly #hardAbort = new AbortController();
  readonly #startedAt = new Date().toISOString();
  #resolveDone!: () => void;
  #rejectDone!: (err: unknown) => void;
  #health: HealthServer | undefined;
  #starting: Promise<void> | undefined;
  #healthStarting: Promise<HealthServer | undefined> = Promise.resolve(undefined);
  #pollerDone: Promise<void> = Promise.resolve();
  #shutdown: Promise<void> | undefined;
  #ready = false;
  #lastSuccessfulPollAt: string | null = null;

  constructor(options: AgentOptions) {
    const { config, logger } = options;
    this.#options = options;
    this.agentId = options.agentId ?? randomUUID();
    this.#log = logger.child({ component: 'agent', agentId: this.agentId });
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolveDone = resolve;
      this.#rejectDone = reject;
    });
    // Marks the rejection handled; callers awaiting `done` still see it.
    this.done.catch(() => {});

    const claimable = (t: CheckType) => profileRuns(config.profile, t);
    this.#checkTypes = [...options.executors.keys()].filter(claimable);
    const classes = new Set(this.#checkTypes.map(jobClassOf));
    const executors = new Map([...options.executors].filter(([t]) => claimable(t)));

    this.#client = new ServiceClient({
      serviceUrl: config.serviceUrl,
      apiKey: config.apiKey,
      agentId: this.agentId,
      proxy: { httpsProxy: config.httpsProxy, httpProxy: config.httpProxy, noProxy: config.noProxy },
    });
    this.#reporter = new ErrorReporter({
      client: this.#client,
      enabled: config.externalObservability,
      apiKey: config.apiKey,
      logger: logger.child({ component: 'error-reporter' }),
    });
    this.#metrics = new AgentMetrics(() => ({
      runningJobs: this.#dispatcher.runningJobs(),
      freeSlots: this.#dispatcher.freeSlots(),
      ready: this.status === 'ready',
    }));
    this.#dispatcher = new JobDispatcher({
      client: this.#client,
      executors,
      concurrency: {
        uptime: classes.has('uptime') ? config.jobConcurrency : 0,
        main: classes.has('main') ? config.jobConcurrency : 0,
      },
      logger: logger.child({ component: 'dispatcher' }),
      hardSignal: this.#hardAbort.signal,
      onExecutorCrash: (err) => void this.#reporter.report(err),
      metrics: this.#metrics,
      uploadArtifact: (jobId, name, path, signal) => this.#client.uploadArtifact(jobId, name, path, signal),
      ...(options.backoff ? { backoff: options.backoff } : {}),
      ...(options.resultRetryMs !== undefined ? { resultRetryMs: options.resultRetryMs } : {}),
      ...(config.networkTraces
        ? {
            afterRun: createNetworkDiagnostics({ client: this.#client }),
          }
        : {}),
    });
  }

  /** The bound health port (the ephemeral one for `AGENT_HEALTH_PORT=0`); null before `start()`. */
  get healthPort(): number | null {
    return this.#health?.port ?? null;
  }

  /** `starting` until the first successful claim, `ready` after, `draining` from `stop()` on. */
  get status(): AgentStatus {
    if (this.#shutdown !== undefined) return 'draining';
    return this.#ready ? 'ready' : 'starting';
  }

  /** What `GET /health` answers. */
  snapshot(): HealthSnapshot {
    const running = this.#dispatcher.runningJobs();
    return {
      status: this.status,
      version: VERSION,
      runningJobs: running.uptime + running.main,
      freeSlots: this.#dispatcher.freeSlots(),
      lastSuccessfulPollAt: this.#lastSuccessfulPollAt,
      startedAt: this.#startedAt,
      ...(this.#options.browsers ? { browsers: this.#options.browsers.status() } : {}),
      ...(this.#options.userCode ? { userCode: this.#options.userCode } : {}),
    };
  }

  /**
   * Sends `err` to the error reporter (no-op when `EXTERNAL_OBSERVABILITY=off`). Never throws;
   * the promise never rejects and settles when the report was sent or given up (10 s at most).
   */
  reportError(err: unknown): Promise<void> {
    return this.#reporter.report(err);
  }

  /**
   * Starts the health server, then the claim loop. Call once.
   * @throws the health server's listen error (EADDRINUSE…); the agent is then stopped.
   */
  start(): Promise<void> {
    if (this.#starting !== undefined) return Promise.reject(new Error('Agent.start() was already called'));
    this.#starting = this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    const { config } = this.#options;
    let listenError: unknown;
    // Never rejects, so a stop() racing this start can await it to close what it bound.
    this.#healthStarting = startHealthServer({
      port: config.healthPort,
      host: this.#options.healthHost ?? config.healthHost,
      snapshot: () => this.snapshot(),
      metrics: this.#metrics.registry,
      logger: this.#options.logger.child({ component: 'health-server' }),
    }).then(
      (server) => {
        this.#health = server;
        return server;
      },
      (err: unknown) => {
        listenError = err;
        return undefined;
      },
    );
    if ((await this.#healthStarting) === undefined) {
      await this.stop();
      throw listenError;
    }
    if (this.#shutdown !== undefined) return;
    if (this.#checkTypes.length === 0) {
      this.#log.warn({ profile: config.profile }, 'no executor fits the profile: nothing will be claimed');
    }
    this.#log.info(
      { version: VERSION, checkTypes: this.#checkTypes, freeSlots: this.#dispatcher.freeSlots() },
      'agent started',
    );
    const browsers = this.#options.browsers;
    void browsers?.start();
    this.#pollerDone = runPoller({
      client: this.#client,
      dispatcher: this.#dispatcher,
      checkTypes: this.#checkTypes,
      ...(browsers
        ? { claimable: (t: CheckType) => !BROWSER_CHECK_TYPES.has(t) || browsers.canAdmit(t) }
        : {}),
      runtimes: this.#options.runtimes ?? [],
      ...(config.locations ? { locations: config.locations } : {}),
      hostName: hostname(),
      claimWaitSeconds: config.claimWaitSeconds,
      signal: this.#stopClaiming.signal,
      logger: this.#options.logger.child({ component: 'poller' }),
      metrics: this.#metrics,
      onClaimSuccess: () => {
        this.#ready = true;
        this.#lastSuccessfulPollAt = new Date().toISOString();
      },
      ...(this.#options.backoff ? { backoff: this.#options.backoff } : {}),
    }).then(
      () => {},
      (err: unknown) => {
        // Fatal (401/403/400): nothing more can be claimed or posted; stop without grace.
        void this.#stopWith(0, err);
      },
    );
  }

  /**
   * Stops the agent; idempotent, every call returns the same promise. Readiness turns 503
   * at once, the claim in flight is aborted, running jobs get `AGENT_SHUTDOWN_GRACE_SECONDS`
   * to finish and post their results (then they are aborted and their results dropped),
   * executors, the error reporter and the health server are closed. Never rejects.
   */
  stop(): Promise<void> {
    return this.#stopWith(this.#options.config.shutdownGraceMs, undefined);
  }

  /**
   * Stops the agent without grace: running jobs and result posts are aborted at once and
   * their results dropped (the service re-runs them after their leases lapse). For when
   * the service can no longer be reached for good, e.g. `outpost up` that ran it died.
   * Also cuts short a `stop()` already draining. Never rejects.
   */
  abort(): Promise<void> {
    const stopping = this.#stopWith(0, undefined);
    this.#hardAbort.abort();
    return stopping;
  }

  #stopWith(graceMs: number, fatal: unknown): Promise<void> {
    this.#shutdown ??= this.#runShutdown(graceMs, fatal);
    return this.#shutdown;
  }

  async #runShutdown(graceMs: number, fatal: unknown): Promise<void> {
    this.#log.info({ graceMs, fatal: fatal !== undefined }, 'agent stopping');
    this.#stopClaiming.abort();
    await this.#pollerDone;
    const running = this.#dispatcher.runningJobs();
    if (running.uptime + running.main > 0) this.#log.info({ running }, 'waiting for running jobs');

    if (!(await this.#drainWithin(graceMs))) {
      this.#log.warn({ graceMs }, 'grace period over; aborting running jobs');
      this.#hardAbort.abort();
      await this.#drainWithin(AFTER_HARD_ABORT_MS);
    }

    const closes = [...this.#options.executors.values()].map((e) => e.close());
    if (this.#options.browsers) closes.push(this.#options.browsers.close());
    for (const result of await Promise.allSettled(closes)) {
      if (result.status === 'rejected') this.#log.warn({ err: result.reason }, 'executor close failed');
    }
    await this.#reporter.close();
    await (await this.#healthStarting)?.close();
    // Say so, so the agent shows as disconnected at once (best effort: a fatal stop may have no key).
    if (fatal === undefined) {
      await this.#client
        .sayStopped(AbortSignal.timeout(STOPPED_TIMEOUT_MS))
        .catch((err: unknown) => this.#log.debug({ err }, 'could not tell the service the agent stopped'));
    }
    this.#hardAbort.abort();
    await this.#client.close().catch((err: unknown) => this.#log.debug({ err }, 'client close failed'));
    this.#log.info('agent stopped');
    if (fatal === undefined) this.#resolveDone();
    else this.#rejectDone(fatal);
  }

  /** True when every job and result post ended within `timeoutMs`. */
  async #drainWithin(timeoutMs: number): Promise<boolean> {
    const timeUp = new AbortController();
    const expired = sleep(timeoutMs, timeUp.signal).then(
      () => false,
      () => false,
    );
    const drained = await Promise.race([this.#dispatcher.drain().then(() => true), expired]);
    timeUp.abort();
    return drained;
  }
}
