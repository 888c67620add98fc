import { describe, expect, it } from 'vitest';
import { CoalescedPasses } from '../../src/common/coalesced-passes.js';

describe('CoalescedPasses', () => {
  it('runs one pass at a time; kicks during a pass make exactly one more pass after it', async () => {
    let running = 0;
    let most = 0;
    let passes = 0;
    let release: () => void = () => {};
    const passes$ = new CoalescedPasses(
      async () => {
        running += 1;
        most = Math.max(most, running);
        passes += 1;
        if (passes === 1) await new Promise<void>((resolve) => (release = resolve));
        running -= 1;
      },
      () => {},
    );
    passes$.kick();
    await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 5; i++) passes$.kick();
    release();
    await expect.poll(() => passes).toBe(2);
    await new Promise((r) => setTimeout(r, 20));
    await passes$.stop();
    expect(passes).toBe(2);
    expect(most).toBe(1);
    passes$.kick();
    expect(passes).toBe(2);
  });

  it('hands a failed pass to onError and runs again at the next kick', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const passes = new CoalescedPasses(
      async () => {
        calls += 1;
        if (calls === 1) throw new Error('store busy');
      },
      (err) => errors.push(err),
    );
    passes.kick();
    await new Promise((r) => setTimeout(r, 10));
    passes.kick();
    await passes.stop();
    expect(calls).toBe(2);
    expect(errors).toEqual([new Error('store busy')]);
  });
});
