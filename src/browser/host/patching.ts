/** Replacing methods of the runtime's Playwright server classes, in the browser host's process only. */
import path from 'node:path';

/** A dispatcher class of the server as far as it is patched here: its prototype's methods. */
export type Patchable = { prototype: Record<string, unknown> };
/** A dispatcher method: `(params, progress)`, `this` the dispatcher. */
export type DispatcherMethod = (this: Any, params: Any, progress: unknown) => Promise<unknown>;
// biome-ignore lint/suspicious/noExplicitAny: Playwright's server internals are untyped here.
export type Any = any;

/**
 * The runtime's playwright-core server module `lib/server/<file>` by absolute path (the same module
 * instances the server uses, past the package's exports map), or its `name` export.
 *
 * @throws Error when the module or the export is missing (a version this host does not know).
 */
export function serverExport(playwrightDir: string, file: string, name: string): Patchable {
  const exported = (require(path.join(playwrightDir, 'lib', 'server', file)) as Record<string, unknown>)[
    name
  ];
  if (typeof exported !== 'function' || typeof exported.prototype !== 'object') {
    throw new Error(`the runtime's playwright-core has no ${name} in lib/server/${file}`);
  }
  return exported as unknown as Patchable;
}

/**
 * Replaces `cls.prototype[method]` with `replacement`, which gets the original to call.
 *
 * @throws Error when the method does not exist (a version this host does not know).
 */
export function patch(
  cls: Patchable,
  method: string,
  replacement: (original: DispatcherMethod) => DispatcherMethod,
): void {
  const original = cls.prototype[method];
  if (typeof original !== 'function') {
    throw new Error(`the runtime's playwright-core has no method ${method} to guard`);
  }
  cls.prototype[method] = replacement(original as DispatcherMethod);
}

/** An error naming the refused call and why. */
export function refusal(call: string, why: string): Error {
  return new Error(`${call} is not available: ${why}`);
}

/** Replaces `cls.prototype[method]` with one that always rejects with {@link refusal}(`call`, `why`). */
export function refuse(cls: Patchable, method: string, call: string, why: string): void {
  patch(cls, method, () => async () => {
    throw refusal(call, why);
  });
}
