/**
 * Secret values a script puts into its environment, reported to the parent the moment they are
 * set (so the agent scrubs them even when it then kills the process). Shared by the script
 * processes (src/sandbox/child) and the browser runners (src/browser/runner).
 *
 * Bundled into the children: it may import only `node:` built-ins.
 */

/**
 * Names whose values an API setup or teardown script sets at run time and that are scrubbed:
 * `SERVICE_SECRET_*` only. The rule is documented in docs/checks.md, "Runtime variables and
 * scrubbing".
 */
export const API_SCRIPT_SECRET_PREFIXES: readonly string[] = ['SERVICE_SECRET_'];

/**
 * Names whose values a browser or multi-step script sets at run time and that are scrubbed:
 * `SERVICE_SECRET_*` and `OUTPOST_SECRET_*` (docs/checks.md, "Runtime variables and scrubbing":
 * "browser and multi-step scripts: also `OUTPOST_SECRET_*`"). The browser executor applies the
 * same two prefixes to the check's variables.
 */
export const BROWSER_SCRIPT_SECRET_PREFIXES: readonly string[] = ['SERVICE_SECRET_', 'OUTPOST_SECRET_'];

/**
 * Longest secret sent, characters: the agent scrubber's longest secret (128 KB, src/common/scrub.ts
 * MAX_SECRET_LENGTH) plus one, so that a longer value still reaches the parent as too long (its
 * scrubber then withholds the output).
 */
export const MAX_SECRET_LENGTH = 131_073;

/** How a {@link SecretTracker} recognises and reports secrets. */
export type SecretTrackerOptions = {
  /** Variable names starting with one of these hold secrets ({@link API_SCRIPT_SECRET_PREFIXES}, …). */
  prefixes: readonly string[];
  /** Sends one new secret value to the parent (`{ t: 'secret', value }`). */
  send: (value: string) => void;
  /**
   * Cuts a value (already at most {@link MAX_SECRET_LENGTH} characters) to what one channel line
   * holds; default: unchanged.
   */
  cutToLine?: (value: string) => string;
};

/** The secret reporting of one child process. */
export type SecretTracker = {
  /** Whether `key` names a secret variable (a string starting with one of the prefixes). */
  isSecretName(key: string | symbol): boolean;
  /** Reports a non-empty string value once (cut to {@link MAX_SECRET_LENGTH}, then `cutToLine`); ignores the rest. */
  report(value: unknown): void;
  /** Reports the secret-named values of each object given (an environment); never throws. */
  sweep(...envs: unknown[]): void;
  /**
   * Makes the environment exactly `env` plus `extra`, and makes every way to put a value in it
   * report secret-named values at once: set, Reflect.set, Object.assign, Object.defineProperty,
   * delete then set, and a whole new `process.env` (which is tracked in turn). May be called
   * again for the next run of a reused process: the environment, a replaced `process.env` and
   * the values already reported start over.
   *
   * @returns false when the environment could not be made exactly `env` plus `extra` (a
   *   variable an earlier run made undeletable): the process must not run another script.
   */
  installEnv(env: Record<string, string>, extra?: Record<string, string>): boolean;
  /** `process.env` as it was when the tracker was made (the object `installEnv` fills). */
  readonly realEnv: NodeJS.ProcessEnv;
};

/**
 * The secret reporting of one child process. Take it before user code runs: it keeps the
 * environment object of that moment.
 *
 * @param options the prefixes and how to send.
 */
export function createSecretTracker(options: SecretTrackerOptions): SecretTracker {
  const { prefixes, send } = options;
  const cutToLine = options.cutToLine ?? ((value: string) => value);
  const reported = new Set<string>();
  const realEnv = process.env;
  const isSecretName = (key: string | symbol): boolean => {
    if (typeof key !== 'string') return false;
    for (const prefix of prefixes) if (key.startsWith(prefix)) return true;
    return false;
  };
  const report = (secret: unknown): void => {
    if (typeof secret !== 'string' || secret === '') return;
    const value = cutToLine(secret.slice(0, MAX_SECRET_LENGTH));
    if (reported.has(value)) return;
    reported.add(value);
    send(value);
  };
  const sweep = (...envs: unknown[]): void => {
    for (const env of envs) {
      if (env === null || typeof env !== 'object') continue;
      try {
        for (const [key, value] of Object.entries(env)) if (isSecretName(key)) report(value);
      } catch {
        // A hostile process.env replacement: what was reported as it was set stays reported.
      }
    }
  };
  const tracking: ProxyHandler<Record<string, unknown>> = {
    set(target, key, value) {
      const ok = Reflect.set(target, key, value);
      if (isSecretName(key)) report(Reflect.get(target, key));
      return ok;
    },
    defineProperty(target, key, descriptor) {
      if (isSecretName(key) && 'value' in descriptor) report(descriptor.value);
      const ok = Reflect.defineProperty(target, key, descriptor);
      if (isSecretName(key)) report(Reflect.get(target, key));
      return ok;
    },
  };
  /** The one tracking view of the real environment: the same object in every run. */
  const realProxy = new Proxy(realEnv as Record<string, unknown>, tracking);
  let installed = false;
  let current: unknown = null;
  const installEnv = (env: Record<string, string>, extra: Record<string, string> = {}): boolean => {
    reported.clear();
    for (const key of Reflect.ownKeys(realEnv)) Reflect.deleteProperty(realEnv, key);
    Object.assign(realEnv, env, extra);
    const expected = Object.keys({ ...env, ...extra });
    const exact =
      Reflect.ownKeys(realEnv).length === expected.length &&
      expected.every((key) => realEnv[key] === ({ ...env, ...extra } as Record<string, string>)[key]);
    current = realProxy;
    if (installed) return exact;
    installed = true;
    Object.defineProperty(process, 'env', {
      get: () => current,
      set: (value: unknown) => {
        sweep(value);
        current = value !== null && typeof value === 'object' ? new Proxy(value, tracking) : value;
      },
      enumerable: true,
      configurable: false,
    });
    return exact;
  };
  return { isSecretName, report, sweep, installEnv, realEnv };
}
