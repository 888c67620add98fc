import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Layout, SuiteRunOptions } from './types.js';
import { USER_CONFIG_NAMES, WRAPPER_CONFIG_NAME } from './wrapper-config.js';

/**
 * Writing a suite's project into its run dir: paths checked, the inline script placed, the
 * runtime's node_modules linked, the user's config found.
 */

/** Path the inline script is written to, unless `scriptPath` names the spec. */
export const INLINE_SPEC_PATH = 'tests/check.spec.ts';
/** npm package names (scoped or not): never a path. */
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/i;

/** A mistake in the project that stops it from running at all (reported as the run's error). */
export class ProjectError extends Error {}

/** Checks one project path: relative, `/`-separated, no `.`/`..`/empty segment, not reserved. */
function checkPath(path: string): string {
  if (typeof path !== 'string' || path === '' || path.length > 1024)
    throw new ProjectError('a project file has an empty or too long path');
  if (path.includes('\\') || path.includes('\0'))
    throw new ProjectError(`project path ${JSON.stringify(path)} holds a backslash or NUL`);
  if (path.startsWith('/')) throw new ProjectError(`project path ${JSON.stringify(path)} is absolute`);
  const segments = path.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..'))
    throw new ProjectError(`project path ${JSON.stringify(path)} leaves the project or has an empty segment`);
  if (segments[0] === 'node_modules')
    throw new ProjectError(
      `project path ${JSON.stringify(path)} is inside node_modules: the runtime provides it`,
    );
  if (path === WRAPPER_CONFIG_NAME)
    throw new ProjectError(`project path ${WRAPPER_CONFIG_NAME} is reserved for the agent`);
  return path;
}

/** Package names of package.json's dependencies and devDependencies (type-only `@types/*` left out). */
function declaredPackages(manifest: unknown): string[] {
  if (typeof manifest !== 'object' || manifest === null) return [];
  const names: string[] = [];
  for (const field of ['dependencies', 'devDependencies', 'optionalDependencies']) {
    const deps = (manifest as Record<string, unknown>)[field];
    if (typeof deps === 'object' && deps !== null) names.push(...Object.keys(deps));
  }
  return [...new Set(names)].filter((name) => !name.startsWith('@types/'));
}

/** `@playwright/test`'s version in the runtime (trusted files of the agent's install), or ''. */
export async function runtimePlaywrightVersion(runtimeDir: string): Promise<string> {
  try {
    const manifest = JSON.parse(
      await readFile(join(runtimeDir, 'node_modules', '@playwright', 'test', 'package.json'), 'utf8'),
    ) as { version?: unknown };
    return typeof manifest.version === 'string' ? manifest.version : '';
  } catch {
    return '';
  }
}

/**
 * Writes the project's files (exclusive creates in fresh folders, so nothing is written through a
 * link), the inline script, and the node_modules link, last, so no file lands in the runtime.
 * @throws ProjectError for a bad path, a duplicate, a missing config or a missing package.
 */
export async function writeProject(
  layout: Layout,
  options: SuiteRunOptions,
  own: (path: string) => Promise<void>,
): Promise<{ userConfigPath: string; userConfigIsModule: boolean; entrySpecPath: string }> {
  const files = [...options.files];
  const hasScript = options.script !== null && options.script !== '';
  if (hasScript === (options.scriptPath !== null && options.scriptPath !== ''))
    throw new ProjectError('give exactly one of script and scriptPath');
  if (options.scriptPath) {
    checkPath(options.scriptPath);
    if (!files.some((f) => f.path === options.scriptPath))
      throw new ProjectError(`scriptPath ${options.scriptPath} is not a project file`);
  }
  let entrySpecPath = join(layout.project, ...(options.scriptPath ?? INLINE_SPEC_PATH).split('/'));
  if (hasScript) {
    if (files.some((f) => f.path === INLINE_SPEC_PATH))
      throw new ProjectError(
        `the project already has ${INLINE_SPEC_PATH}, where the inline script goes: give scriptPath instead`,
      );
    files.push({ path: INLINE_SPEC_PATH, content: options.script as string });
    entrySpecPath = join(layout.project, INLINE_SPEC_PATH);
  }
  const seen = new Set<string>();
  for (const file of files) {
    const path = checkPath(file.path);
    if (seen.has(path)) throw new ProjectError(`project path ${path} is given twice`);
    seen.add(path);
  }
  const made = new Set<string>(['']);
  for (const file of files) {
    const segments = file.path.split('/');
    for (let i = 1; i < segments.length; i++) {
      const folder = segments.slice(0, i).join('/');
      if (made.has(folder)) continue;
      if (seen.has(folder)) throw new ProjectError(`project path ${folder} is both a file and a folder`);
      await mkdir(join(layout.project, folder), { mode: 0o700 });
      await own(join(layout.project, folder));
      made.add(folder);
    }
    if (made.has(file.path)) throw new ProjectError(`project path ${file.path} is both a file and a folder`);
    const target = join(layout.project, ...segments);
    await writeFile(target, file.content, { mode: 0o600, flag: 'wx' });
    await own(target);
  }

  const manifestFile = files.find((f) => f.path === 'package.json');
  let manifest: unknown = {};
  if (manifestFile) {
    try {
      manifest = JSON.parse(manifestFile.content);
    } catch {
      throw new ProjectError('package.json is not valid JSON');
    }
  }
  const modules = join(options.runtimeDir, 'node_modules');
  const missing = declaredPackages(manifest).filter(
    (name) => !PACKAGE_NAME.test(name) || !existsSync(join(modules, ...name.split('/'), 'package.json')),
  );
  if (missing.length > 0) {
    throw new ProjectError(
      `package.json depends on ${missing.map((n) => JSON.stringify(n)).join(', ')}, which runtime ${options.runtimeId} does not provide (suites run with the runtime's packages; there is no install)`,
    );
  }
  const configName = USER_CONFIG_NAMES.find((name) => seen.has(name));
  if (configName === undefined)
    throw new ProjectError('the project has no playwright.config.{ts,js,mjs,cjs} at its root');
  const packageIsModule =
    typeof manifest === 'object' && manifest !== null && (manifest as { type?: unknown }).type === 'module';
  const userConfigIsModule = /\.m[jt]s$/.test(configName) || (/\.[jt]s$/.test(configName) && packageIsModule);
  await symlink(modules, join(layout.project, 'node_modules'), 'dir');
  return { userConfigPath: join(layout.project, configName), userConfigIsModule, entrySpecPath };
}
