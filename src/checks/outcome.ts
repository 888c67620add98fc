import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Assertion, AssertionResult, Job, JobCheck, RunLog, RunOutcome } from '../protocol/index.js';
import { roundMs } from '../common/clock.js';
import { Scrubber } from '../common/scrub.js';
import type { AssertionsOutcome } from './assertions/index.js';
import type { ExecutorContext } from './executor.js';
import { RunLogRecorder } from './run-log.js';
import { decideStatus } from './status.js';

// Shared by the executors: request validation, status judgement, error outcomes.

/**
 * A rejected request field's value as an error shows it: never for header values, basic auth
 * or anything named like a secret (a rejected Cookie may be a credential), at most 100
 * characters of JSON otherwise.
 */
function shownValue(path: string, value: unknown): string {
  if (/headers|basicAuth|password|secret|token|key/i.test(path)) return 'a value not shown';
  let text: string;
  try {
    text = JSON.stringify(value) ?? 'nothing';
  } catch {
    text = 'a value too deep to show';
  }
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}

/**
 * Checks a job's request against its schema and the assertion sources its check type
 * accepts. Returns the typed request, or one line naming the first problems.
 */
export function validateRequest<T extends TSchema & { static: { assertions: Assertion[] } }>(
  label: string,
  schema: T,
  request: unknown,
  sources: readonly string[],
): { request: T['static'] } | { problem: string } {
  if (!Value.Check(schema, request)) {
    const problems = [...Value.Errors(schema, request)]
      .slice(0, 3)
      .map((e) => `${e.path || '/'} ${e.message} (got ${shownValue(e.path, e.value)})`);
    return { problem: `invalid ${label} request: ${problems.join('; ')}` };
  }
  const typed = request as T['static'];
  for (const [index, assertion] of typed.assertions.entries()) {
    if (!sources.includes(assertion.source)) {
      return {
        problem: `assertion ${index + 1}: source ${assertion.source} is not one of ${sources.join(', ')}`,
      };
    }
  }
  return { request: typed };
}

/** An assertion in one line for error messages: `LATENCY avg LESS_THAN 100`. */
function describeAssertion(
  a: Pick<AssertionResult, 'source' | 'comparison'> & { property?: string; target?: string },
): string {
  return [a.source, a.property, a.comparison, a.target]
    .filter((part) => part !== undefined && part !== '')
    .join(' ');
}

/** One line per failed assertion: `assertion LATENCY avg LESS_THAN 10 failed: …`. */
export function assertionFailures(results: readonly AssertionResult[]): string[] {
  return results
    .filter((r) => r.error !== null)
    .map((r) => `assertion ${describeAssertion(r)} failed: ${r.error}`);
}

/**
 * The `errorMessage` of a judged run, also written to its log: the failures
 * joined when FAILED (or why shouldFail turned a pass into a failure), the
 * degradations joined when DEGRADED, null when PASSED. A pass that shouldFail
 * made of a failure is logged at INFO.
 */
export function explainStatus(
  status: RunOutcome['status'],
  shouldFail: boolean,
  failures: readonly string[],
  logs: RunLogRecorder,
  degradations: readonly string[],
): string | null {
  let errorMessage: string | null = null;
  if (status === 'FAILED') {
    errorMessage =
      shouldFail && failures.length === 0 ? 'the check passed but shouldFail is set' : failures.join('; ');
  } else if (status === 'DEGRADED') {
    errorMessage = degradations.join('; ');
  } else if (shouldFail && failures.length > 0) {
    logs.add('INFO', `failed as expected (shouldFail): ${failures.join('; ')}`);
  }
  if (errorMessage) logs.add(status === 'FAILED' ? 'ERROR' : 'WARN', errorMessage);
  return errorMessage;
}

/** What a run found, for {@link judgeRun}. */
export type RunFindings = {
  check: JobCheck;
  startedAt: Date;
  logs: RunLogRecorder;
  /** Total time of the run, ms: judged against degradedResponseTime / maxResponseTime. */
  responseTimeMs: number;
  /** Why the target could not be checked (connection, TLS, timeout); null when it answered. */
  unreachable: string | null;
  /** Failures besides assertions (a URL monitor's default status rule). */
  failures: string[];
  assertions: AssertionsOutcome;
};

/**
 * Applies the status rule (docs/checks.md, "Status of a run", via decideStatus) and
 * writes `errorMessage`: the failures joined when FAILED, the degradation when DEGRADED, null
 * when PASSED. The caller adds its result part.
 */
