/**
 * What a reused script process checks after each run: that nothing of the agent-side realm a
 * script can reach (the bootstrap's globals, the Node built-ins and globals handed to scripts,
 * their classes' prototypes) was changed. Each run gets a fresh `vm` context, but the objects of
 * Node it is given are this process's own: a script that adds a property to `Buffer.prototype`,
 * replaces `fs.readFileSync` or leaves a listener on `process` would be seen by the next script.
 *
 * A fingerprint is the flat list of what a bounded walk over the own properties of the roots
 * finds: each object's prototype, extensibility and keys, each property's flags and value
 * (primitives by value, objects and functions by identity), recursing into object values and
 * prototypes. Getters are not called, except those that have a setter too, of the roots and of
 * the objects their own data properties hold (a setting held in a closure:
 * `EventEmitter.defaultMaxListeners`, `http.globalAgent`, `process.exitCode`); their value is
 * recorded, not walked. A slot that differs between two walks with nothing run between them (a getter that
 * makes a new object each time) is left out of the comparison ({@link baselineOf}).
 *
 * Bundled into the script processes: it may import only `node:` built-ins.
 */
import { types } from 'node:util';

/** Most slots a fingerprint records; past it the walk gives up and the process is not reused. */
export const MAX_FINGERPRINT_SLOTS = 400_000;

/**
 * A recorded walk; `complete` is false when it stopped at MAX_FINGERPRINT_SLOTS. A baseline also
 * has `unstable`: the slots that differ from walk to walk by themselves.
 */
export type Fingerprint = {
  slots: unknown[];
  complete: boolean;
  unstable?: ReadonlySet<number>;
  /** Where each slot was found (`process.env.FOO`), when the walk was asked for names. */
  labels?: string[] | undefined;
  /**
   * A baseline's {@link sealedObjects}: what every later walk compared with it leaves out (it
   * must be passed to them, so that both walks leave out the same).
   */
  sealed?: WeakSet<object>;
};

const getPrototypeOf = Object.getPrototypeOf;
const isExtensible = Object.isExtensible;
const isFrozen = Object.isFrozen;
const ownKeys = Reflect.ownKeys;
const getOwnPropertyDescriptor = Reflect.getOwnPropertyDescriptor;
const apply = Reflect.apply;
const isProxy = types.isProxy;

/** Marks where an object's entries end, so two walks that differ in shape cannot line up. */
const END = Symbol('end');
/** Stands for an accessor whose getter threw. */
const THREW = Symbol('threw');

/**
 * What a walk that names its slots is told: each root's name, and the property keys it may
 * name (those the baseline holds): a key a run added is not named, since a script chose it and
 * a reason is logged.
 */
export type Naming = { roots: readonly string[]; known: ReadonlySet<unknown> };

/**
 * Walks `roots` and records what it finds (see the file comment). Never calls user code but
 * the getters of accessors that have a setter; a Proxy is recorded by identity, not entered.
 */
export function fingerprint(
  roots: readonly unknown[],
  names?: Naming,
  sealed?: WeakSet<object>,
): Fingerprint {
  const slots: unknown[] = [];
  const labels: string[] | undefined = names === undefined ? undefined : [];
  const complete = guardedWalk(() => walk(roots, names, sealed, recordingSink(slots), labels));
  return { slots, complete, labels };
}

/**
 * Runs `walk` with deprecation warnings off (a getter that is deprecated, `zlib.bytesRead`, would print its
 * warning as if a run wrote it) and the RegExp statics reset before and after ({@link resetRegExpStatics}).
 */
function guardedWalk(walk: () => boolean): boolean {
  const target = process as { noDeprecation?: boolean | undefined };
  const noDeprecation = target.noDeprecation;
  target.noDeprecation = true;
  resetRegExpStatics();
  try {
    return walk();
  } finally {
    // Again after: a getter the walk called may have matched something of the run.
    resetRegExpStatics();
    target.noDeprecation = noDeprecation;
  }
}

/**
 * Sets the legacy static properties of this process's own `RegExp` (`RegExp.input`, `$1`…`$9`,
 * `lastMatch`, `lastParen`, `leftContext`, `rightContext`) to the empty string. V8 keeps there
 * the last match of any regular expression of the realm, so a run that had a built-in (or the
 * host `RegExp` itself, which scripts reach through the constructors of Node's objects) match a
 * secret would leave it readable by the next run; the properties are settable too. Every walk
 * starts and ends with it, so a check after a run finds them as the baseline did (a getter the
 * walk calls may match a regular expression of its own: Node's option lists do), and the state
 * a process is found clean in holds none of the run's.
 */
