/** What {@link timeRuns} measured: p50 and p95 wall time of the timed runs, ms (0.1 ms steps), and the warm-up's answer. */
export type RunTimes<T> = { p50Ms: number; p95Ms: number; first: T };

/**
 * Runs `run` once to warm up (its answer is kept: a row count, a byte count), then `runs` times one after the
 * other, timing each with `performance.now()`.
 * @returns the p50 and p95 of the timed runs (nearest rank), ms, and the warm-up's answer.
 */
export async function timeRuns<T>(runs: number, run: () => Promise<T>): Promise<RunTimes<T>> {
  const first = await run();
  const wall: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await run();
    wall.push(performance.now() - t0);
  }
  wall.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(wall[Math.min(wall.length - 1, Math.ceil(q * wall.length) - 1)]! * 10) / 10;
  return { p50Ms: at(0.5), p95Ms: at(0.95), first };
}
