import { describe, expect, it } from 'vitest';
import {
  baselineOf,
  fingerprint,
  matchesBaseline,
  sameFingerprint,
  sealedObjects,
} from '../../src/sandbox/child/fingerprint.js';

// The walk a reused script process makes after each run, and the objects it may leave out: those
// nothing can change. Leaving one out that could change would let a run's change reach the next.

/**
 * A frozen object with no prototype. This test process has no `--frozen-intrinsics`: an object
 * that inherits from its (changeable) `Object.prototype` is never sealed.
 */
function frozen<T extends object>(properties: T): T {
  return Object.freeze(Object.assign(Object.create(null) as object, properties) as T);
}

/** A frozen function with no prototype (see {@link frozen}). */
function frozenFunction<T extends (...args: never[]) => unknown>(fn: T): T {
  Object.setPrototypeOf(fn, null);
  return Object.freeze(fn);
}

/**
 * True when a walk of `roots` after `change` still matches the baseline taken before it; the walk that records
 * and compares and the one that compares as it goes (matchesBaseline, what a script process runs) must agree.
 */
function unnoticed(roots: unknown[], change: () => void): boolean {
  const baseline = baselineOf(roots);
  change();
  const same = sameFingerprint(baseline, fingerprint(roots, undefined, baseline.sealed));
  expect(matchesBaseline(roots, baseline), 'matchesBaseline agrees with a recorded walk').toBe(same);
  return same;
}

describe('sealedObjects', () => {
  it('holds frozen objects that refer only to frozen objects and primitives, cycles included', () => {
    const leaf = frozen({ n: 1, s: 'x' });
    const one: { other?: unknown } = Object.create(null) as object;
    const two = Object.assign(Object.create(null) as object, { one });
    one.other = two;
    Object.freeze(one);
    Object.freeze(two);
    const holder = frozen({ leaf, one, fn: frozenFunction(() => 1) });
    const sealed = sealedObjects([{ holder }]);

    expect(sealed.has(holder)).toBe(true);
    expect(sealed.has(leaf)).toBe(true);
    expect(sealed.has(one)).toBe(true);
    expect(sealed.has(two)).toBe(true);
  });

  it('leaves out a frozen object that leads, however far, to something that can change', () => {
    const mutable = { n: 1 };
    const inner = frozen({ mutable });
    const outer = frozen({ inner });
    const outermost = frozen({ outer });
    const loop: { next?: unknown; mutable?: unknown } = Object.assign(Object.create(null) as object, {
      mutable,
    });
    const loopBack = frozen({ loop });
    loop.next = loopBack;
    Object.freeze(loop);
    const withPrototype = Object.freeze(Object.create(mutable) as object);
    const withGetter = Object.freeze(
      Object.defineProperty(Object.create(null) as object, 'x', {
        get: () => 1,
        set: () => undefined,
        enumerable: true,
      }),
    );
    const sealed = sealedObjects([{ outermost, loop, withPrototype, withGetter }]);

    expect(sealed.has(outermost)).toBe(false);
    expect(sealed.has(outer)).toBe(false);
    expect(sealed.has(inner)).toBe(false);
    expect(sealed.has(loop)).toBe(false);
    expect(sealed.has(loopBack)).toBe(false);
    expect(sealed.has(withPrototype)).toBe(false);
    // Its getter and setter are functions nobody froze.
    expect(sealed.has(withGetter)).toBe(false);
  });

  it('never holds a Proxy nor asks one anything', () => {
    const asked: string[] = [];
    const proxy = new Proxy(frozen({}), {
      isExtensible: (target) => {
        asked.push('isExtensible');
        return Reflect.isExtensible(target);
      },
      ownKeys: (target) => {
        asked.push('ownKeys');
        return Reflect.ownKeys(target);
      },
      getOwnPropertyDescriptor: (target, key) => {
        asked.push('getOwnPropertyDescriptor');
        return Reflect.getOwnPropertyDescriptor(target, key);
      },
    });
    const holder = frozen({ proxy });
    const sealed = sealedObjects([{ holder }]);

    expect(sealed.has(proxy)).toBe(false);
    expect(sealed.has(holder)).toBe(false);
    expect(asked).toEqual([]);
  });
});

