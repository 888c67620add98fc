/**
 * How scripts load modules: `require` and `import` of built-ins (but the denied ones), the
 * runtime's packages, the `@playwright/test` shim, and the check's dependency files (never read
 * from disk).
 */
import nodeModule from 'node:module';
import path from 'node:path';
import url from 'node:url';
import vm from 'node:vm';
import { checkBuiltin, deniedIn } from '../../common/child/lockdown.js';
import type { ScriptShape } from '../messages.js';
import { type Any, nodeModulesDir, SCRIPT_FILENAME } from './state.js';

/** The name `@playwright/test` is imported by; `playwright/test` is the same module. */
const TEST_MODULES: ReadonlySet<string> = new Set(['@playwright/test', 'playwright/test']);
/** Extensions tried, in order, for a relative specifier without one (as bundlers and tsx do). */
const DEPENDENCY_EXTENSIONS = ['', '.ts', '.js', '.mjs', '.mts', '/index.ts', '/index.js'];

/** Errors of what checks may not do: `Access to … is not allowed in checks`. */
export const denied = deniedIn('checks');

/** Throws for a denied built-in (`node:inspector`); true for any other built-in. */
export function allowedBuiltin(id: string): boolean {
  return checkBuiltin(id, denied);
}

/** The check's dependency files by normalised relative path (payload.files), set once the payload came. */
let dependencyFiles = new Map<string, string>();
/** Dependency modules made so far, by path: each file is one module, however often it is imported. */
const dependencyModules = new Map<string, Any>();

/** Sets the check's dependency files (RunnerPayload.files; entries that are not path and text are left out). */
export function setDependencyFiles(files: unknown): void {
  dependencyFiles = new Map(
    (Array.isArray(files) ? files : [])
      .filter((f) => typeof f?.path === 'string' && typeof f?.content === 'string')
      .map((f) => [path.posix.normalize(f.path), f.content] as const),
  );
}

/** A require for scripts: the shim for `@playwright/test`, else built-ins and the runtime's packages. */
export function createScriptRequire(testModule: () => Any): NodeJS.Require {
  const anchor = nodeModule.createRequire(path.join(nodeModulesDir, SCRIPT_FILENAME));
  const scriptRequire = ((id: string) => {
    if (typeof id !== 'string') throw new TypeError(`require needs a module name, got ${typeof id}`);
    if (TEST_MODULES.has(id)) return testModule();
    if (allowedBuiltin(id)) return require(id);
    return anchor(id);
  }) as NodeJS.Require;
  scriptRequire.resolve = anchor.resolve;
  scriptRequire.cache = anchor.cache;
  return scriptRequire;
}

/** A module of `exports` (a namespace or a CommonJS value) as a linked vm module. */
function syntheticModule(exports: Record<string, unknown>, identifier: string): Any {
  const keys = Object.keys(exports).filter((key) => key !== 'default');
  const VmSynthetic = (vm as Any).SyntheticModule;
  return new VmSynthetic(
    [...keys, 'default'],
    function (this: Any) {
      for (const key of keys) this.setExport(key, exports[key]);
      this.setExport('default', 'default' in exports ? exports.default : exports);
    },
    { identifier },
  );
}

/**
 * A dependency file of the check imported with a relative specifier (`./helpers/login`) from the
 * script (at the project root) or from another dependency: an ES module compiled from the payload's
 * text (types stripped where Node can), linked by the same rules as the script. Never read from disk.
 * @throws Error naming the specifier when no dependency file matches.
 */
function dependencyModule(specifier: string, fromPath: string, testModule: () => Any): Any {
  const base = path.posix.dirname(fromPath);
  const wanted = path.posix.normalize(path.posix.join(base, specifier));
  const found = DEPENDENCY_EXTENSIONS.map((ext) => `${wanted}${ext}`).find((p) => dependencyFiles.has(p));
  if (found === undefined || wanted.startsWith('..')) {
    throw new Error(`Cannot find module '${specifier}': no dependency file of the check matches it`);
  }
  const cached = dependencyModules.get(found);
  if (cached !== undefined) return cached;
  const SourceTextModule = (vm as Any).SourceTextModule;
  const module: Any = new SourceTextModule(stripTypes(dependencyFiles.get(found) ?? ''), {
    identifier: found,
    importModuleDynamically: (inner: string) =>
      loadModule(inner, testModule, found).then(async (m: Any) => {
        if (m.status === 'unlinked') await m.link((s: string) => loadModule(s, testModule, found));
        if (m.status !== 'evaluated') await m.evaluate();
        return m;
      }),
  });
  dependencyModules.set(found, module);
  return module;
}

/**
 * The vm module `specifier` names, imported from `fromPath` (the script, or a dependency file):
 * the shim, a dependency file (linked), a built-in, or a package of the runtime.
 *
 * @throws Error for a denied built-in, a missing dependency file or package.
 */
export async function loadModule(
  specifier: string,
  testModule: () => Any,
  fromPath = SCRIPT_FILENAME,
): Promise<Any> {
  if (TEST_MODULES.has(specifier)) {
    return syntheticModule(testModule(), specifier);
  }
  if (specifier.startsWith('./') || specifier.startsWith('../')) {
    const module = dependencyModule(specifier, fromPath, testModule);
    if (module.status === 'unlinked') {
      const identifier = module.identifier as string;
      await module.link((inner: string) => loadModule(inner, testModule, identifier));
    }
    return module;
  }
  if (allowedBuiltin(specifier)) return syntheticModule(require(specifier), specifier);
  const anchor = nodeModule.createRequire(path.join(nodeModulesDir, SCRIPT_FILENAME));
  const resolved = anchor.resolve(specifier);
  const namespace = (await import(url.pathToFileURL(resolved).href)) as Record<string, unknown>;
  return syntheticModule({ ...namespace }, specifier);
}

/** `code` without TypeScript types where Node can strip them (22.13 and later); else unchanged. */
export function stripTypes(code: string): string {
  const strip = (nodeModule as unknown as { stripTypeScriptTypes?: (code: string) => string })
    .stripTypeScriptTypes;
  if (typeof strip !== 'function') return code;
  try {
    return strip(code);
  } catch {
    return code;
  }
}

/** TEST when the script imports `@playwright/test` (or `playwright/test`), else PLAIN. */
export function detectShape(code: string): ScriptShape {
  return /(?:from\s*|require\s*\(\s*|import\s*\(\s*)['"](?:@playwright\/test|playwright\/test)['"]/.test(code)
    ? 'TEST'
    : 'PLAIN';
}
