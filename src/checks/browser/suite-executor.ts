import { copyFile, link, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { planArtifactUpload } from '../../browser/artifact-budget.js';
import { IdentityPool } from '../../browser/identities.js';
import { runSuite, type SuiteRunOutcome } from '../../browser/suite-runner.js';
import { type ScrubOutcome, scrubArtifacts } from '../../browser/trace-scrub.js';
import { roundMs } from '../../common/clock.js';
import { PACKAGE_ROOT } from '../../common/paths.js';
import { Scrubber } from '../../common/scrub.js';
import {
  type BrowserCheckResult,
  DEFAULT_RUNTIME_ID,
  type Job,
  type RunOutcome,
  type SuiteRequest,
  SuiteRequestSchema,
} from '../../protocol/index.js';
import type { Executor, ExecutorContext, RunArtifactFile } from '../executor.js';
import { releaseOutcome } from '../outcome.js';
import { runtimeVariables } from '../runtime-variables.js';
import {
  type BrowserPoolPort,
  FINISH_RESERVE_MS,
  failure,
  jobSecrets,
  type SslProbe,
  type SslProbeTarget,
  type SslReading,
  sslCertificateField,
  startSslProbe,
} from './executor.js';

/**
 * The uids (run users) Playwright check suites run as: 62 400 to 62 463, apart from the browser
 * hosts' and runners' 62 000 – 62 255 and the script sandbox's 61 000 – 61 255. Each run has its
 * own: when it ends every process of its uid is killed.
 */
export const SUITE_UIDS = { first: 62_400, count: 64 } as const;

/** Options of {@link SuiteExecutor}. */
export type SuiteExecutorOptions = {
  pool: BrowserPoolPort;
  /** Folder of the runs' private dirs (must be traversable by the suite uids); default the OS temp dir. */
  tmpRoot?: string;
  /** Folder holding one `<runtimeId>/` per runtime; default `<package>/runtimes`. */
  runtimesDir?: string;
  /** Bytes one run may upload in all; default 150 MB. */
  uploadBudgetBytes?: number;
  /** Where the `sslCheckDomain` probe connects (default port 443, the OS resolver); for tests. */
  tlsProbe?: SslProbeTarget;
};

/**
 * The executor of Playwright check suites (PLAYWRIGHT): the project runs with the runtime's own
 * `playwright test` (src/browser/suite-runner.ts) as a uid of its own, every test connected to the
 * runtime's warm Chromium, Chromium projects only. Its traces, screenshots and JSON report are
 * scrubbed failing closed and fitted in the upload budget (failed tests' files first); the result
 * holds each test and step, the errors, and the scrubbing counts.
 */
export class SuiteExecutor implements Executor {
  readonly checkType = 'PLAYWRIGHT' as const;
  readonly #options: SuiteExecutorOptions;
  readonly #identities = new IdentityPool(SUITE_UIDS);

  constructor(options: SuiteExecutorOptions) {
    this.#options = options;
  }

  /**
   * Runs one Playwright check suite: a malformed request, no browser for its runtime, or a suite
   * that could not run is a FAILED outcome with the reason.
   */
  async run(job: Job, context: ExecutorContext): Promise<RunOutcome> {
    const startedAt = new Date();
    const t0 = performance.now();
    const request = job.check.request;
    if (!Value.Check(SuiteRequestSchema, request)) {
      const first = Value.Errors(SuiteRequestSchema, request).First();
      return failure(
        `malformed suite request: ${first ? `${first.path || '/'} ${first.message}` : 'invalid'}`,
        startedAt,
        t0,
      );
    }
    const suite = request as SuiteRequest;
    // The certificate is read alongside the suite, bounded by the run's own deadline.
    const ssl = startSslProbe(
      suite.sslCheckDomain,
      job.timeoutMs - FINISH_RESERVE_MS,
      context.signal,
      this.#options.tlsProbe,
    );
    try {
      return await this.#run(job, suite, context, ssl, startedAt, t0);
    } finally {
      ssl.cancel();
    }
  }

  /** The run once its request is valid and its certificate probe started. */
  async #run(
    job: Job,
    suite: SuiteRequest,
    context: ExecutorContext,
    ssl: SslProbe,
    startedAt: Date,
    t0: number,
  ): Promise<RunOutcome> {
    const runtimeId = job.check.runtimeId ?? DEFAULT_RUNTIME_ID;
    const secrets = jobSecrets(job);
    let lease: Awaited<ReturnType<BrowserPoolPort['acquire']>>;
    try {
      lease = await this.#options.pool.acquire(runtimeId, {
        signal: context.signal,
        accountId: job.accountId,
      });
    } catch (err) {
      return failure(`no browser for runtime ${runtimeId}: ${(err as Error).message}`, startedAt, t0);
    }
    let identity: ReturnType<IdentityPool['take']>;
    try {
      identity = this.#identities.take();
    } catch (err) {
      await lease.release({ browserFailed: false });
      return failure(`the suite could not run: ${(err as Error).message}`, startedAt, t0);
    }
    try {
      return await this.#runAs(
        job,
        suite,
        context,
        ssl,
        { lease, identity, runtimeId, secrets },
        startedAt,
        t0,
      );
    } finally {
      // After its files were scrubbed out of the run's folder: every process and file of its uid goes.
      await this.#identities.release(identity);
    }
  }

  /** The run once it has a browser (`lease`) and a run user (`identity`). */
  async #runAs(
    job: Job,
    suite: SuiteRequest,
    context: ExecutorContext,
    ssl: SslProbe,
    run: {
      lease: Awaited<ReturnType<BrowserPoolPort['acquire']>>;
      identity: ReturnType<IdentityPool['take']>;
      runtimeId: string;
      secrets: ReturnType<typeof jobSecrets>;
    },
    startedAt: Date,
    t0: number,
  ): Promise<RunOutcome> {
    const { lease, identity, runtimeId, secrets } = run;
    let outcome: SuiteRunOutcome | null = null;
    let browserFailed = false;
    try {
      const env: Record<string, string> = {};
      for (const v of job.environmentVariables) env[v.key] = v.value;
      Object.assign(env, runtimeVariables(job));
      const admittedMs = performance.now() - t0;
      outcome = await runSuite({
        runtimeDir: join(this.#options.runtimesDir ?? join(PACKAGE_ROOT, 'runtimes'), runtimeId),
        runtimeId,
        wsEndpoint: lease.wsEndpoint,
        files: suite.dependencies,
        script: suite.script,
        scriptPath: suite.scriptPath,
        env,
        runSource: job.runSource,
        testSession: job.runSource.startsWith('TEST_'),
        timeoutMs: Math.max(1_000, Math.round(job.timeoutMs - admittedMs - FINISH_RESERVE_MS)),
        tmpRoot: this.#options.tmpRoot ?? tmpdir(),
        runAs: identity,
        signal: context.signal,
        ...(lease.browserVersion ? { browserVersion: lease.browserVersion } : {}),
      });
      browserFailed = outcome.report.errors.some((e) =>
        /browser has been closed|disconnected/i.test(e.message),
      );
    } catch (err) {
      return failure(`the suite could not run: ${(err as Error).message}`, startedAt, t0);
    } finally {
      await lease.release({ browserFailed });
    }
    return this.#finish(job, outcome, runtimeId, secrets, startedAt, t0, context, ssl);
  }

  /**
   * The outcome of a suite that ran: its artifacts scrubbed and handed on (see {@link #artifacts}),
   * its report as the browser check result, `shouldFail` applied, everything scrubbed.
   */
  async #finish(
    job: Job,
    run: SuiteRunOutcome,
    runtimeId: string,
    secrets: string[],
    startedAt: Date,
    t0: number,
    context: ExecutorContext,
    ssl: SslProbe,
  ): Promise<RunOutcome> {
    const { scrub, trimmed } = await this.#artifacts(job, run, secrets, t0, context);
    const report = run.report;
    const stoppedAt = new Date().toISOString();
    // Usually settled long before; at most it waits until the run's own deadline.
    const reading: SslReading | null = await ssl.reading;
    let passed = report.status === 'PASSED';
    if (job.check.shouldFail) passed = !passed;
    const logs = run.logs.map((l) => ({ time: l.time, level: l.level, msg: l.msg }));
    if (scrub.leaked) {
      logs.push({
        time: new Date().toISOString(),
        level: 'WARN',
        msg: `artifacts withheld: ${scrub.reason ?? 'a secret could not be scrubbed'}`,
      });
    }
    if (reading?.log) logs.push(reading.log);
    const browserCheckResult: BrowserCheckResult = {
      scriptShape: 'TEST',
      runtimeId,
      playwrightVersion: report.versions.playwright,
      browserVersion: report.versions.browser,
      steps: report.steps,
      pages: report.pages,
      errors: report.errors,
      droppedErrors: report.droppedErrors,
      timedOut: report.timedOut,
      startupMs: roundMs(report.startupMs),
      scrubbing: { ...scrub.counts, artifactsWithheld: scrub.leaked },
      trimmed,
      ...sslCertificateField(reading),
    };
    const outcome: RunOutcome = {
      status: passed ? 'PASSED' : 'FAILED',
      hasFailures: !passed,
      hasErrors: false,
      isDegraded: false,
      overMaxResponseTime: false,
      responseTime: roundMs(report.durationMs),
      startedAt: startedAt.toISOString(),
      stoppedAt,
      errorMessage: passed ? null : (report.errorMessage ?? 'the suite passed but should fail'),
      assertions: [],
      logs,
      browserCheckResult,
    };
    return releaseOutcome(outcome, new Scrubber(secrets));
  }

  /**
   * Scrubs the suite's artifacts (by the run's deadline, plus the finish reserve) and plans their
   * upload within the budget; hands the files to `context.attachArtifacts` (which disposes of the
   * run's folder after the upload), or disposes of the folder at once. Returns the scrubbing's
   * outcome (`leaked`: the artifacts are withheld) and a line per file left out.
   */
  async #artifacts(
    job: Job,
    run: SuiteRunOutcome,
    secrets: string[],
    t0: number,
    context: ExecutorContext,
  ): Promise<{ scrub: ScrubOutcome; trimmed: string[] }> {
    const empty: ScrubOutcome = {
      files: [],
      counts: { secretValues: 0, credentialHeaders: 0, shortSecretsNotScrubbed: 0 },
      leaked: false,
      reason: null,
    };
    let scrub = empty;
    let files: RunArtifactFile[] = [];
    const trimmed: string[] = [];
    const outDir = join(run.dir, 'scrubbed');
    try {
      if (run.artifacts.length > 0) {
        const untilMs = job.timeoutMs - (performance.now() - t0) + FINISH_RESERVE_MS;
        const signal = AbortSignal.timeout(Math.max(1_000, Math.round(untilMs)));
        // The suite's files sit in per-test folders; the scrubber reads plain names of one folder: they
        // are linked (the suite's processes are gone, nothing changes them now) under their unique names.
        const staged = join(run.dir, 'staged');
        await mkdir(staged, { mode: 0o700 });
        for (const a of run.artifacts) {
          await link(a.path, join(staged, a.name)).catch(() => copyFile(a.path, join(staged, a.name)));
        }
        scrub = await scrubArtifacts({
          dir: staged,
          files: run.artifacts.map((a) => ({ name: a.name, kind: a.kind })),
          secrets,
          outDir,
          signal,
        }).catch((err: unknown) => ({
          ...empty,
          leaked: true,
          reason: `scrubbing failed: ${(err as Error).message}`,
        }));
        if (!scrub.leaked) {
          const failedNames = new Set(run.artifacts.filter((a) => a.failed).map((a) => a.name));
          const plan = await planArtifactUpload({
            files: scrub.files.map((f) => ({ ...f, failing: failedNames.has(f.name) })),
            ...(this.#options.uploadBudgetBytes !== undefined
              ? { budgetBytes: this.#options.uploadBudgetBytes }
              : {}),
            signal,
          }).catch(() => null);
          if (plan !== null) {
            files = plan.files.map((f) => ({ name: f.name, path: f.path }));
            for (const d of plan.dropped)
              trimmed.push(`${d.name} (${d.sizeBytes} bytes) left out: ${d.reason}`);
          }
        }
      }
    } finally {
      if (context.attachArtifacts && files.length > 0) context.attachArtifacts(files, run.dispose);
      else await run.dispose();
    }
    return { scrub, trimmed };
  }

  /** Nothing to close: the pool (owned by the agent) holds the browsers. */
  async close(): Promise<void> {
    // The pool (owned by the agent) holds the browsers.
  }
}
