import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { linkSignal } from '../../src/common/linked-signal.js';

describe('linkSignal', () => {
  it('aborts with the reason of the parent that aborted', () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = linkSignal([a.signal, b.signal]);

    b.abort('second');

    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe('second');
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
  });

  it('aborts with a TimeoutError after timeoutMs', async () => {
    const linked = linkSignal([], 20);

    await new Promise((resolve) => linked.signal.addEventListener('abort', resolve, { once: true }));

    expect((linked.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('is aborted at once when a parent already is', () => {
    const parent = new AbortController();
    parent.abort('early');

    expect(linkSignal([parent.signal]).signal.reason).toBe('early');
  });

  it('leaves nothing on a long-lived parent once disposed', () => {
    const parent = new AbortController();

    for (let i = 0; i < 1000; i++) linkSignal([parent.signal], 60_000).dispose();

    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });
});