export function resetRegExpStatics(): void {
  // A literal of this realm, whose intrinsics are frozen (--frozen-intrinsics).
  /(?:)/.exec('');
}

/**
 * What a frozen object refers to (its prototype, values, getters and setters), found once: a
 * frozen object's properties and prototype cannot change, so the walk records nothing of it and
 * only goes on to what it refers to (most of the intrinsics, frozen by `--frozen-intrinsics`).
 */
const frozenReferences = new WeakMap<object, unknown[]>();

function referencesOf(object: object): unknown[] {
  let references = frozenReferences.get(object);
  if (references === undefined) {
    references = [getPrototypeOf(object)];
    for (const key of ownKeys(object)) {
      const descriptor = getOwnPropertyDescriptor(object, key);
      if (descriptor === undefined) continue;
      if ('value' in descriptor) references.push(descriptor.value);
      else references.push(descriptor.get, descriptor.set);
    }
    frozenReferences.set(object, references);
  }
  return references;
}

/**
 * Where a walk puts each slot it reaches, in order: `true` goes on, `false` stops the walk (a
 * difference found). `count` is how many slots it took so far.
 */
type Sink = { take(value: unknown): boolean; readonly count: number };

/** A sink that records every slot: the walk of {@link fingerprint}. */
function recordingSink(slots: unknown[]): Sink {
  return {
    take(value) {
      slots.push(value);
      return true;
    },
    get count() {
      return slots.length;
    },
  };
}

/**
 * A sink that compares each slot with `baseline`'s at its index as the walk reaches it (its unstable
 * slots aside), and stops the walk at the first that differs or past the baseline's last.
 */
function matchingSink(baseline: Fingerprint): Sink & { matched(): boolean } {
  const expected = baseline.slots;
  const unstable = baseline.unstable;
  let at = 0;
  let differs = false;
  return {
    take(value) {
      if (at >= expected.length || (!Object.is(expected[at], value) && unstable?.has(at) !== true)) {
        differs = true;
        return false;
      }
      at++;
      return true;
    },
    get count() {
      return at;
    },
    matched: () => !differs && at === expected.length,
  };
}

/**
 * The walk (see the file comment): each slot goes to `sink`, in an order that depends only on what
 * is walked. Returns false when the sink stopped it or it passed MAX_FINGERPRINT_SLOTS; `labels`,
 * when `names` is given, says where each slot was found.
 */
