/** Steps of a run: each test and `test.step`, sent as it ends. */
import asyncHooks from 'node:async_hooks';
import { now } from '../../common/child/channel.js';
import type { BrowserStep } from '../messages.js';
import { errorMessage } from './errors.js';
import { channel, cut, runState, steps } from './state.js';

/** Longest step title kept, characters. */
const MAX_STEP_NAME_CHARS = 1_024;

/** The depth of the step running in this async context (0: a test). */
export const stepDepth = new asyncHooks.AsyncLocalStorage<number>();

/** A test that skipped itself (test.skip() inside it). */
export class SkipSignal extends Error {}

/** Keeps a step (at most `maxEntries`) and sends it. */
export function recordStep(given: BrowserStep): void {
  const step = { ...given, name: cut(given.name, MAX_STEP_NAME_CHARS) };
  if (steps.length < runState.maxEntries) steps.push(step);
  channel.send({ t: 'step', step });
}

/** A step of `depth` that ends now without running (SKIPPED, or FAILED with `error`). */
export function recordInstantStep(name: string, depth: number, error: string | null): void {
  recordStep({
    name,
    depth,
    startMs: now() - runState.scriptStart,
    durationMs: 0,
    status: error === null ? 'SKIPPED' : 'FAILED',
    error,
  });
}

/** Runs `body` as the step `name`: PASSED, SKIPPED (a SkipSignal) or FAILED; rethrows what it threw. */
export async function runStep<T>(name: string, depth: number, body: () => Promise<T>): Promise<T> {
  const startMs = now() - runState.scriptStart;
  try {
    const value = await stepDepth.run(depth, body);
    recordStep({
      name,
      depth,
      startMs,
      durationMs: now() - runState.scriptStart - startMs,
      status: 'PASSED',
      error: null,
    });
    return value;
  } catch (err) {
    const skipped = err instanceof SkipSignal;
    recordStep({
      name,
      depth,
      startMs,
      durationMs: now() - runState.scriptStart - startMs,
      status: skipped ? 'SKIPPED' : 'FAILED',
      error: skipped ? null : errorMessage(err),
    });
    throw err;
  }
}
