import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { planArtifactUpload } from '../../browser/artifact-budget.js';
import type { BrowserRunReport, RunnerPayload } from '../../browser/messages.js';
import type { BrowserRunner, BrowserRunOutcome } from '../../browser/runner-process.js';
import { type ScrubOutcome, scrubArtifacts } from '../../browser/trace-scrub.js';
import { roundMs } from '../../common/clock.js';
import { Scrubber } from '../../common/scrub.js';
import { DEFAULT_TLS_PROBE_TIMEOUT_MS, probeCertificate, type TlsProbeOptions } from '../../net/tls-probe.js';
import {
  type BrowserCheckResult,
  type BrowserRequest,
  BrowserRequestSchema,
  type Certificate,
  type CheckType,
  DEFAULT_RUNTIME_ID,
  type Job,
  type RunLog,
  type RunOutcome,
} from '../../protocol/index.js';
import type { Executor, ExecutorContext, RunArtifactFile } from '../executor.js';
import { failedOutcome, releaseOutcome } from '../outcome.js';
import { runtimeVariables } from '../runtime-variables.js';
import { BROWSER_SCRIPT_SECRET_PREFIXES } from '../../common/child/secrets.js';

/** A browser the pool lent one run: the warm browser's endpoint and a pre-started runner. */
export type BrowserLease = {
  /** `ws://127.0.0.1:<port>/<unguessable path>` of the runtime's warm Chromium. */
  wsEndpoint: string;
  /** The Chromium version the browser host reported. */
  browserVersion?: string;
  /** A runner process started before the job came (warm), used for this run only. */
  runner: BrowserRunner;
  /**
   * Gives the slot back and disposes of the runner (its temp dir too); `browserFailed` when the run
   * saw the browser die or hang (the pool checks it). Idempotent.
   */
  release(outcome: { browserFailed: boolean }): void | Promise<void>;
};

/** What the executor needs of the agent's browser pool (src/browser/pool.ts). */
export type BrowserPoolPort = {
  /**
   * Waits for a browser slot and memory headroom, then lends a warm browser of the job's account
   * (`accountId`: checks of different accounts never share a browser) and a runner.
   * @throws when the runtime is unavailable (no browser, failed compatibility check) or on abort.
   */
  acquire(runtimeId: string, options: { signal: AbortSignal; accountId: string }): Promise<BrowserLease>;
};

/** Options of {@link createBrowserExecutor}. */
export type BrowserExecutorOptions = {
  checkType: Extract<CheckType, 'BROWSER' | 'MULTI_STEP'>;
  pool: BrowserPoolPort;
  /** Where each run's scrubbed artifacts wait for upload; default the OS temp dir. */
  tmpRoot?: string;
  /** Bytes one run may upload in all; default 150 MB (docs/api.md, "Limits"). */
  uploadBudgetBytes?: number;
  /**
   * Where the `sslCheckDomain` probe connects: its port (default 443) and resolver (default the OS
   * one). Production passes none; tests point a domain at a loopback TLS server with it.
   */
  tlsProbe?: SslProbeTarget;
};

/** The port and resolver of the `sslCheckDomain` probe (see {@link TlsProbeOptions}). */
export type SslProbeTarget = Pick<TlsProbeOptions, 'port' | 'lookup'>;

/**
 * What the `sslCheckDomain` probe of a run read: the certificate (null when none could be read) and,
 * when it failed, the WARN line the run's logs get. A failed probe never fails the check.
 */
export type SslReading = { certificate: Certificate | null; log: RunLog | null };

/** A probe of a check's `sslCheckDomain` under way, started with the run and settled by its bound. */
export type SslProbe = {
  /** Null when the check has no `sslCheckDomain`; never rejects. */
  reading: Promise<SslReading | null>;
  /** Stops the probe (the run ended without a result to put it in). Idempotent. */
  cancel(): void;
};

/**
 * Starts reading the certificate of `domain` (a check's `sslCheckDomain`; null: nothing to read) in
 * parallel with the run. It is bounded by 10 s and by `untilMs`, the milliseconds left before the run's
 * own deadline (the job's `timeoutMs` less FINISH_RESERVE_MS), so awaiting it after the script never
 * delays the result past the run limit; `signal` (the job's) stops it too.
 */