function walk(
  roots: readonly unknown[],
  names: Naming | undefined,
  sealed: WeakSet<object> | undefined,
  sink: Sink,
  labels: string[] | undefined,
): boolean {
  const seen = new Set<unknown>();
  const queue: object[] = [];
  /** The objects whose getters (with a setter) are called: the roots and their data values. */
  const shallow = new Set<unknown>();
  /** With `names`: the path each object was first reached by, and each slot's. */
  const paths = names === undefined ? null : new Map<unknown, string>();
  let here = '';
  /** `always`: visited even if sealed (the roots and their data values, whose getters are called). */
  const visit = (value: unknown, path?: string, always = false) => {
    if ((typeof value === 'object' && value !== null) || typeof value === 'function') {
      if (!seen.has(value) && (always || sealed === undefined || !sealed.has(value))) {
        seen.add(value);
        queue.push(value as object);
        if (paths !== null && path !== undefined) paths.set(value, path);
      }
    }
  };
  /** Called only with `labels`: a walk without names builds no text. */
  const label = (count: number, what: string) => {
    for (let i = 0; i < count; i++) labels?.push(what);
  };
  roots.forEach((root, i) => {
    visit(root, names?.roots[i] ?? `root ${i}`, true);
  });
  const rootCount = queue.length;
  for (const root of queue) shallow.add(root);
  for (let at = 0; at < queue.length; at++) {
    if (sink.count > MAX_FINGERPRINT_SLOTS) return false;
    const object = queue[at] as object;
    const callGetters = shallow.has(object);
    if (paths !== null) here = paths.get(object) ?? '?';
    if (!sink.take(object)) return false;
    if (labels !== undefined) label(1, here);
    if (isProxy(object)) {
      if (!sink.take(END)) return false;
      if (labels !== undefined) label(1, here);
      continue;
    }
    if (!callGetters && isFrozen(object)) {
      for (const reference of referencesOf(object))
        visit(reference, paths === null ? undefined : `${here}.*`);
      if (!sink.take(END)) return false;
      if (labels !== undefined) label(1, here);
      continue;
    }
    const proto = getPrototypeOf(object);
    if (!sink.take(proto) || !sink.take(isExtensible(object))) return false;
    if (labels !== undefined) label(2, `${here} (prototype)`);
    visit(proto, paths === null ? undefined : `${here}.__proto__`);
    for (const key of ownKeys(object)) {
      const descriptor = getOwnPropertyDescriptor(object, key);
      if (descriptor === undefined) continue;
      const path =
        names === undefined
          ? undefined
          : `${here}.${names.known.has(key) ? String(key) : '(a property added since)'}`;
      if (!sink.take(key) || !sink.take(descriptor.enumerable) || !sink.take(descriptor.configurable)) {
        return false;
      }
      if (labels !== undefined) label(3, path ?? '');
      if ('value' in descriptor) {
        if (!sink.take(descriptor.writable) || !sink.take(descriptor.value)) return false;
        if (labels !== undefined) label(2, path ?? '');
        visit(descriptor.value, path, at < rootCount);
        if (at < rootCount) shallow.add(descriptor.value);
      } else {
        if (!sink.take(descriptor.get) || !sink.take(descriptor.set)) return false;
        if (labels !== undefined) label(2, path ?? '');
        visit(descriptor.get, path === undefined ? undefined : `${path} (getter)`);
        visit(descriptor.set, path === undefined ? undefined : `${path} (setter)`);
        if (callGetters && descriptor.get !== undefined && descriptor.set !== undefined) {
          let value: unknown;
          try {
            value = apply(descriptor.get, object, []);
          } catch {
            value = THREW;
          }
          if (!sink.take(value)) return false;
          if (labels !== undefined) label(1, path ?? '');
        }
      }
    }
    if (!sink.take(END)) return false;
    if (labels !== undefined) label(1, `${here} (its last property)`);
  }
  return true;
}

/**
 * Whether a walk of `roots` now records what `baseline` does (its unstable slots aside): what
 * {@link sameFingerprint} of `baseline` and a new {@link fingerprint} with `baseline.sealed` says, found without
 * recording the walk. Each slot is compared as the walk reaches it, and the walk stops at the first that differs:
 * a clean process's check allocates no list of its 66,000 slots and compares none of them twice.
 */
export function matchesBaseline(roots: readonly unknown[], baseline: Fingerprint): boolean {
  if (!baseline.complete) return false;
  const sink = matchingSink(baseline);
  return guardedWalk(() => walk(roots, undefined, baseline.sealed, sink, undefined)) && sink.matched();
}

/**
 * The baseline of `roots`: three walks, the first to let lazy getters settle
 * (`process.allowedNodeEnvironmentFlags` replaces itself with its value), the slots where the
 * other two differ marked unstable. Incomplete when the two differ in length.
 */
export function baselineOf(roots: readonly unknown[]): Fingerprint {
  fingerprint(roots);
  const sealed = sealedObjects(roots);
  const first = fingerprint(roots, undefined, sealed);
  const second = fingerprint(roots, undefined, sealed);
  const unstable = new Set<number>();
  if (first.slots.length !== second.slots.length) return { ...second, complete: false, sealed };
  for (let i = 0; i < first.slots.length; i++)
    if (!Object.is(first.slots[i], second.slots[i])) unstable.add(i);
  return { ...second, unstable, sealed };
}

/**
 * The objects reachable from `roots` that nothing can change, nor anything they refer to: frozen
 * (so neither their properties nor their prototype can change), not a Proxy, and referring (by
 * prototype, value, getter or setter) only to primitives and other such objects. Found as the
 * greatest such set: a cycle of frozen objects is sealed when nothing it refers to outside itself
 * can change. A walk given this set records nothing of them, which is what it would record
 * anyway: a frozen object adds no slot of its own and leads only to what it refers to, and all of
 * that is sealed too. Only the getters of a walk's roots and of their data values are called, so
 * those are walked whether sealed or not (a frozen object's accessor may hold its setting in a
 * closure: `EventEmitter.defaultMaxListeners`).
 *
 * Being frozen cannot be undone, so the set stays right for the life of the process. Under
 * `--frozen-intrinsics` it holds most of the intrinsics (about 2,400 objects of a script
 * process), which every walk would otherwise go through again.
 */
