/**
 * Reads one Playwright check suite's JSON report (Playwright's `json` reporter) in a worker thread,
 * compiled to `suite-report-worker.cjs`, and maps it onto the steps and errors of a browser run.
 *
 * The report is written by the suite's own process, so it is untrusted: its size is bounded before
 * it is read, it is opened without following a symbolic link, and parsing it (which may take longer
 * than the agent's event loop may be held) happens here, in a worker with its own heap limit. Every
 * string that leaves the worker is cut; the numbers of steps and errors are bounded.
 *
 * Self-contained: no imports of other modules of the agent (it is transpiled alone).
 */
import fs = require('node:fs');
import path = require('node:path');
import workerThreads = require('node:worker_threads');
import type { BrowserRunError, BrowserStep } from '../messages.js';

/** What the worker is given (workerData). */
export type SuiteReportRequest = {
  /** The JSON report's path. */
  reportPath: string;
  /** Most bytes of the report read; a larger report is refused. */
  maxReportBytes: number;
  /** The project's root: error locations are made relative to it. */
  projectDir: string;
  /** Most steps kept (tests and their `test.step`s); the rest are counted. */
  maxSteps: number;
  /** Most errors kept; the rest are counted. */
  maxErrors: number;
};

/** What the worker answers (one message). */
export type SuiteReportResult =
  | {
      ok: true;
      steps: BrowserStep[];
      droppedSteps: number;
      errors: BrowserRunError[];
      droppedErrors: number;
      /** The run's start (ISO 8601) as the report says, or null. */
      startTime: string | null;
      /** The run's duration as the report says, milliseconds. */
      durationMs: number;
      /** Tests by outcome. */
      stats: { expected: number; unexpected: number; flaky: number; skipped: number };
      /** Attachment paths of attempts that did not pass, to upload first (untrusted strings: match only). */
      failedAttachments: string[];
    }
  | { ok: false; message: string };

const MAX_MESSAGE_CHARS = 1_000;
const MAX_DETAIL_CHARS = 4_096;
const MAX_NAME_CHARS = 500;
const MAX_DEPTH = 20;
const MAX_FAILED_ATTACHMENTS = 1_000;
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes are what it removes.
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const array = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
const cut = (value: string, max: number): string =>
  value.length > max ? `${value.slice(0, max - 1)}…` : value;

/** First non-empty line without colours and without Node's `Error: ` prefix. */
function firstLine(message: string): string {
  const plain = message.replace(ANSI, '');
  const line = plain.split('\n').find((l) => l.trim() !== '') ?? '';
  return cut(line.trim().replace(/^Error: /, ''), MAX_MESSAGE_CHARS);
}

/**
 * TIMEOUT for Playwright's timeouts, ASSERTION for a failed `expect` (its matcher line comes first,
 * or right after the custom message of `expect(value, 'message')`), SCRIPT for anything else.
 */