describe('a walk that leaves out sealed objects', () => {
  it('records less and still matches its baseline when nothing changed', () => {
    const roots = [Buffer, JSON, { table: frozen({ rows: frozen({ a: 1, b: frozen({ c: 'x' }) }) }) }];
    const baseline = baselineOf(roots);
    const full = fingerprint(roots);
    const now = fingerprint(roots, undefined, baseline.sealed);

    expect(sameFingerprint(baseline, now)).toBe(true);
    expect(now.slots.length).toBeLessThan(full.slots.length);
  });

  it('sees a change behind a frozen object that could change', () => {
    const mutable = { n: 1 };
    const roots = [{ holder: frozen({ inner: frozen({ mutable }) }) }];
    expect(
      unnoticed(roots, () => {
        mutable.n = 2;
      }),
    ).toBe(false);
  });

  it('still calls the getters of a root’s sealed data value (a setting kept in a closure)', () => {
    let setting = 10;
    const get = frozenFunction(() => setting);
    const set = frozenFunction((value: number) => {
      setting = value;
    });
    const settings = Object.freeze(
      Object.defineProperty(Object.create(null) as object, 'maxListeners', { get, set, enumerable: true }),
    );
    const roots = [{ settings }];
    expect(sealedObjects(roots).has(settings)).toBe(true);

    expect(
      unnoticed(roots, () => {
        (settings as { maxListeners: number }).maxListeners = 1;
      }),
    ).toBe(false);
  });

  it('sees a change to an object that is reached through a sealed object and another way too', () => {
    const shared = { n: 1 };
    const roots = [{ direct: shared, sealed: frozen({ also: frozen({ shared }) }) }];
    expect(
      unnoticed(roots, () => {
        shared.n = 2;
      }),
    ).toBe(false);
  });
});

describe('matchesBaseline', () => {
  /** A small realm of plain objects to change: every kind of slot the walk records. */
  function realm() {
    const proto = { shared: 1 };
    const values = { n: 1, s: 'x', nan: Number.NaN, zero: 0 };
    const leaf = Object.assign(Object.create(proto) as object, values) as Record<string, unknown>;
    const root: Record<string, unknown> = {
      leaf,
      list: [1, 2, 3],
      fn() {},
      get computed() {
        return 1;
      },
    };
    return { root, leaf, proto };
  }

  it('agrees with a recorded walk on every kind of change, and on none', () => {
    const changes: [string, (r: ReturnType<typeof realm>) => void, boolean][] = [
      ['nothing', () => {}, true],
      [
        'a value',
        (r) => {
          r.leaf.n = 2;
        },
        false,
      ],
      [
        'a value set to what it was',
        (r) => {
          r.leaf.n = 1;
        },
        true,
      ],
      [
        'a property added',
        (r) => {
          r.leaf.added = true;
        },
        false,
      ],
      [
        'the last property deleted (a shorter walk)',
        (r) => {
          delete (r.root as { computed?: unknown }).computed;
        },
        false,
      ],
      [
        'a property added to the last object (a longer walk)',
        (r) => {
          (r.root.list as unknown[]).push(4);
        },
        false,
      ],
      [
        'a flag',
        (r) => {
          Object.defineProperty(r.leaf, 's', { enumerable: false });
        },
        false,
      ],
      [
        'a prototype',
        (r) => {
          Object.setPrototypeOf(r.leaf, null);
        },
        false,
      ],
      [
        "a prototype's property",
        (r) => {
          r.proto.shared = 2;
        },
        false,
      ],
      [
        'extensibility',
        (r) => {
          Object.preventExtensions(r.leaf);
        },
        false,
      ],
      [
        "a function's property",
        (r) => {
          (r.root.fn as { x?: number }).x = 1;
        },
        false,
      ],
      [
        'a number made NaN',
        (r) => {
          r.leaf.n = Number.NaN;
        },
        false,
      ],
      [
        'a NaN set to NaN again',
        (r) => {
          r.leaf.nan = Number.NaN;
        },
        true,
      ],
      [
        'zero made negative zero',
        (r) => {
          r.leaf.zero = -0;
        },
        false,
      ],
    ];
    for (const [what, change, same] of changes) {
      const r = realm();
      expect(
        unnoticed([r.root], () => change(r)),
        what,
      ).toBe(same);
    }
  });

  it('leaves out the slots that change by themselves, and refuses a baseline that is not complete', () => {
    let tick = 0;
    const root = {
      get moving() {
        return tick++;
      },
      set moving(_: number) {},
      still: 1,
    };
    const baseline = baselineOf([root]);
    expect(baseline.unstable?.size).toBeGreaterThan(0);
    expect(matchesBaseline([root], baseline)).toBe(true);
    root.still = 2;
    expect(matchesBaseline([root], baseline)).toBe(false);
    expect(matchesBaseline([root], { ...baseline, complete: false })).toBe(false);
  });
});
