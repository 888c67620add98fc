import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { Decoded, DecodeTask, Encoded, EncodeTask, ProtoFailure, ProtoTask } from './proto-work.js';

/** Time one proto task (parse and encode, or decode) may take, ms; then its thread is stopped and the run fails. */
export const PROTO_WORK_TIMEOUT_MS = 5_000;
/** Heap of one proto worker, MB. */
export const PROTO_WORKER_HEAP_MB = 128;
/**
 * Proto workers at once: one, so that a run's decode finds the types its encode parsed in the same
 * thread's cache (a second thread would parse them again), and a thread is started (tens of
 * milliseconds of the agent's loop) only after 30 s idle.
 */
const MAX_WORKERS = 1;

/**
 * The proto workers: threads kept between runs (idle 30 s), so that parsing a check's
 * `protoContent` or a server's descriptors, encoding its request and decoding its response never
 * hold the agent's event loop. Runs the built `proto-worker.js`, or from TypeScript sources
 * (vitest, tsx) `proto-worker-ts.mjs`, which loads the `.ts` entry through tsx.
 */
let pool: Piscina<ProtoTask, Encoded | Decoded | ProtoFailure> | null = null;
function protoWorkers(): Piscina<ProtoTask, Encoded | Decoded | ProtoFailure> {
  if (pool === null) {
    const here = fileURLToPath(import.meta.url);
    pool = new Piscina({
      filename: join(dirname(here), here.endsWith('.ts') ? 'proto-worker-ts.mjs' : 'proto-worker.js'),
      minThreads: 0,
      maxThreads: MAX_WORKERS,
      idleTimeout: 30_000,
      resourceLimits: { maxOldGenerationSizeMb: PROTO_WORKER_HEAP_MB },
    });
  }
  return pool;
}

async function run<T>(task: ProtoTask, what: string, timeoutMs: number): Promise<T | ProtoFailure> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  try {
    return (await protoWorkers().run(task, { signal: deadline.signal })) as T | ProtoFailure;
  } catch (err) {
    const code = (err as { code?: string }).code;
    return {
      error: deadline.signal.aborted
        ? `${what} did not finish within ${timeoutMs} ms; it was stopped`
        : code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `${what} needed more than ${PROTO_WORKER_HEAP_MB} MB; it was stopped`
          : `${what} failed: ${(err as Error).message}`,
    };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Parses the task's schema and encodes its request in a proto worker, within `timeoutMs`
 * (default {@link PROTO_WORK_TIMEOUT_MS}). Never rejects: a failure is `{ error }`.
 */
export function encodeOffThread(task: Omit<EncodeTask, 'kind'>, timeoutMs = PROTO_WORK_TIMEOUT_MS) {
  return run<Encoded>({ kind: 'encode', ...task }, 'reading the message types', timeoutMs);
}

/** Decodes a response to JSON in a proto worker (see {@link encodeOffThread}). Never rejects. */
export function decodeOffThread(task: Omit<DecodeTask, 'kind'>, timeoutMs = PROTO_WORK_TIMEOUT_MS) {
  return run<Decoded>({ kind: 'decode', ...task }, 'decoding the response', timeoutMs);
}
