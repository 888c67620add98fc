/**
 * The `require` and dynamic `import` of scripts: built-ins and the runtime's node_modules only.
 *
 * Each run has its own `require` and its own module cache: a package of the runtime (axios,
 * lodash) is evaluated inside the run's `vm` context, so what a script changes in it, or in the
 * intrinsics it sees, goes with the context. The compiled code is kept per file for the life of
 * the process (a `vm.Script` is not bound to a context), so evaluating a package again costs
 * its top-level code only. Node built-ins are this process's own objects: a plain-object module
 * is handed out as a copy per run (its functions are the same), functions that change a
 * process-wide setting and modules that hold such settings mark the run as in doubt, and what
 * stays shared is checked after the run (fingerprint.ts).
 */
import fs from 'node:fs';
import nodeModule from 'node:module';
import path from 'node:path';
import url from 'node:url';
import vm from 'node:vm';
import { checkBuiltin, type Denied, guardGetBuiltinModule } from '../../common/child/lockdown.js';
import { SCRIPT_FILENAME } from './errors.js';

/** runtimes/<id> of this process (its first argument). */
const runtimeDir = process.argv[2] ?? '';
/** The runtime's id (its second argument). */
const runtimeId = process.argv[3] ?? '';
const nodeModulesDir = path.join(runtimeDir, 'node_modules');

/**
 * Built-ins that hold process-wide state a script could change without a trace in their
 * properties (resolver servers, async hooks, channels, V8 flags, the module loader): a run that
 * requires one is never followed by another in the same process.
 */
const DOUBTFUL_BUILTINS: ReadonlySet<string> = new Set([
  'async_hooks',
  'cluster',
  'diagnostics_channel',
  'dns',
  'dns/promises',
  'module',
  'repl',
  'timers/promises',
  'trace_events',
  'v8',
  'vm',
  'wasi',
  'worker_threads',
]);

/**
 * Built-ins loaded and fingerprinted before the process says ready (fingerprint.ts): a run may
 * use them and still be followed by another. A run that requires any other built-in is not.
 */
export const CHECKED_BUILTINS: readonly string[] = [
  'assert',
  'assert/strict',
  'buffer',
  'console',
  'constants',
  'crypto',
  'events',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'net',
  'os',
  'path',
  'path/posix',
  'perf_hooks',
  'process',
  'punycode',
  'querystring',
  'stream',
  'stream/promises',
  'stream/web',
  'string_decoder',
  'timers',
  'tls',
  'tty',
  'url',
  'util',
  'util/types',
  'zlib',
];
const CHECKED: ReadonlySet<string> = new Set(CHECKED_BUILTINS);

/** Functions of built-ins that change a process-wide setting: calling one puts the run in doubt. */
const DOUBTFUL_FUNCTIONS: Readonly<Record<string, readonly string[]>> = {
  net: ['setDefaultAutoSelectFamily', 'setDefaultAutoSelectFamilyAttemptTimeout'],
  http: ['setMaxIdleHTTPParsers'],
  tls: ['setDefaultCACertificates'],
  crypto: ['setEngine', 'setFips'],
  process: [],
};

function notInstalled(id: string): Error {
  return Object.assign(
    new Error(
      `Cannot find module '${id}': the dependencies of runtime ${runtimeId} are not installed (run npm ci --prefix ${runtimeDir})`,
    ),
    { code: 'MODULE_NOT_FOUND' },
  );
}

type Resolver = {
  _resolveFilename(request: string, parent: nodeModule): string;
  _nodeModulePaths(from: string): string[];
  _pathCache: Record<string, string>;
};
const resolver = nodeModule as unknown as Resolver;

/** The first target of an `exports` entry under the CommonJS conditions (`require`, `node`, `default`). */
function exportTarget(entry: unknown): string | null {
  if (typeof entry === 'string') return entry;
  if (Array.isArray(entry)) {
    for (const item of entry) {
      const target = exportTarget(item);
      if (target !== null) return target;
    }
    return null;
  }
  if (entry !== null && typeof entry === 'object') {
    for (const [condition, value] of Object.entries(entry)) {
      if (condition === 'require' || condition === 'node' || condition === 'default') {
        const target = exportTarget(value);
        if (target !== null) return target;
      }
    }
  }
  return null;
}

/**
 * A CommonJS file of package `id` where Node resolved an ES module (`module-sync`, which Node
 * ≥ 20.19 prefers for `require`): the package's root export under the CommonJS conditions, or
 * null (the ES module is then loaded by Node itself).
 */