function kindOf(raw: string, message: string, timedOut: boolean): BrowserRunError['kind'] {
  if (timedOut) return 'TIMEOUT';
  if (/^(Test timeout of \d+ms exceeded|Timed out waiting|.*Timeout \d+ms exceeded)/.test(message))
    return 'TIMEOUT';
  const lines = raw
    .replace(ANSI, '')
    .split('\n')
    .map((l) => l.trim().replace(/^Error: /, ''))
    .filter((l) => l !== '')
    .slice(0, 2);
  if (lines.some((l) => /^expect[.(]/.test(l))) return 'ASSERTION';
  return 'SCRIPT';
}

/** A location inside the project: `{ file (relative), line, column }`; null for other files. */
function locationOf(
  value: unknown,
  projectDir: string,
): { file: string; line: number; column: number } | null {
  if (!isObject(value)) return null;
  const file = text(value.file);
  const line = num(value.line);
  const column = num(value.column);
  if (file === '' || line < 1) return null;
  const rel = path.relative(projectDir, path.resolve(projectDir, file));
  if (
    rel === '' ||
    rel.startsWith('..') ||
    path.isAbsolute(rel) ||
    rel.split(path.sep).includes('node_modules')
  )
    return null;
  return { file: cut(rel, MAX_NAME_CHARS), line: Math.floor(line), column: Math.max(1, Math.floor(column)) };
}

/** What a report keeps within the request's bounds: steps, errors and failed attachments, the rest counted. */
type Kept = {
  steps: BrowserStep[];
  droppedSteps: number;
  errors: BrowserRunError[];
  droppedErrors: number;
  failedAttachments: string[];
};

function pushStep(kept: Kept, request: SuiteReportRequest, step: BrowserStep): void {
  if (kept.steps.length < request.maxSteps) kept.steps.push(step);
  else kept.droppedSteps++;
}

function pushError(kept: Kept, request: SuiteReportRequest, error: BrowserRunError): void {
  if (kept.errors.length < request.maxErrors) kept.errors.push(error);
  else kept.droppedErrors++;
}

/** A run error from one of the report's error objects; null when it is not an object. */
function errorOf(value: unknown, timedOut: boolean, projectDir: string): BrowserRunError | null {
  if (!isObject(value)) return null;
  const raw = text(value.message) || text(value.value) || text(value.stack);
  const message = firstLine(raw) || 'the test failed without a message';
  const where = locationOf(value.location, projectDir);
  const rest = raw.replace(ANSI, '');
  const detail = where ? `at ${where.file}:${where.line}:${where.column}\n${rest}` : rest;
  return {
    kind: kindOf(raw, message, timedOut),
    message,
    detail: detail.trim() === '' ? null : cut(detail, MAX_DETAIL_CHARS),
    location: where ? { line: where.line, column: where.column } : null,
    url: null,
  };
}

/** A test's `test.step`s (and theirs, to {@link MAX_DEPTH}) as steps, each starting where the one before ended. */
function walkSteps(
  kept: Kept,
  request: SuiteReportRequest,
  list: unknown,
  depth: number,
  startMs: number,
  skipped: boolean,
): void {
  let at = startMs;
  for (const value of array(list)) {
    if (!isObject(value)) continue;
    const durationMs = Math.max(0, num(value.duration));
    const failed = value.error !== undefined && value.error !== null;
    pushStep(kept, request, {
      name: cut(text(value.title), MAX_NAME_CHARS),
      depth,
      startMs: at,
      durationMs,
      status: skipped ? 'SKIPPED' : failed ? 'FAILED' : 'PASSED',
      error: failed && isObject(value.error) ? firstLine(text(value.error.message)) || null : null,
    });
    if (depth < MAX_DEPTH) walkSteps(kept, request, value.steps, depth + 1, at, skipped);
    at += durationMs;
  }
}

/** One test of the report with the titles of its suites and spec. */
type FoundTest = { titles: string[]; test: Json };

/** Every test of the report's suites (to {@link MAX_DEPTH}), in order, and the names of their projects. */
function collectTests(report: Json): { tests: FoundTest[]; projectNames: Set<string> } {
  const tests: FoundTest[] = [];
  const projectNames = new Set<string>();
  const walkSuite = (suite: Json, titles: string[], depth: number) => {
    const here = [...titles, text(suite.title)].filter((t) => t !== '');
    for (const spec of array(suite.specs)) {
      if (!isObject(spec)) continue;
      for (const test of array(spec.tests)) {
        if (!isObject(test)) continue;
        projectNames.add(text(test.projectName));
        tests.push({ titles: [...here, text(spec.title)], test });
      }
    }
    if (depth < MAX_DEPTH)
      for (const child of array(suite.suites)) if (isObject(child)) walkSuite(child, here, depth + 1);
  };
  for (const suite of array(report.suites)) if (isObject(suite)) walkSuite(suite, [], 0);
  return { tests, projectNames };
}

/** True when a test (or a result) carries a `skip` or `fixme` annotation. */
const skippedOnPurpose = (value: Json | undefined) =>
  array(value?.annotations).some((a) => isObject(a) && ['skip', 'fixme'].includes(text(a.type)));

/** What every test of a report is mapped with. */
type RunContext = {
  /** Several projects: a test's name starts with its project's. */
  named: boolean;
  /** The run stopped at Playwright's global timeout. */
  globalTimedOut: boolean;
  /** The run's start, epoch ms (NaN when unknown). */
  runStart: number;
};

/** Attachment paths of a test's results that did not pass, within {@link MAX_FAILED_ATTACHMENTS}. */
function keepFailedAttachments(kept: Kept, results: Json[]): void {
  for (const result of results) {
    const status = text(result.status);
    if (status === 'passed' || status === 'skipped') continue;
    for (const attachment of array(result.attachments)) {
      if (
        isObject(attachment) &&
        typeof attachment.path === 'string' &&
        kept.failedAttachments.length < MAX_FAILED_ATTACHMENTS
      )
        kept.failedAttachments.push(attachment.path);
    }
  }
}

/** The errors of a test's last attempt (at least one when it failed); none when it was interrupted. */
function testErrorsOf(
  last: Json | undefined,
  status: BrowserStep['status'],
  interrupted: boolean,
  projectDir: string,
): BrowserRunError[] {
  const testErrors: BrowserRunError[] = [];
  if (interrupted) {
    // No error of its own: the run's timeout error is reported once, from the report's errors.
  } else if (status === 'FAILED' && last) {
    const timedOut = text(last.status) === 'timedOut';
    for (const value of array(last.errors)) {
      const error = errorOf(value, timedOut, projectDir);
      if (error) testErrors.push(error);
    }
    if (testErrors.length === 0) {
      testErrors.push({
        kind: timedOut ? 'TIMEOUT' : 'SCRIPT',
        message: `the test ended ${text(last.status) || 'without a result'}`,
        detail: null,
        location: null,
        url: null,
      });
    }
  }
  return testErrors;
}

/** One test as a step of depth 0 (its last attempt), its `test.step`s below it, and its errors. */
function mapTest(kept: Kept, request: SuiteReportRequest, found: FoundTest, run: RunContext): void {
  const { titles, test } = found;
  const results = array(test.results).filter(isObject);
  keepFailedAttachments(kept, results);
  const last = results.at(-1);
  const outcome = text(test.status);
  const name = cut([...(run.named ? [text(test.projectName)] : []), ...titles].join(' › '), MAX_NAME_CHARS);
  // A test stopped by the run's global timeout reads `interrupted` or, in 1.58, `skipped` without
  // a skip annotation: it did not pass, so it is FAILED; the run's timeout error says why.
  const lastStatus = last ? text(last.status) : '';
  const interrupted =
    lastStatus === 'interrupted' ||
    (run.globalTimedOut && lastStatus === 'skipped' && !skippedOnPurpose(test) && !skippedOnPurpose(last));
  const status: BrowserStep['status'] = interrupted
    ? 'FAILED'
    : outcome === 'skipped'
      ? 'SKIPPED'
      : outcome === 'unexpected'
        ? 'FAILED'
        : 'PASSED';
  const started = last ? Date.parse(text(last.startTime)) : Number.NaN;
  const startMs =
    Number.isFinite(started) && Number.isFinite(run.runStart) ? Math.max(0, started - run.runStart) : 0;
  const testErrors = testErrorsOf(last, status, interrupted, request.projectDir);
  pushStep(kept, request, {
    name,
    depth: 0,
    startMs,
    durationMs: last ? Math.max(0, num(last.duration)) : 0,
    status,
    error: interrupted
      ? 'interrupted at the run’s time limit'
      : testErrors[0]
        ? `${name}: ${testErrors[0].message}`.slice(0, MAX_MESSAGE_CHARS)
        : null,
  });
  if (last) walkSteps(kept, request, last.steps, 1, startMs, status === 'SKIPPED');
  for (const error of testErrors) pushError(kept, request, error);
}

/** The report's tests as steps (tests, then their `test.step`s), its errors, stats and failed attachments. */
function mapReport(report: unknown, request: SuiteReportRequest): SuiteReportResult {
  if (!isObject(report)) return { ok: false, message: 'the JSON report is not an object' };
  const kept: Kept = { steps: [], droppedSteps: 0, errors: [], droppedErrors: 0, failedAttachments: [] };
  const stats = isObject(report.stats) ? report.stats : {};
  const startTime = text(stats.startTime);
  const runStart = Date.parse(startTime);
  const { tests, projectNames } = collectTests(report);
  const run: RunContext = {
    named: projectNames.size > 1,
    globalTimedOut: array(report.errors).some(
      (e) => isObject(e) && /^Timed out waiting/.test(firstLine(text(e.message))),
    ),
    runStart,
  };
  for (const found of tests) mapTest(kept, request, found, run);
  for (const value of array(report.errors)) {
    const error = errorOf(value, false, request.projectDir);
    if (error) pushError(kept, request, error);
  }
  return {
    ok: true,
    steps: kept.steps,
    droppedSteps: kept.droppedSteps,
    errors: kept.errors,
    droppedErrors: kept.droppedErrors,
    startTime: Number.isFinite(runStart) ? startTime : null,
    durationMs: Math.max(0, num(stats.duration)),
    stats: {
      expected: num(stats.expected),
      unexpected: num(stats.unexpected),
      flaky: num(stats.flaky),
      skipped: num(stats.skipped),
    },
    failedAttachments: kept.failedAttachments,
  };
}

/** Reads at most `maxReportBytes` of a regular file, never through a symbolic link. */
function readBounded(file: string, maxBytes: number): string {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new Error('the JSON report is not a regular file');
    if (stat.size > maxBytes) throw new Error(`the JSON report is larger than ${maxBytes} bytes`);
    const buffer = Buffer.alloc(stat.size);
    let read = 0;
    while (read < buffer.length) {
      const n = fs.readSync(fd, buffer, read, buffer.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

function run(request: SuiteReportRequest): SuiteReportResult {
  let source: string;
  try {
    source = readBounded(request.reportPath, request.maxReportBytes);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, message: 'no JSON report was written' };
    return { ok: false, message: cut(String((error as Error).message ?? error), MAX_MESSAGE_CHARS) };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(source);
  } catch {
    return { ok: false, message: 'the JSON report is not valid JSON' };
  }
  return mapReport(parsed, request);
}

if (!workerThreads.isMainThread && workerThreads.parentPort) {
  workerThreads.parentPort.postMessage(run(workerThreads.workerData as SuiteReportRequest));
}
