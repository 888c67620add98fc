import { availableParallelism, loadavg } from 'node:os';

/** The agent's rule: no user-controlled input holds its event loop longer than this, ms. */
export const LOOP_LIMIT_MS = 50;
/**
 * True when the machine's load average is above its core count (other suites, CI neighbours):
 * scheduling alone then delays timers, and tests add {@link LOOP_SLACK_MS} and say so.
 */
export const overloaded = (loadavg()[0] ?? 0) > availableParallelism();
/** Slack added to {@link LOOP_LIMIT_MS} on an overloaded machine, ms. */
export const LOOP_SLACK_MS = 100;
/** The limit a test asserts: {@link LOOP_LIMIT_MS}, plus {@link LOOP_SLACK_MS} when overloaded. */
export const LIMIT_MS = LOOP_LIMIT_MS + (overloaded ? LOOP_SLACK_MS : 0);

/** Runs `work` while measuring the worst gap between 5 ms ticks of this event loop, ms. */
export async function worstLoopGap<T>(work: () => Promise<T>): Promise<{ result: T; worstMs: number }> {
  let last = performance.now();
  let worstMs = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    worstMs = Math.max(worstMs, now - last);
    last = now;
  }, 5);
  try {
    const result = await work();
    worstMs = Math.max(worstMs, performance.now() - last);
    return { result, worstMs };
  } finally {
    clearInterval(tick);
  }
}