function commonJsEntry(id: string, esmFile: string): string | null {
  if (id.startsWith('.') || id.startsWith('/')) return null;
  const name = id.startsWith('@') ? id.split('/').slice(0, 2).join('/') : (id.split('/')[0] ?? '');
  if (name !== id) return null;
  const marker = `${path.sep}node_modules${path.sep}${name.split('/').join(path.sep)}${path.sep}`;
  const at = esmFile.lastIndexOf(marker);
  if (at === -1) return null;
  const root = esmFile.slice(0, at + marker.length);
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      exports?: unknown;
    };
    const exportsField = manifest.exports as Record<string, unknown> | string | unknown[] | undefined;
    const entry =
      exportsField !== null &&
      typeof exportsField === 'object' &&
      !Array.isArray(exportsField) &&
      '.' in exportsField
        ? exportsField['.']
        : exportsField;
    const target = exportTarget(entry);
    if (target === null || target.endsWith('.mjs')) return null;
    const file = path.join(root, target);
    return fs.existsSync(file) ? file : null;
  } catch {
    return null;
  }
}

/** What a run loads modules with. */
export type ScriptModules = {
  require: NodeJS.Require;
  importModule: (specifier: string) => Promise<unknown>;
};

/** How the runs of this process load modules; made once, before the process says ready. */
export type ModuleHost = {
  /**
   * A `require` of its own for one run in `context`; `doubt` is called with why when the run
   * uses what makes the process unfit for another run; `replaced` are built-ins given as these
   * objects instead (`timers`: the run's own tracked timers).
   */
  forRun(
    context: vm.Context,
    doubt: (why: string) => void,
    replaced: Readonly<Record<string, unknown>>,
  ): ScriptModules;
  /**
   * Removes what resolving modules added to Node's own path cache (`Module._pathCache`) since
   * the process was prepared: that cache is shared with the process, and checked after each run.
   */
  forgetResolutions(): void;
};

/** A module of a run, made inside its context. */
type RunModule = { exports: unknown; loaded: boolean; id: string; filename: string };

/**
 * The module loading of a script process: resolution (cached for the process), compiled code
 * (cached for the process), and `forRun`. Also guards `process.getBuiltinModule`.
 *
 * @param denied makes the error thrown for a denied built-in.
 */