export function sealedObjects(roots: readonly unknown[]): WeakSet<object> {
  const found = new Set<object>();
  const order: object[] = [];
  const add = (value: unknown) => {
    if (((typeof value === 'object' && value !== null) || typeof value === 'function') && !found.has(value)) {
      found.add(value);
      order.push(value);
    }
  };
  for (const root of roots) add(root);
  /** Frozen objects (no Proxy) and what each refers to. */
  const candidates = new Map<object, unknown[]>();
  for (let at = 0; at < order.length; at++) {
    const object = order[at] as object;
    // Never ask a Proxy whether it is frozen: that calls its traps.
    if (isProxy(object)) continue;
    if (isFrozen(object)) {
      const references = referencesOf(object);
      candidates.set(object, references);
      for (const reference of references) add(reference);
      continue;
    }
    // Not frozen: walked as the fingerprint walks it, for what it leads to.
    add(getPrototypeOf(object));
    for (const key of ownKeys(object)) {
      const descriptor = getOwnPropertyDescriptor(object, key);
      if (descriptor === undefined) continue;
      if ('value' in descriptor) add(descriptor.value);
      else {
        add(descriptor.get);
        add(descriptor.set);
      }
    }
  }
  // Drop every candidate that refers to something not a candidate, and then whatever refers to
  // a dropped one, until nothing changes.
  const referrers = new Map<object, object[]>();
  const dropped: object[] = [];
  for (const [object, references] of candidates) {
    for (const reference of references) {
      if ((typeof reference !== 'object' || reference === null) && typeof reference !== 'function') continue;
      if (!candidates.has(reference)) {
        dropped.push(object);
        break;
      }
      const list = referrers.get(reference);
      if (list === undefined) referrers.set(reference, [object]);
      else list.push(object);
    }
  }
  for (const object of dropped) candidates.delete(object);
  while (dropped.length > 0) {
    const object = dropped.pop() as object;
    for (const referrer of referrers.get(object) ?? []) {
      if (candidates.delete(referrer)) dropped.push(referrer);
    }
  }
  const sealed = new WeakSet<object>();
  for (const object of candidates.keys()) sealed.add(object);
  return sealed;
}

/** True when `now` is complete and records what `baseline` does (its unstable slots aside). */
export function sameFingerprint(baseline: Fingerprint, now: Fingerprint): boolean {
  return firstDifference(baseline, now) === null;
}

/**
 * The index of the first slot where `now` differs from `baseline` (its unstable slots aside), -1
 * when either is incomplete, null when they record the same.
 */
function firstDifference(baseline: Fingerprint, now: Fingerprint): number | null {
  if (!baseline.complete || !now.complete) return -1;
  const unstable = baseline.unstable;
  const length = Math.min(baseline.slots.length, now.slots.length);
  for (let i = 0; i < length; i++) {
    if (!Object.is(baseline.slots[i], now.slots[i]) && unstable?.has(i) !== true) return i;
  }
  return baseline.slots.length === now.slots.length ? null : length;
}

/** The {@link Naming} of a walk of `roots` called `rootNames`, after `baseline`. */
export function namingOf(baseline: Fingerprint, rootNames: readonly string[]): Naming {
  const known = new Set<unknown>();
  for (const slot of baseline.slots)
    if (typeof slot === 'string' || typeof slot === 'symbol') known.add(slot);
  return { roots: rootNames, known };
}

/**
 * Where `now` (a walk made with the {@link namingOf} `baseline`) first differs from `baseline`, in words
 * (`process.env.FOO changed`), for the reason a process is not reused; null when it does not.
 * The path is where the walk of `now` found that slot: the first path by which it reached the
 * object, which may not be the only one.
 */
export function describeDifference(baseline: Fingerprint, now: Fingerprint): string | null {
  const at = firstDifference(baseline, now);
  if (at === null) return null;
  if (at === -1) {
    return baseline.complete
      ? `the walk of what it shares stopped past ${MAX_FINGERPRINT_SLOTS} slots`
      : 'what it shares changed by itself before the first run (no baseline)';
  }
  const where = now.labels?.[at] ?? now.labels?.[now.labels.length - 1] ?? 'a shared object';
  return `it changed ${where}`;
}