export function startSslProbe(
  domain: string | null,
  untilMs: number,
  signal: AbortSignal,
  target: SslProbeTarget = {},
): SslProbe {
  if (domain === null) return { reading: Promise.resolve(null), cancel: () => {} };
  const controller = new AbortController();
  const reading = probeCertificate(domain, {
    ...target,
    timeoutMs: Math.max(1, Math.min(DEFAULT_TLS_PROBE_TIMEOUT_MS, Math.round(untilMs))),
    signal: AbortSignal.any([signal, controller.signal]),
  }).then(
    (probe): SslReading => ({
      certificate: probe.certificate,
      log:
        probe.error === null
          ? null
          : {
              time: new Date().toISOString(),
              level: 'WARN',
              msg: `the SSL certificate of ${domain} could not be read: ${probe.error}`,
            },
    }),
  );
  return { reading, cancel: () => controller.abort() };
}

/** The result's part of a reading: `sslCertificate` with the domain's certificate or null, nothing without a domain. */
export function sslCertificateField(reading: SslReading | null): { sslCertificate?: Certificate | null } {
  return reading === null ? {} : { sslCertificate: reading.certificate };
}

/**
 * Time kept back from a job's `timeoutMs` for what follows the script: killing a runner that did
 * not stop (BrowserRunner kills it 2 s after its deadline), scrubbing and planning the artifacts. The
 * dispatcher gives an executor 5 s more after the job's signal (ABANDON_AFTER_ABORT_MS), so a run
 * reports by its deadline plus 5 s (docs/checks.md, "Browser, multi-step and Playwright check suites").
 */
export const FINISH_RESERVE_MS = 4_000;

/** Most characters of one log line of the script kept in the result. */
const MAX_LOG_CHARS = 10_000;

/** Most errors (page, console, request) kept in the result; the rest are counted. */
const MAX_ENTRIES = 100;

/**
 * Time before its deadline at which a run stops its script to capture a screenshot and the trace
 * so far (RunnerPayload.captureMarginMs): a tenth of the run's time, 2 to 5 s (a screenshot and
 * the trace's end take up to a second or two on a busy machine).
 */
export function captureMarginMs(timeoutMs: number): number {
  return Math.min(5_000, Math.max(2_000, Math.round(timeoutMs / 10)));
}

/**
 * The executor of browser and multi-step checks (docs/architecture.md, "Browser checks"): runs the
 * job's script in a pre-started runner process connected to the runtime's warm Chromium (never in
 * the agent), then scrubs every artifact it left (traces, screenshots) of the job's secret values
 * and credential headers, failing closed, fits them in the upload budget and hands them to the
 * agent for upload; the result carries the steps, pages with web vitals, errors, versions and what
 * scrubbing did. Browser checks have no degraded state.
 */
export class BrowserExecutor implements Executor {
  readonly checkType: Extract<CheckType, 'BROWSER' | 'MULTI_STEP'>;
  readonly #options: BrowserExecutorOptions;

  constructor(options: BrowserExecutorOptions) {
    this.checkType = options.checkType;
    this.#options = options;
  }

  async run(job: Job, context: ExecutorContext): Promise<RunOutcome> {
    const startedAt = new Date();
    const t0 = performance.now();
    const request = job.check.request;
    if (!Value.Check(BrowserRequestSchema, request)) {
      const first = Value.Errors(BrowserRequestSchema, request).First();
      return failure(
        `malformed browser check request: ${first ? `${first.path || '/'} ${first.message}` : 'invalid'}`,
        startedAt,
        t0,
      );
    }
    // The certificate is read alongside the browser run, bounded by the run's own deadline.
    const ssl = startSslProbe(
      (request as BrowserRequest).sslCheckDomain,
      job.timeoutMs - FINISH_RESERVE_MS,
      context.signal,
      this.#options.tlsProbe,
    );
    try {
      return await this.#run(job, request as BrowserRequest, context, ssl, startedAt, t0);
    } finally {
      ssl.cancel();
    }
  }

