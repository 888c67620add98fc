import type { BrowserRunError, BrowserRunReport } from '../messages.js';
import type { OutputLog } from './output-log.js';
import type { PlaywrightExit } from './playwright-process.js';
import type { SuiteReportResult } from './report.js';
import type { SuiteArtifact } from './types.js';

/** Most steps kept from the report. */
export const MAX_STEPS = 1_000;
/** Most errors kept from the report (and in the run's report). */
export const MAX_ERRORS = 50;

/** What a suite run's report is made of. Times are milliseconds. */
export type RunFacts = {
  /** The run's limit. */
  timeoutMs: number;
  /** How `playwright test` ended. */
  exit: PlaywrightExit;
  /** The JSON report, mapped (or why there is none). */
  parsed: SuiteReportResult;
  /** Why the wrapper config refused the user's config, or null. */
  refusal: string | null;
  /** The run's output; notes on what was dropped are added to it. */
  logs: OutputLog;
  artifacts: SuiteArtifact[];
  versions: BrowserRunReport['versions'];
  /** `Date.now()` once the run's folders were made, and at the spawn. */
  startedAt: number;
  spawnedAt: number;
  /** How long `playwright test` ran. */
  ranMs: number;
};

/** An error of kind SCRIPT (no location, no URL). */
export function scriptError(message: string, detail: string | null = null): BrowserRunError {
  return { kind: 'SCRIPT', message, detail, location: null, url: null };
}

/** A FAILED report of shape TEST with `errors` and nothing else (no steps, pages or artifacts). */
export function failedReport(
  errors: BrowserRunError[],
  versions: BrowserRunReport['versions'],
  timedOut: boolean,
  startupMs: number,
  durationMs: number,
): BrowserRunReport {
  return {
    status: 'FAILED',
    shape: 'TEST',
    errorMessage: errors[0]?.message ?? 'the suite failed',
    errors,
    droppedErrors: 0,
    steps: [],
    pages: [],
    timedOut,
    startupMs,
    durationMs,
    versions,
    artifacts: [],
  };
}

/** A TIMEOUT error saying the suite `did` (was stopped at, reached) its limit. */
function timeoutError(did: string, timeoutMs: number): BrowserRunError {
  return {
    kind: 'TIMEOUT',
    message: `the suite ${did} its limit of ${timeoutMs} ms and was stopped`,
    detail: null,
    location: null,
    url: null,
  };
}

/**
 * The run's errors, the run's own first: cancelled, killed at the deadline, the config refused,
 * Playwright's global timeout; then the report's (or why there is none).
 */
function runErrors(facts: RunFacts): {
  errors: BrowserRunError[];
  droppedErrors: number;
  globalTimeout: boolean;
} {
  const { exit, parsed, refusal, logs } = facts;
  const errors: BrowserRunError[] = [];
  let droppedErrors = 0;
  if (exit.cancelled) errors.push(scriptError('the run was cancelled'));
  if (exit.killedAtDeadline) errors.push(timeoutError('ran past', facts.timeoutMs));
  if (refusal !== null) errors.push(scriptError(refusal.trim()));
  // Playwright stopped itself at the global timeout the wrapper set: say so in the run's terms first.
  const globalTimeout =
    parsed.ok && parsed.errors.some((e) => e.kind === 'TIMEOUT' && /^Timed out waiting/.test(e.message));
  if (globalTimeout && !exit.killedAtDeadline) errors.push(timeoutError('reached', facts.timeoutMs));
  if (parsed.ok) {
    errors.push(...parsed.errors);
    droppedErrors = parsed.droppedErrors;
    if (parsed.droppedSteps > 0)
      logs.note('WARN', `${parsed.droppedSteps} steps beyond ${MAX_STEPS} were dropped`);
  } else if (refusal === null && !exit.killedAtDeadline && !exit.cancelled) {
    const reason = exit.code === null ? `signal ${exit.signal ?? 'unknown'}` : `code ${exit.code}`;
    errors.push(
      scriptError(`playwright test ended (${reason}) without a report: ${parsed.message}`, logs.tail()),
    );
  }
  return { errors, droppedErrors, globalTimeout };
}

/**
 * The run's report: PASSED when the report was read, no error was found, `playwright test` exited
 * 0 with no unexpected test, and the run was neither stopped at its limit nor cancelled; else
 * FAILED with the errors (at most {@link MAX_ERRORS}, the rest counted). Startup and duration as
 * the JSON report says, else as the agent measured.
 */
export function suiteReport(facts: RunFacts): BrowserRunReport {
  const { exit, parsed, logs, artifacts } = facts;
  const { errors, droppedErrors, globalTimeout } = runErrors(facts);
  const timedOut = exit.killedAtDeadline || globalTimeout;
  const passed =
    parsed.ok &&
    errors.length === 0 &&
    exit.code === 0 &&
    parsed.stats.unexpected === 0 &&
    !timedOut &&
    !exit.cancelled;
  if (!passed && errors.length === 0) {
    errors.push(
      scriptError(`playwright test exited with code ${exit.code ?? exit.signal ?? 'unknown'}`, logs.tail()),
    );
  }
  const startupMs =
    parsed.ok && parsed.startTime !== null
      ? Math.max(0, Date.parse(parsed.startTime) - facts.startedAt)
      : Math.max(0, facts.spawnedAt - facts.startedAt);
  const durationMs = parsed.ok && parsed.durationMs > 0 ? Math.round(parsed.durationMs) : facts.ranMs;
  return {
    status: passed ? 'PASSED' : 'FAILED',
    shape: 'TEST',
    errorMessage: passed ? null : (errors[0]?.message ?? 'the suite failed'),
    errors: passed ? [] : errors.slice(0, MAX_ERRORS),
    droppedErrors: passed ? 0 : droppedErrors + Math.max(0, errors.length - MAX_ERRORS),
    steps: parsed.ok ? parsed.steps : [],
    pages: [],
    timedOut,
    startupMs,
    durationMs,
    versions: facts.versions,
    // The runner's view of the same files (no REPORT kind there); `artifacts` has their paths.
    artifacts: artifacts.flatMap(({ name, kind, sizeBytes }) =>
      kind === 'REPORT' ? [] : [{ name, kind, sizeBytes }],
    ),
  };
}
