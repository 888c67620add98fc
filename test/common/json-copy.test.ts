import { describe, expect, it } from 'vitest';
import { copyJson } from '../../src/common/json-copy.js';

// copyJson stands in for structuredClone where the service copies stored documents: it must give what
// structuredClone gives, share nothing with its source, and never let a key set a prototype.

/** A random JSON value `depth` levels deep at most, from a seeded generator (the same values every run). */
function randomJson(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 0 ? 8 : 5));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2:
      return Math.round((next() - 0.5) * 1e6) / 100;
    case 3:
      return `s${Math.floor(next() * 1000)}`;
    case 4:
      return '';
    case 5:
    case 6: {
      const object: Record<string, unknown> = {};
      const keys = Math.floor(next() * 6);
      for (let i = 0; i < keys; i++)
        object[next() < 0.2 ? String(i) : `k${Math.floor(next() * 50)}`] = randomJson(next, depth - 1);
      return object;
    }
    default:
      return Array.from({ length: Math.floor(next() * 5) }, () => randomJson(next, depth - 1));
  }
}

/** A small linear congruential generator: 2^31 − 1 modulus, seed `seed`. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 48_271) % 2_147_483_647;
    return state / 2_147_483_647;
  };
}

describe('copyJson', () => {
  it('gives what structuredClone gives for 2,000 random JSON documents, keys in the same order', () => {
    const next = seeded(7);
    for (let i = 0; i < 2_000; i++) {
      const doc = JSON.parse(JSON.stringify(randomJson(next, 6))) as unknown;
      const copied = copyJson(doc);
      expect(copied).toStrictEqual(structuredClone(doc));
      expect(JSON.stringify(copied)).toBe(JSON.stringify(doc));
    }
  });

  it('shares no object or array with its source', () => {
    const doc = JSON.parse(
      '{"request":{"headers":[{"key":"a","value":"b"}],"basicAuth":{"password":"p"}}}',
    ) as {
      request: { headers: { value: string }[]; basicAuth: { password: string } };
    };
    const copied = copyJson(doc);
    copied.request.headers[0]!.value = 'changed';
    copied.request.basicAuth.password = 'changed';
    copied.request.headers.push({ value: 'new' });

    expect(doc).toEqual({ request: { headers: [{ key: 'a', value: 'b' }], basicAuth: { password: 'p' } } });
  });

  it('copies a `__proto__` key as an own property, never as the prototype', () => {
    const doc = JSON.parse('{"__proto__":{"polluted":true},"a":{"__proto__":[1]}}') as Record<
      string,
      unknown
    >;
    const copied = copyJson(doc);

    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
    expect((copied as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(copied, '__proto__')?.value).toEqual({ polluted: true });
    expect(copied).toStrictEqual(structuredClone(doc));
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('hands what is not JSON-shaped to structuredClone, with its rules', () => {
    const when = new Date(1_700_000_000_000);
    const doc = { when, map: new Map([[1, 2]]), bytes: new Uint8Array([1, 2]), missing: undefined };
    const copied = copyJson(doc);

    expect(copied).toStrictEqual(structuredClone(doc));
    expect(copied.when).not.toBe(when);
    expect(() => copyJson({ fn: () => 1 })).toThrow(/could not be cloned/);
  });

  it('copes with a cycle and with nesting deeper than it recurses', () => {
    const cyclic: Record<string, unknown> = { name: 'a' };
    cyclic.self = cyclic;
    const copied = copyJson({ cyclic }) as { cyclic: { name: string; self: { self: { name: string } } } };
    expect(copied.cyclic).not.toBe(cyclic);
    expect(copied.cyclic.self.self.name).toBe('a');

    let deep: unknown = 'bottom';
    for (let i = 0; i < 1_000; i++) deep = [deep];
    expect(JSON.stringify(copyJson(deep))).toBe(JSON.stringify(deep));
  });
});