  /** The run once its request is valid and its certificate probe started. */
  async #run(
    job: Job,
    request: BrowserRequest,
    context: ExecutorContext,
    ssl: SslProbe,
    startedAt: Date,
    t0: number,
  ): Promise<RunOutcome> {
    const runtimeId = job.check.runtimeId ?? DEFAULT_RUNTIME_ID;
    const secrets = jobSecrets(job);
    let browserVersion = '';
    let admittedMs = 0;
    let run: BrowserRunOutcome | null = null;
    let artifacts: Awaited<ReturnType<BrowserExecutor['prepareArtifacts']>> | null = null;
    // A browser that died before this check began (the pool has not noticed yet) is not the check's
    // failure: its runner cannot connect, or connects to a host whose browser is gone and cannot open
    // a context; nothing of the script ran, and the check takes a fresh lease once.
    for (let attempt = 1; run === null; attempt++) {
      let lease: BrowserLease;
      try {
        lease = await this.#options.pool.acquire(runtimeId, {
          signal: context.signal,
          accountId: job.accountId,
        });
        browserVersion = lease.browserVersion ?? '';
      } catch (err) {
        return failure(`no browser for runtime ${runtimeId}: ${(err as Error).message}`, startedAt, t0);
      }
      admittedMs = performance.now() - t0;
      const budgetMs = job.timeoutMs - admittedMs - FINISH_RESERVE_MS;
      if (budgetMs < 1_000) {
        await lease.release({ browserFailed: false });
        return failure(
          `the run waited ${roundMs(admittedMs)} ms for a browser and has no time left of its ${job.timeoutMs} ms`,
          startedAt,
          t0,
        );
      }
      const payload = buildPayload(job, request, lease.wsEndpoint, secrets, budgetMs);
      // The lease disposes of the runner (and its temp dir) on release: artifacts are scrubbed out of it first.
      let browserWasLost = false;
      try {
        const attemptRun = await lease.runner.run(payload, { signal: context.signal });
        browserWasLost = browserFailed(attemptRun);
        if (
          attempt === 1 &&
          attemptRun.report === null &&
          /^could not (connect to the browser|prepare the browser context)/.test(attemptRun.failure ?? '')
        ) {
          context.log.warn({ failure: attemptRun.failure }, 'the leased browser was gone; taking another');
          continue;
        }
        // Scrubbing may use the dispatcher's grace after the job's signal (ABANDON_AFTER_ABORT_MS, 5 s):
        // a run stopped at its deadline still gets its trace scrubbed rather than withheld.
        const untilMs = job.timeoutMs - (performance.now() - t0) + FINISH_RESERVE_MS;
        const scrubSignal = AbortSignal.timeout(Math.max(1_000, Math.round(untilMs)));
        artifacts = await this.prepareArtifacts(
          attemptRun,
          lease.runner.tmpDir,
          [...secrets, ...attemptRun.secrets],
          scrubSignal,
        );
        run = attemptRun;
      } finally {
        await lease.release({ browserFailed: browserWasLost });
      }
    }
    if (artifacts === null) throw new Error('a browser run ended without its artifacts prepared');
    const allSecrets = [...secrets, ...run.secrets];
    if (context.attachArtifacts && artifacts.files.length > 0) {
      context.attachArtifacts(artifacts.files, artifacts.release);
    } else {
      await artifacts.release();
    }
    return browserOutcome({
      ssl: await ssl.reading,
      job,
      run,
      runtimeId,
      browserVersion: browserVersion || (run.report?.versions.browser ?? ''),
      secrets: allSecrets,
      scrub: artifacts.scrub,
      trimmed: artifacts.trimmed,
      startedAt,
      admittedMs,
    });
  }

  /**
   * Scrubs the run's artifacts into a directory of their own (failing closed: on any doubt no
   * file is kept), then plans their upload within the budget. Never throws: a failure to scrub
   * is reported as withheld artifacts.
   */
  async prepareArtifacts(
    run: BrowserRunOutcome,
    runnerDir: string,
    secrets: string[],
    signal: AbortSignal,
  ): Promise<{
    files: RunArtifactFile[];
    release: () => Promise<void>;
    scrub: ScrubOutcome;
    trimmed: string[];
  }> {
    const outDir = await mkdtemp(join(this.#options.tmpRoot ?? tmpdir(), 'outpost-artifacts-'));
    const release = () => rm(outDir, { recursive: true, force: true });
    const empty: ScrubOutcome = {
      files: [],
      counts: { secretValues: 0, credentialHeaders: 0, shortSecretsNotScrubbed: 0 },
      leaked: false,
      reason: null,
    };
    if (run.artifacts.length === 0) return { files: [], release, scrub: empty, trimmed: [] };
    let scrub: ScrubOutcome;
    try {
      scrub = await scrubArtifacts({
        dir: runnerDir,
        files: run.artifacts.map((a) => ({ name: a.name, kind: a.kind })),
        secrets,
        outDir,
        // The runner's folder was given to its run user, which cannot give it away: only its files are read.
        ownerUid: (await stat(runnerDir)).uid,
        signal,
      });
    } catch (err) {
      scrub = { ...empty, leaked: true, reason: `scrubbing failed: ${(err as Error).message}` };
    }
    if (scrub.leaked) return { files: [], release, scrub, trimmed: [] };
    const failed = run.report?.status === 'FAILED' || run.report === null;
    const plan = await planArtifactUpload({
      files: scrub.files.map((f) => ({ ...f, failing: failed })),
      ...(this.#options.uploadBudgetBytes !== undefined
        ? { budgetBytes: this.#options.uploadBudgetBytes }
        : {}),
      signal,
    }).catch(() => null);
    if (plan === null)
      return { files: [], release, scrub, trimmed: ['every artifact: the upload could not be planned'] };
    const trimmed = [
      ...plan.trimmed.map(
        (t) =>
          `${t.name}: ${t.screencastFrames} screencast frames and ${t.snapshots} DOM snapshots removed (${t.bytesBefore} → ${t.bytesAfter} bytes)`,
      ),
      ...plan.dropped.map((d) => `${d.name} (${d.sizeBytes} bytes) left out: ${d.reason}`),
    ];
    return { files: plan.files.map((f) => ({ name: f.name, path: f.path })), release, scrub, trimmed };
  }

  async close(): Promise<void> {
    // The pool (owned by the agent) holds the browsers.
  }
}

/** Builds the executor of `checkType`; the pool is the agent's. */
export function createBrowserExecutor(options: BrowserExecutorOptions): BrowserExecutor {
  return new BrowserExecutor(options);
}

/**
 * The values the run must keep out of every output: secret variables, and variables named
 * `SERVICE_SECRET_*` / `OUTPOST_SECRET_*` whatever their flag.
 */
export function jobSecrets(job: Job): string[] {
  return job.environmentVariables
    .filter((v) => v.secret || BROWSER_SCRIPT_SECRET_PREFIXES.some((p) => v.key.startsWith(p)))
    .map((v) => v.value);
}

/** The runner's payload: the script, an environment of only the check's and the runtime variables. */
function buildPayload(
  job: Job,
  request: BrowserRequest,
  wsEndpoint: string,
  secrets: string[],
  timeoutMs: number,
): RunnerPayload {
  const env: Record<string, string> = {};
  for (const v of job.environmentVariables) env[v.key] = v.value;
  Object.assign(env, runtimeVariables(job), { OUTPOST: '1', OUTPOST_RUN_SOURCE: job.runSource });
  return {
    wsEndpoint,
    checkType: job.check.checkType === 'MULTI_STEP' ? 'MULTI_STEP' : 'BROWSER',
    code: request.script,
    files: request.dependencies,
    shape: null,
    env,
    secrets,
    timeoutMs: Math.round(timeoutMs),
    captureMarginMs: captureMarginMs(timeoutMs),
    video: false,
    maxLogChars: MAX_LOG_CHARS,
    maxEntries: MAX_ENTRIES,
  };
}

/** Whether the run saw its browser die or stop answering, so the pool should check it now. */
function browserFailed(run: BrowserRunOutcome): boolean {
  if (run.report === null) return true;
  return run.report.errors.some((e) =>
    /browser has been closed|Target (page, context or browser )?(has been )?closed|has been disconnected|ECONNREFUSED|WebSocket/i.test(
      e.message,
    ),
  );
}

/** A run the agent could not start or carry out: FAILED with `hasErrors`, the reason as its last log line. */
export function failure(reason: string, startedAt: Date, t0: number): RunOutcome {
  const stoppedAt = new Date().toISOString();
  return failedOutcome({
    startedAt: startedAt.toISOString(),
    stoppedAt,
    errorMessage: reason,
    logs: [{ time: stoppedAt, level: 'ERROR', msg: reason }],
    responseTime: roundMs(performance.now() - t0),
    hasErrors: true,
  });
}

/** The outcome of a run that reached its runner: everything scrubbed of the run's secrets. */
function browserOutcome(input: {
  job: Job;
  run: BrowserRunOutcome;
  runtimeId: string;
  browserVersion: string;
  secrets: string[];
  scrub: ScrubOutcome;
  trimmed: string[];
  startedAt: Date;
  admittedMs: number;
  ssl: SslReading | null;
}): RunOutcome {
  const { job, run, scrub } = input;
  const scrubber = new Scrubber(input.secrets);
  const report: BrowserRunReport | null = run.report;
  const logs: RunLog[] = run.logs.map((l) => ({ time: l.time, level: l.level, msg: l.msg }));
  if (run.droppedLogs > 0) {
    logs.push({
      time: new Date().toISOString(),
      level: 'WARN',
      msg: `${run.droppedLogs} more log lines were dropped`,
    });
  }
  if (scrub.counts.shortSecretsNotScrubbed > 0) {
    logs.push({
      time: new Date().toISOString(),
      level: 'WARN',
      msg: `${scrub.counts.shortSecretsNotScrubbed} secret values of 3 characters or fewer are too short to scrub`,
    });
  }
  if (scrub.leaked) {
    logs.push({
      time: new Date().toISOString(),
      level: 'WARN',
      msg: `artifacts withheld: ${scrub.reason ?? 'a secret could not be scrubbed from them'}`,
    });
  }
  if (input.ssl?.log) logs.push(input.ssl.log);
  const failedToRun = report === null;
  const errorMessage = failedToRun
    ? `the browser run did not report: ${run.failure ?? 'unknown'}`
    : report.errorMessage;
  let passed = !failedToRun && report.status === 'PASSED';
  if (job.check.shouldFail) passed = failedToRun ? false : !passed;
  const durationMs = report?.durationMs ?? run.elapsedMs;
  const stoppedAt = new Date(input.startedAt.getTime() + input.admittedMs + run.elapsedMs);
  const browserCheckResult: BrowserCheckResult = {
    scriptShape: report?.shape ?? 'PLAIN',
    runtimeId: input.runtimeId,
    playwrightVersion: report?.versions.playwright ?? '',
    browserVersion: input.browserVersion,
    // Steps are reported as they end (a step before its test): the result lists them as they began.
    steps: [...(report?.steps ?? run.steps)].sort((a, b) => a.startMs - b.startMs || a.depth - b.depth),
    pages: report?.pages ?? [],
    errors: report?.errors ?? [],
    droppedErrors: report?.droppedErrors ?? 0,
    timedOut: report?.timedOut ?? run.killed,
    startupMs: report ? roundMs(input.admittedMs + report.startupMs) : null,
    scrubbing: {
      secretValues: scrub.counts.secretValues,
      credentialHeaders: scrub.counts.credentialHeaders,
      shortSecretsNotScrubbed: scrub.counts.shortSecretsNotScrubbed,
      artifactsWithheld: scrub.leaked,
    },
    trimmed: input.trimmed,
    ...sslCertificateField(input.ssl),
  };
  const outcome: RunOutcome = {
    status: passed ? 'PASSED' : 'FAILED',
    hasFailures: !passed && !failedToRun,
    hasErrors: failedToRun,
    isDegraded: false,
    overMaxResponseTime: false,
    responseTime: roundMs(durationMs),
    startedAt: input.startedAt.toISOString(),
    stoppedAt: stoppedAt.toISOString(),
    errorMessage: passed
      ? null
      : (errorMessage ?? (job.check.shouldFail ? 'the check passed but should fail' : null)),
    assertions: [],
    logs,
    browserCheckResult,
  };
  // Every text of the result (logs, errors, step names, URLs) scrubbed of the run's secrets; withheld
  // whole when the run had more secrets than the scrubber can search for.
  return releaseOutcome(outcome, scrubber);
}
