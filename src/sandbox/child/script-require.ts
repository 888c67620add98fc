/** The `require` and dynamic `import` of scripts: built-ins and the runtime's node_modules only. */
import fs from 'node:fs';
import nodeModule from 'node:module';
import path from 'node:path';
import url from 'node:url';
import { checkBuiltin, type Denied, guardGetBuiltinModule } from '../../common/child/lockdown.js';
import { SCRIPT_FILENAME } from './errors.js';

/** runtimes/<id> of this process (its first argument). */
const runtimeDir = process.argv[2] ?? '';
/** The runtime's id (its second argument). */
const runtimeId = process.argv[3] ?? '';
const nodeModulesDir = path.join(runtimeDir, 'node_modules');

function notInstalled(id: string): Error {
  return Object.assign(
    new Error(
      `Cannot find module '${id}': the dependencies of runtime ${runtimeId} are not installed (run npm ci --prefix ${runtimeDir})`,
    ),
    { code: 'MODULE_NOT_FOUND' },
  );
}

type Resolver = { _resolveFilename(request: string, parent: nodeModule): string };

/** What scripts load modules with. */
export type ScriptModules = {
  require: NodeJS.Require;
  importModule: (specifier: string) => Promise<unknown>;
};

/**
 * `require` for scripts: Node built-ins (but the denied ones, lockdown.ts), and packages from the
 * runtime's node_modules only, never from folders above it. Also guards `process.getBuiltinModule`.
 *
 * @param denied makes the error thrown for a denied built-in.
 */
export function createScriptRequire(denied: Denied): ScriptModules {
  // Looked up on first use: a warm process may start before `npm ci` of the runtime ends.
  let installedCache: boolean | null = null;
  const installed = () => {
    installedCache ??= fs.existsSync(nodeModulesDir);
    return installedCache;
  };
  const anchor = new nodeModule(path.join(nodeModulesDir, SCRIPT_FILENAME));
  anchor.filename = anchor.id;
  anchor.paths = [nodeModulesDir];
  const builtin = (id: string): string | null => (checkBuiltin(id, denied) ? id : null);
  const resolve = (id: string): string => {
    const found = builtin(id);
    if (found !== null) return found;
    if (!installed()) throw notInstalled(id);
    return (nodeModule as unknown as Resolver)._resolveFilename(id, anchor);
  };
  const scriptRequire = ((id: string) => {
    if (typeof id !== 'string') throw new TypeError(`require needs a module name, got ${typeof id}`);
    if (builtin(id) !== null) return require(id);
    if (!installed()) throw notInstalled(id);
    return anchor.require(id);
  }) as NodeJS.Require;
  scriptRequire.resolve = Object.assign((id: string) => resolve(id), { paths: () => [nodeModulesDir] });
  scriptRequire.cache = require.cache;
  guardGetBuiltinModule(denied);
  const importModule = (specifier: string) => {
    const target = resolve(specifier);
    return import(path.isAbsolute(target) ? url.pathToFileURL(target).href : target);
  };
  return { require: scriptRequire, importModule };
}
