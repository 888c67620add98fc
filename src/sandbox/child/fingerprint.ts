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
export type Fingerprint = { slots: unknown[]; complete: boolean; unstable?: ReadonlySet<number> };

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
 * Walks `roots` and records what it finds (see the file comment). Never calls user code but
 * the getters of accessors that have a setter; a Proxy is recorded by identity, not entered.
 */
export function fingerprint(roots: readonly unknown[]): Fingerprint {
  // A getter that is deprecated (`zlib.bytesRead`) would print its warning as if a run wrote it.
  const target = process as { noDeprecation?: boolean | undefined };
  const noDeprecation = target.noDeprecation;
  target.noDeprecation = true;
  try {
    return walk(roots);
  } finally {
    target.noDeprecation = noDeprecation;
  }
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

function walk(roots: readonly unknown[]): Fingerprint {
  const slots: unknown[] = [];
  const seen = new Set<unknown>();
  const queue: object[] = [];
  /** The objects whose getters (with a setter) are called: the roots and their data values. */
  const shallow = new Set<unknown>();
  const visit = (value: unknown) => {
    if ((typeof value === 'object' && value !== null) || typeof value === 'function') {
      if (!seen.has(value)) {
        seen.add(value);
        queue.push(value as object);
      }
    }
  };
  for (const root of roots) visit(root);
  const rootCount = queue.length;
  for (const root of queue) shallow.add(root);
  for (let at = 0; at < queue.length; at++) {
    if (slots.length > MAX_FINGERPRINT_SLOTS) return { slots, complete: false };
    const object = queue[at] as object;
    const callGetters = shallow.has(object);
    slots.push(object);
    if (isProxy(object)) {
      slots.push(END);
      continue;
    }
    if (!callGetters && isFrozen(object)) {
      for (const reference of referencesOf(object)) visit(reference);
      slots.push(END);
      continue;
    }
    const proto = getPrototypeOf(object);
    slots.push(proto, isExtensible(object));
    visit(proto);
    for (const key of ownKeys(object)) {
      const descriptor = getOwnPropertyDescriptor(object, key);
      if (descriptor === undefined) continue;
      slots.push(key, descriptor.enumerable, descriptor.configurable);
      if ('value' in descriptor) {
        slots.push(descriptor.writable, descriptor.value);
        visit(descriptor.value);
        if (at < rootCount) shallow.add(descriptor.value);
      } else {
        slots.push(descriptor.get, descriptor.set);
        visit(descriptor.get);
        visit(descriptor.set);
        if (callGetters && descriptor.get !== undefined && descriptor.set !== undefined) {
          let value: unknown;
          try {
            value = apply(descriptor.get, object, []);
          } catch {
            value = THREW;
          }
          slots.push(value);
        }
      }
    }
    slots.push(END);
  }
  return { slots, complete: true };
}

/**
 * The baseline of `roots`: three walks, the first to let lazy getters settle
 * (`process.allowedNodeEnvironmentFlags` replaces itself with its value), the slots where the
 * other two differ marked unstable. Incomplete when the two differ in length.
 */
export function baselineOf(roots: readonly unknown[]): Fingerprint {
  fingerprint(roots);
  const first = fingerprint(roots);
  const second = fingerprint(roots);
  const unstable = new Set<number>();
  if (first.slots.length !== second.slots.length) return { ...second, complete: false };
  for (let i = 0; i < first.slots.length; i++)
    if (!Object.is(first.slots[i], second.slots[i])) unstable.add(i);
  return { ...second, unstable };
}

/** True when `now` is complete and records what `baseline` does (its unstable slots aside). */
export function sameFingerprint(baseline: Fingerprint, now: Fingerprint): boolean {
  if (!baseline.complete || !now.complete || baseline.slots.length !== now.slots.length) return false;
  const unstable = baseline.unstable;
  for (let i = 0; i < baseline.slots.length; i++) {
    if (!Object.is(baseline.slots[i], now.slots[i]) && unstable?.has(i) !== true) return false;
  }
  return true;
}
