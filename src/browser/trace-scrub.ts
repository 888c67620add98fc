import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { Scrubber } from '../common/scrub.js';
import { MAX_REASON_CHARS, removeOutputs } from './trace-scrub/outputs.js';
import type { ArtifactTask, ScrubArtifactsOptions, ScrubOutcome } from './trace-scrub/types.js';

export type {
  ArtifactFile,
  ArtifactKind,
  ArtifactTask,
  ScrubArtifactsOptions,
  ScrubbedArtifact,
  ScrubCounts,
  ScrubOutcome,
  ShrinkLevel,
} from './trace-scrub/types.js';

/**
 * Scrubbing a browser run's artifacts before upload (docs/architecture.md, "Browser checks"):
 * Playwright traces (`trace.zip`), screenshots and videos lose every secret value, in every
 * encoding the Scrubber knows, and every credential header value, or are not uploaded at all.
 *
 * The work runs in a worker thread ({@link scrubArtifacts}): a trace is tens of megabytes of
 * JSON and images, and nothing the user controls may hold the agent's event loop. Everything
 * read from the runner's directory is untrusted (the runner shares its process with the
 * script): files are opened without following links and every size is bounded.
 *
 * This module is the main thread's side: the worker pool and {@link scrubArtifacts}. The worker's
 * side lives in trace-scrub/: reading and writing archives (zip.ts), scrubbing trace entries
 * (entries.ts, scrub-context.ts), the final byte scan (byte-patterns.ts) and the scrub itself
 * (scrub-here.ts).
 */

/** Time one run's scrub may take by default, ms. */
export const SCRUB_TIMEOUT_MS = 120_000;
/** Heap of the artifact worker thread, MB. */
export const ARTIFACT_WORKER_HEAP_MB = 1024;

let pool: Piscina | null = null;

/**
 * The artifact worker: one thread (scrubbing is CPU-bound and the agent has few cores), with a
 * heap of {@link ARTIFACT_WORKER_HEAP_MB}, ended after 10 s idle so a run's buffers do not stay.
 * A task stopped at its deadline takes its thread with it. Runs the built `scrub-worker.js`, or
 * from TypeScript sources `scrub-worker-ts.mjs`, which loads the `.ts` entry through tsx.
 */
function artifactWorkers(): Piscina {
  if (pool === null) {
    const here = fileURLToPath(import.meta.url);
    pool = new Piscina({
      filename: join(dirname(here), here.endsWith('.ts') ? 'scrub-worker-ts.mjs' : 'scrub-worker.js'),
      minThreads: 0,
      maxThreads: 1,
      idleTimeout: 10_000,
      resourceLimits: { maxOldGenerationSizeMb: ARTIFACT_WORKER_HEAP_MB },
    });
  }
  return pool;
}

/**
 * Runs `task` in the artifact worker, stopped by `signal` or after `timeoutMs`.
 * @throws Error naming what stopped it (aborted, deadline, out of memory) or the worker's error.
 */
export async function runArtifactTask<T>(
  task: ArtifactTask,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<T> {
  const deadline = AbortSignal.timeout(timeoutMs);
  const stop = signal === undefined ? deadline : AbortSignal.any([signal, deadline]);
  try {
    return (await artifactWorkers().run(task, { signal: stop })) as T;
  } catch (err) {
    if (deadline.aborted) throw new Error(`the artifact work did not finish within ${timeoutMs} ms`);
    if (signal?.aborted) throw new Error('the artifact work was stopped');
    if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      throw new Error(`the artifact work needed more than ${ARTIFACT_WORKER_HEAP_MB} MB`);
    }
    throw err;
  }
}

/**
 * Scrubs a run's artifacts into `outDir`, in the artifact worker thread (see
 * `scrubArtifactsHere` of trace-scrub/scrub-here.ts for what is done to each kind of file). Never rejects: anything that
 * goes wrong (a file missing or a link, a broken archive, a secret left, the deadline, the
 * signal) gives `leaked: true` with the reason, and no file to upload. The scrubbed files are
 * deleted then; a worker stopped in the middle of a write may still leave one behind, so the
 * caller discards `outDir` after a leaked outcome rather than reading it.
 */
export async function scrubArtifacts(options: ScrubArtifactsOptions): Promise<ScrubOutcome> {
  const { signal, timeoutMs = SCRUB_TIMEOUT_MS, ...rest } = options;
  try {
    return await runArtifactTask<ScrubOutcome>({ kind: 'scrub', ...rest }, timeoutMs, signal);
  } catch (err) {
    await removeOutputs(options.outDir, options.files, options.dir);
    const reason = `the artifacts could not be scrubbed: ${(err as Error).message}`;
    return {
      files: [],
      counts: { secretValues: 0, credentialHeaders: 0, shortSecretsNotScrubbed: 0 },
      leaked: true,
      // Short, so scrubbing it here costs the event loop nothing to speak of.
      reason: new Scrubber(options.secrets).cut(reason, MAX_REASON_CHARS),
    };
  }
}