export function judgeRun(run: RunFindings): RunOutcome {
  const { check } = run;
  const rt = roundMs(run.responseTimeMs);
  const decision = decideStatus({
    failed: run.unreachable !== null || run.failures.length > 0 || !run.assertions.allPassed,
    // A run that never reached its target has no response time to judge.
    responseTimeMs: run.unreachable === null ? rt : null,
    degradedResponseTimeMs: check.degradedResponseTime,
    maxResponseTimeMs: check.maxResponseTime,
    shouldFail: check.shouldFail,
  });
  const failures = run.unreachable === null ? [...run.failures] : [run.unreachable];
  if (decision.overMaxResponseTime) {
    failures.push(`response time ${rt} ms is at or above maxResponseTime ${check.maxResponseTime} ms`);
  }
  failures.push(...assertionFailures(run.assertions.results));
  const errorMessage = explainStatus(decision.status, check.shouldFail, failures, run.logs, [
    `response time ${rt} ms is at or above degradedResponseTime ${check.degradedResponseTime} ms`,
  ]);
  // Spelled out: an object spread here cost more than the rest of the judgement (hot path).
  return {
    status: decision.status,
    hasFailures: decision.hasFailures,
    hasErrors: false,
    isDegraded: decision.isDegraded,
    overMaxResponseTime: decision.overMaxResponseTime,
    responseTime: rt,
    startedAt: run.startedAt.toISOString(),
    stoppedAt: new Date().toISOString(),
    errorMessage,
    assertions: run.assertions.results,
    logs: run.logs.lines,
  };
}

/** What {@link failedOutcome} builds a FAILED outcome from. */
export type FailedRun = {
  /** ISO 8601 times; `stoppedAt` defaults to now. */
  startedAt: string;
  stoppedAt?: string;
  errorMessage: string;
  logs: RunLog[];
  /** Already rounded, milliseconds. */
  responseTime: number;
  /** True when the agent could not carry out the run; false for a failure of the check's own making. */
  hasErrors: boolean;
};

/**
 * The one shape of a run that ended without a judgement: FAILED, no assertions, `errorMessage`
 * as the reason. Every error outcome (an executor's, the agent's for a job it could not run, a
 * withheld output) is built here.
 */
export function failedOutcome(run: FailedRun): RunOutcome {
  return {
    status: 'FAILED',
    hasFailures: true,
    hasErrors: run.hasErrors,
    isDegraded: false,
    overMaxResponseTime: false,
    responseTime: run.responseTime,
    startedAt: run.startedAt,
    stoppedAt: run.stoppedAt ?? new Date().toISOString(),
    errorMessage: run.errorMessage,
    assertions: [],
    logs: run.logs,
  };
}

/**
 * A FAILED outcome with `errorMessage` as its reason and last ERROR log line. By default the run
 * the agent could not carry out (a malformed job): `hasErrors`, response time 0. With
 * `options.hasErrors: false` a failure of the check's own making that ended the run early (an API
 * check's setup script), with the time it took, `options.responseTimeMs`.
 */
export function errorRunOutcome(
  startedAt: Date,
  logs: RunLogRecorder,
  errorMessage: string,
  options: { hasErrors?: boolean; responseTimeMs?: number } = {},
): RunOutcome {
  logs.add('ERROR', errorMessage);
  return failedOutcome({
    startedAt: startedAt.toISOString(),
    errorMessage,
    logs: logs.lines,
    responseTime: roundMs(options.responseTimeMs ?? 0),
    hasErrors: options.hasErrors ?? true,
  });
}

/**
 * The outcome of a run as it may leave the agent: every string scrubbed with the run's
 * `scrubber` — or, when the scrubber overflowed (a secret it could not search for: more than
 * MAX_SECRETS values, or one longer than MAX_SECRET_LENGTH), a FAILED outcome with `hasErrors`
 * that keeps only the run's times and says why everything else (logs, assertions and their
 * actual values, request and response, error messages) was withheld. Every executor that
 * scrubs returns its outcome through here, so a scrubber never fails open. `addScrubbed` sets
 * parts scrubbed elsewhere (a body the body worker scrubbed and cut) after the walk; it is not
 * called for a withheld outcome.
 */
export function releaseOutcome(
  outcome: RunOutcome,
  scrubber: Scrubber,
  addScrubbed?: (scrubbed: RunOutcome) => void,
): RunOutcome {
  if (!scrubber.overflowed) {
    const scrubbed = scrubber.size > 0 ? scrubber.value(outcome) : outcome;
    addScrubbed?.(scrubbed);
    return scrubbed;
  }
  const errorMessage = `output withheld: the run had ${scrubber.overflowReason}, more than the agent can scrub (secret variables, SERVICE_SECRET_* values and credentials count)`;
  return failedOutcome({
    startedAt: outcome.startedAt,
    stoppedAt: outcome.stoppedAt,
    errorMessage,
    logs: [{ time: outcome.stoppedAt, level: 'ERROR', msg: errorMessage }],
    responseTime: outcome.responseTime,
    hasErrors: true,
  });
}

/**
 * Runs `run` with a run log whose every line, and the outcome it returns, are scrubbed of the job's secret
 * variables (releaseOutcome); the agent-log lines are held and written scrubbed at the end, thrown or not.
 * The frame of the executors whose errors may echo what the job sent (DNS, SSL, TRACEROUTE).
 * @throws what `run` throws (OUTPOST_ERR_ABORTED when the job's signal aborts).
 */
export async function runScrubbed(
  job: Job,
  context: ExecutorContext,
  run: (logs: RunLogRecorder) => Promise<RunOutcome>,
): Promise<RunOutcome> {
  const logs = new RunLogRecorder(context.log, { holdAgentLog: true });
  const scrubber = new Scrubber(job.environmentVariables.filter((v) => v.secret).map((v) => v.value));
  logs.scrubWith(scrubber);
  try {
    return releaseOutcome(await run(logs), scrubber);
  } finally {
    logs.flushAgentLog();
  }
}
