import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { linkSignal } from '../../../common/linked-signal.js';
import type { TemplateAnswer, TemplateTask } from './template-worker.js';

/** Time one template may take to compile and render, ms; then its thread is stopped and the notification FAILED. */
export const TEMPLATE_TIMEOUT_MS = 2_000;
/** Heap of the template thread, MB: a 1 MB body and its variables fit many times over. */
const TEMPLATE_WORKER_HEAP_MB = 128;

let pool: Piscina<TemplateTask, TemplateAnswer> | null = null;

/**
 * The template thread: Handlebars compiles a template to JavaScript first, and that alone takes
 * about a second for a 64 KB template of small blocks, so templates (user input) never compile or
 * render on the service's event loop. One thread (notifications are few; a slow template waits
 * for nothing else), ended after 30 s idle. A task stopped at its deadline takes its thread with
 * it (piscina terminates a thread whose task is aborted). Runs the built `template-worker.js`, or
 * from TypeScript sources (vitest, tsx) `template-worker-ts.mjs`, which loads the `.ts` through tsx.
 */
function templateWorkers(): Piscina<TemplateTask, TemplateAnswer> {
  if (pool === null) {
    const here = fileURLToPath(import.meta.url);
    pool = new Piscina({
      filename: join(dirname(here), here.endsWith('.ts') ? 'template-worker-ts.mjs' : 'template-worker.js'),
      minThreads: 0,
      maxThreads: 1,
      idleTimeout: 30_000,
      resourceLimits: { maxOldGenerationSizeMb: TEMPLATE_WORKER_HEAP_MB },
    });
  }
  return pool;
}

/**
 * Renders a webhook template in the template thread within TEMPLATE_TIMEOUT_MS (and `signal`).
 * Never rejects: a template that does not compile, loops or renders too much, runs out of time
 * or memory, answers `{ error }` with the reason.
 */
export async function renderOffThread(
  template: string,
  variables: Record<string, unknown>,
  signal: AbortSignal,
): Promise<TemplateAnswer> {
  const link = linkSignal([signal], TEMPLATE_TIMEOUT_MS);
  try {
    return await templateWorkers().run({ template, variables }, { signal: link.signal });
  } catch (err) {
    if (signal.aborted) return { error: 'the delivery was aborted while the template rendered' };
    if (link.signal.aborted) return { error: `the template did not render within ${TEMPLATE_TIMEOUT_MS} ms` };
    const code = (err as { code?: string }).code;
    return {
      error:
        code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `the template needed more than ${TEMPLATE_WORKER_HEAP_MB} MB`
          : 'the template could not be rendered (its worker failed)',
    };
  } finally {
    link.dispose();
  }
}

/** Ends the template thread (a later render starts a new one). */
export async function closeTemplateWorkers(): Promise<void> {
  const current = pool;
  pool = null;
  if (current) await current.destroy().catch(() => undefined);
}
