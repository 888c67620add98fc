import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { Assertion, AssertionResult, AssertionSource } from '../../protocol/index.js';
import type { Scrubber } from '../../common/scrub.js';
import {
  type BodyWorkInput,
  type BodyWorkOutput,
  decodeBody,
  doBodyWork,
  storedBodyOf,
} from './body-work.js';
import type { WorkerTask } from './body-worker.js';
import { type AssertionSources, type AssertionsOutcome, evaluateAssertions } from './engine.js';

/** Time the work over one response body may take, ms; then the worker is stopped and the assertions fail. */
export const BODY_WORK_TIMEOUT_MS = 5_000;
/** Heap of one body worker, MB: a 25 MB JSON body parses within it; more ends the work as out of memory. */
export const BODY_WORKER_HEAP_MB = 256;
/** Bodies up to this size, characters, are handled on the agent's thread when no assertion reads them. */
export const INLINE_BODY_CHARS = 64 * 1024;
/** Body work running at once; more wait their turn. */
const MAX_WORKERS = Math.max(1, Math.min(2, availableParallelism()));

let running = 0;
const waiting: Array<() => void> = [];

async function slot(): Promise<() => void> {
  if (running >= MAX_WORKERS) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  return () => {
    running--;
    waiting.shift()?.();
  };
}

/**
 * The body workers: threads kept between runs (starting one costs tens of milliseconds, which
 * would bound API checks with body assertions to a few dozen a second), at most MAX_WORKERS,
 * each with a heap of BODY_WORKER_HEAP_MB, ended after 30 s idle. A task stopped at its deadline
 * takes its thread with it (piscina terminates a thread whose task is aborted) and the next task
 * gets a new one. Runs the built `body-worker.js`, or from TypeScript sources (vitest, tsx)
 * `body-worker-ts.mjs`, which loads the `.ts` entry through tsx.
 */
let pool: Piscina<WorkerTask, BodyWorkOutput | AssertionResult[]> | null = null;
function bodyWorkers(): Piscina<WorkerTask, BodyWorkOutput | AssertionResult[]> {
  if (pool === null) {
    const here = fileURLToPath(import.meta.url);
    pool = new Piscina({
      filename: join(dirname(here), here.endsWith('.ts') ? 'body-worker-ts.mjs' : 'body-worker.js'),
      minThreads: 0,
      maxThreads: MAX_WORKERS,
      idleTimeout: 30_000,
      resourceLimits: { maxOldGenerationSizeMb: BODY_WORKER_HEAP_MB },
    });
  }
  return pool;
}

/** Options of {@link evaluateHttpBody}. */
export type BodyWorkOptions = {
  /** Limit of the work, ms (default {@link BODY_WORK_TIMEOUT_MS}). */
  timeoutMs?: number;
};

/**
 * Evaluates an API check's assertions and scrubs and cuts the body to store, so that no
 * response, JSONPath or pattern holds the agent's event loop: with a body assertion
 * (TEXT_BODY, JSON_BODY), a regex, or a body over {@link INLINE_BODY_CHARS}, the work runs in a worker
 * thread with `timeoutMs` and {@link BODY_WORKER_HEAP_MB}; past either, the worker is stopped
 * and every assertion fails with the reason (the run ends FAILED, never throws). Otherwise it
 * runs here (regexes are RE2: linear). Never rejects.
 */