export function createModuleHost(denied: Denied): ModuleHost {
  // Looked up on first use: a warm process may start before `npm ci` of the runtime ends.
  let installedCache: boolean | null = null;
  const installed = () => {
    installedCache ??= fs.existsSync(nodeModulesDir);
    return installedCache;
  };
  /** Resolution parents per folder, whose search paths stay inside the runtime's node_modules. */
  const parents = new Map<string, nodeModule>();
  const parentIn = (dir: string, filename: string): nodeModule => {
    let parent = parents.get(dir);
    if (parent === undefined) {
      parent = new nodeModule(filename);
      parent.filename = filename;
      parent.paths = resolver
        ._nodeModulePaths(dir)
        .filter((p) => p === nodeModulesDir || p.startsWith(`${nodeModulesDir}${path.sep}`));
      if (parent.paths.length === 0) parent.paths = [nodeModulesDir];
      parents.set(dir, parent);
    }
    return parent;
  };
  const anchor = parentIn(nodeModulesDir, path.join(nodeModulesDir, SCRIPT_FILENAME));
  anchor.paths = [nodeModulesDir];
  const resolved = new Map<string, string>();
  const resolveFrom = (id: string, dir: string, filename: string): string => {
    const key = `${dir}\0${id}`;
    let file = resolved.get(key);
    if (file === undefined) {
      file = resolver._resolveFilename(id, dir === nodeModulesDir ? anchor : parentIn(dir, filename));
      if (file.endsWith('.mjs')) file = commonJsEntry(id, file) ?? file;
      resolved.set(key, file);
    }
    return file;
  };
  const compiled = new Map<string, vm.Script>();
  const compile = (filename: string): vm.Script => {
    let script = compiled.get(filename);
    if (script === undefined) {
      const source = fs.readFileSync(filename, 'utf8').replace(/^#!.*/, '');
      script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
        filename,
      });
      compiled.set(filename, script);
    }
    return script;
  };
  guardGetBuiltinModule(denied);

  const forRun = (
    context: vm.Context,
    doubt: (why: string) => void,
    replaced: Readonly<Record<string, unknown>>,
  ): ScriptModules => {
    const cache = new Map<string, RunModule>();
    const builtins = new Map<string, unknown>();
    const makeModule = vm.runInContext(
      '(id) => ({ exports: {}, loaded: false, id, filename: id, children: [], paths: [] })',
      context,
    ) as (id: string) => RunModule;
    const parseJson = vm.runInContext('JSON.parse', context) as (text: string) => unknown;

    const builtin = (id: string): unknown => {
      const bare = id.startsWith('node:') ? id.slice(5) : id;
      let given = builtins.get(bare);
      if (given !== undefined) return given;
      if (Object.hasOwn(replaced, bare)) return replaced[bare];
      if (DOUBTFUL_BUILTINS.has(bare) || !CHECKED.has(bare)) doubt(`it required ${bare}`);
      const real = require(id) as unknown;
      given = real;
      if (real !== null && typeof real === 'object' && real !== process && !Array.isArray(real)) {
        // A copy per run: replacing one of its functions changes this run's copy only.
        const copy = Object.create(Object.getPrototypeOf(real)) as Record<PropertyKey, unknown>;
        const listed = DOUBTFUL_FUNCTIONS[bare] ?? [];
        for (const key of Reflect.ownKeys(real)) {
          const descriptor = Reflect.getOwnPropertyDescriptor(real, key) as PropertyDescriptor;
          const set = descriptor.set;
          if (set !== undefined) {
            descriptor.set = function (this: unknown, value: unknown) {
              doubt(`it set ${bare}.${String(key)}`);
              Reflect.apply(set, real, [value]);
            };
            const get = descriptor.get;
            if (get !== undefined) descriptor.get = () => Reflect.apply(get, real, []);
          }
          const fn = descriptor.value;
          if (typeof key === 'string' && listed.includes(key) && typeof fn === 'function') {
            descriptor.value = (...args: unknown[]) => {
              doubt(`it called ${bare}.${key}`);
              return Reflect.apply(fn, real, args);
            };
          }
          Object.defineProperty(copy, key, descriptor);
        }
        given = copy;
      }
      builtins.set(bare, given);
      return given;
    };

    /** An ES module `require`d: Node loads it in this process's own realm, which outlives the run. */
    const esModule = (filename: string): unknown => {
      doubt('it loaded an ES module');
      return anchor.require(filename);
    };

    const load = (filename: string): unknown => {
      const cached = cache.get(filename);
      if (cached !== undefined) return cached.exports;
      if (filename.endsWith('.node')) throw new Error(`Cannot load native addon ${filename} in scripts`);
      if (filename.endsWith('.mjs')) return esModule(filename);
      const module = makeModule(filename);
      cache.set(filename, module);
      try {
        if (filename.endsWith('.json')) {
          module.exports = parseJson(fs.readFileSync(filename, 'utf8'));
        } else {
          const dir = path.dirname(filename);
          let script: vm.Script;
          try {
            script = compile(filename);
          } catch (err) {
            // A `.js` file of a `"type": "module"` package.
            if (err instanceof SyntaxError && /\b(import|export)\b/.test(err.message)) {
              cache.delete(filename);
              return esModule(filename);
            }
            throw err;
          }
          const fn = script.runInContext(context) as (...args: unknown[]) => void;
          fn.call(module.exports, module.exports, requireFrom(dir, filename), module, filename, dir);
        }
      } catch (err) {
        cache.delete(filename);
        throw err;
      }
      module.loaded = true;
      return module.exports;
    };

    const resolveIn = (id: string, dir: string, filename: string): string => {
      if (checkBuiltin(id, denied)) return id;
      if (!installed()) throw notInstalled(id);
      return resolveFrom(id, dir, filename);
    };

    const requireFrom = (dir: string, filename: string): NodeJS.Require => {
      const req = ((id: string) => {
        if (typeof id !== 'string') throw new TypeError(`require needs a module name, got ${typeof id}`);
        if (checkBuiltin(id, denied)) return builtin(id);
        if (!installed()) throw notInstalled(id);
        const file = resolveFrom(id, dir, filename);
        return nodeModule.isBuiltin(file) ? builtin(file) : load(file);
      }) as NodeJS.Require;
      req.resolve = Object.assign((id: string) => resolveIn(id, dir, filename), {
        paths: () => [nodeModulesDir],
      });
      req.cache = Object.create(null) as NodeJS.Require['cache'];
      return req;
    };

    const scriptRequire = requireFrom(nodeModulesDir, anchor.filename);
    const importModule = (specifier: string) => {
      // import() evaluates in this process's own module map, which outlives the run.
      doubt('it used import()');
      const target = resolveIn(specifier, nodeModulesDir, anchor.filename);
      return import(path.isAbsolute(target) ? url.pathToFileURL(target).href : target);
    };
    return { require: scriptRequire, importModule };
  };
  const pathCache = resolver._pathCache;
  const knownPaths = new Set(Object.keys(pathCache));
  const forgetResolutions = () => {
    for (const key of Object.keys(pathCache)) if (!knownPaths.has(key)) delete pathCache[key];
  };
  return { forRun, forgetResolutions };
}
