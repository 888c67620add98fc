import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OutpostError } from '../../../common/errors.js';
import { PACKAGE_ROOT } from '../../../common/paths.js';
import { bodyAjv } from '../../platform/http/validation.js';
import { describeAjvError, fieldOf } from '../../platform/http/errors.js';
import { type Runtime, RuntimeSchema } from './schema.js';

/** Runtime of a check that pins none, directly or through its group: the protocol's one value of it. */
export { DEFAULT_RUNTIME_ID } from '../../../protocol/index.js';

/** Folder holding one `<name>/runtime.json` per runtime. */
export const RUNTIMES_DIR: string = join(PACKAGE_ROOT, 'runtimes');

const validate = bodyAjv.compile(RuntimeSchema);

/**
 * Version of package `name` installed under `<runtimeDir>/node_modules` (the `version` of its
 * package.json), or null when it is not installed there.
 * @throws OutpostError OUTPOST_ERR_CONFIG naming the file when its package.json cannot be read,
 * is not JSON or has no string `version`.
 */
function installedVersion(runtimeDir: string, name: string): string | null {
  const file = join(runtimeDir, 'node_modules', name, 'package.json');
  let version: unknown;
  try {
    version = (JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new OutpostError('OUTPOST_ERR_CONFIG', `installed package file ${file} cannot be read`, {
      cause: err,
    });
  }
  if (typeof version !== 'string' || version === '') {
    throw new OutpostError('OUTPOST_ERR_CONFIG', `installed package file ${file} has no version`);
  }
  return version;
}

/**
 * Reads and validates every `<dir>/<name>/runtime.json` (docs/api.md, "Runtime"),
 * newest name first. Folders without a runtime.json are skipped. Each dependency's version is
 * the one installed under `<dir>/<name>/node_modules` (its package.json) when it is installed
 * there, so the answer is what scripts really get; otherwise runtime.json's pin.
 * @throws OutpostError OUTPOST_ERR_CONFIG naming the file when one is not JSON,
 * breaks the Runtime schema, or names another runtime than its folder, or when an installed
 * dependency's package.json is unreadable or has no version.
 */
export function loadRuntimes(dir: string = RUNTIMES_DIR): Runtime[] {
  const runtimes: Runtime[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const file = join(dir, entry.name, 'runtime.json');
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw new OutpostError('OUTPOST_ERR_CONFIG', `runtime file ${file} cannot be read`, { cause: err });
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new OutpostError(
        'OUTPOST_ERR_CONFIG',
        `runtime file ${file} is not JSON: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    if (!validate(value)) {
      const first = validate.errors![0]!;
      const field = fieldOf(first) || '(root)';
      throw new OutpostError(
        'OUTPOST_ERR_CONFIG',
        `runtime file ${file}: ${field} ${describeAjvError(first)}`,
      );
    }
    const runtime = value as Runtime;
    if (runtime.name !== entry.name) {
      throw new OutpostError(
        'OUTPOST_ERR_CONFIG',
        `runtime file ${file}: name ${runtime.name} must be its folder's name ${entry.name}`,
      );
    }
    const runtimeDir = join(dir, entry.name);
    const dependencies = Object.fromEntries(
      Object.entries(runtime.dependencies).map(([name, pin]) => [
        name,
        installedVersion(runtimeDir, name) ?? pin,
      ]),
    );
    runtimes.push(Object.freeze({ ...runtime, dependencies }));
  }
  return runtimes.sort((a, b) => b.name.localeCompare(a.name));
}