export async function evaluateHttpBody(
  input: Omit<BodyWorkInput, 'secrets'>,
  scrubber: Scrubber,
  options: BodyWorkOptions = {},
): Promise<BodyWorkOutput> {
  // re2js is linear but pure JavaScript: a regex over a long header value is worker work too.
  const readsBody = input.assertions.some(
    (a) => a.source === 'TEXT_BODY' || a.source === 'JSON_BODY' || (a.regex ?? '') !== '',
  );
  const body = input.body;
  const size = 'text' in body ? body.text.length : body.bytes.byteLength;
  if (!readsBody && size <= INLINE_BODY_CHARS) return doBodyWork({ ...input, secrets: [] }, scrubber);
  // The start of the body, kept here for the stored body when the worker is stopped.
  const head =
    'text' in body
      ? { text: body.text.slice(0, INLINE_BODY_CHARS), textual: body.textual }
      : { bytes: Buffer.from(body.bytes.subarray(0, INLINE_BODY_CHARS)), contentType: body.contentType };
  let owned = body;
  if (
    'bytes' in body &&
    (body.bytes.byteOffset !== 0 || body.bytes.byteLength !== body.bytes.buffer.byteLength)
  ) {
    // A view into a shared or pooled buffer: transfer a copy of its own.
    owned = { bytes: new Uint8Array(body.bytes), contentType: body.contentType };
  }
  const full: BodyWorkInput = { ...input, body: owned, secrets: scrubber.secrets() };
  const what = `assertions over a response body of ${'text' in body ? `${size} characters` : `${size} bytes`}`;
  // The body's bytes move to the worker (transferred, not copied: copying 25 MB holds the loop).
  const transferList = 'bytes' in owned ? [owned.bytes.buffer as ArrayBuffer] : [];
  const answer = await runInWorker<BodyWorkOutput>(
    { kind: 'body', ...full },
    what,
    options.timeoutMs ?? BODY_WORK_TIMEOUT_MS,
    transferList,
  );
  if ('assertions' in answer) return answer;
  const failed = failedAll(input.assertions, answer.reason);
  // The stored body without the worker: its first 64 KB only, so the work here stays small.
  const start = decodeBody(head);
  const stored =
    input.storedBodyMaxBytes === null || !start.textual
      ? { storedBody: null, storedTruncated: false }
      : storedBodyOf(start.bodyText, Math.min(input.storedBodyMaxBytes, INLINE_BODY_CHARS), scrubber);
  return {
    assertions: { results: failed, allPassed: failed.length === 0 },
    storedBody: stored.storedBody,
    storedTruncated: stored.storedBody !== null && (stored.storedTruncated || size > INLINE_BODY_CHARS),
  };
}

/**
 * Runs `task` in an assertion worker, stopped after `timeoutMs` (the thread is then replaced).
 * Resolves with the answer, or `{ reason }` naming `what` when it was stopped or failed.
 */
async function runInWorker<T>(
  task: WorkerTask,
  what: string,
  timeoutMs: number,
  transferList: ArrayBuffer[] = [],
): Promise<T | { reason: string }> {
  const release = await slot();
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  try {
    return (await bodyWorkers().run(task, { signal: deadline.signal, transferList })) as T;
  } catch (err) {
    const code = (err as { code?: string }).code;
    return {
      reason: deadline.signal.aborted
        ? `${what} did not finish within ${timeoutMs} ms; the evaluation was stopped`
        : code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `${what} needed more than ${BODY_WORKER_HEAP_MB} MB; the evaluation was stopped`
          : `${what} could not be evaluated: ${(err as Error).message}`,
    };
  } finally {
    clearTimeout(timer);
    release();
  }
}

/** Every assertion failed with `reason` (the work over their values was stopped). */
function failedAll(assertions: readonly Assertion[], reason: string): AssertionResult[] {
  return assertions.map((assertion) => ({
    source: assertion.source,
    property: assertion.property ?? '',
    comparison: assertion.comparison,
    target: assertion.target ?? '',
    regex: assertion.regex ?? null,
    actual: null,
    error: reason,
  }));
}

/**
 * `evaluateAssertions` for a check type with one JSONPath source (DNS `JSON_ANSWER`, ICMP
 * `JSON_RESPONSE`): the assertions of `jsonSource` are evaluated over `document` in an
 * assertion worker with `timeoutMs` (a JSONPath of nested filters grows as the document's size
 * to the power of its depth: 28 characters held the agent 32 s over an 8-answer DNS reply),
 * the others here (values and RE2 regexes over small values). Results keep the assertions'
 * order. Past the deadline each JSONPath assertion fails with the reason. Never rejects.
 */
export async function evaluateAssertionsWithJsonPath(
  assertions: readonly Assertion[],
  sources: AssertionSources,
  jsonSource: AssertionSource,
  document: unknown,
  options: BodyWorkOptions = {},
): Promise<AssertionsOutcome> {
  const json = assertions.filter((a) => a.source === jsonSource);
  const here = evaluateAssertions(
    assertions.filter((a) => a.source !== jsonSource),
    sources,
  ).results;
  let there: AssertionResult[] = [];
  if (json.length > 0) {
    const answer = await runInWorker<AssertionResult[]>(
      { kind: 'json', assertions: json, document },
      'the JSONPath',
      options.timeoutMs ?? BODY_WORK_TIMEOUT_MS,
    );
    there = 'reason' in answer ? failedAll(json, answer.reason) : answer;
  }
  const results = assertions.map((a) => (a.source === jsonSource ? there : here).shift() as AssertionResult);
  return { results, allPassed: results.every((r) => r.error === null) };
}
