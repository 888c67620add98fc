import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { AssertionResult } from '../../protocol/index.js';
import type { Scrubber } from '../../sandbox/scrub.js';
import {
  type BodyWorkInput,
  type BodyWorkOutput,
  decodeBody,
  doBodyWork,
  storedBodyOf,
} from './body-work.js';

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
let pool: Piscina<BodyWorkInput, BodyWorkOutput> | null = null;
function bodyWorkers(): Piscina<BodyWorkInput, BodyWorkOutput> {
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
  const timeoutMs = options.timeoutMs ?? BODY_WORK_TIMEOUT_MS;
  const release = await slot();
  try {
    const answer = await runWorker(full, timeoutMs);
    if ('assertions' in answer) return answer;
    const failed: AssertionResult[] = input.assertions.map((assertion) => ({
      source: assertion.source,
      property: assertion.property ?? '',
      comparison: assertion.comparison,
      target: assertion.target ?? '',
      regex: assertion.regex ?? null,
      actual: null,
      error: answer.reason,
    }));
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
  } finally {
    release();
  }
}

async function runWorker(
  input: BodyWorkInput,
  timeoutMs: number,
): Promise<BodyWorkOutput | { reason: string }> {
  const size = `a response body of ${'text' in input.body ? `${input.body.text.length} characters` : `${input.body.bytes.byteLength} bytes`}`;
  // The body's bytes move to the worker (transferred, not copied: copying 25 MB holds the loop).
  const transferList = 'bytes' in input.body ? [input.body.bytes.buffer as ArrayBuffer] : [];
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  try {
    return await bodyWorkers().run(input, { signal: deadline.signal, transferList });
  } catch (err) {
    const code = (err as { code?: string }).code;
    return {
      reason: deadline.signal.aborted
        ? `assertions over ${size} did not finish within ${timeoutMs} ms; their evaluation was stopped`
        : code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `assertions over ${size} needed more than ${BODY_WORKER_HEAP_MB} MB; their evaluation was stopped`
          : `assertions over ${size} could not be evaluated: ${(err as Error).message}`,
    };
  } finally {
    clearTimeout(timer);
  }
}
