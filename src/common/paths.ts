import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string };
      if (pkg.name === 'outpost') return dir;
    }
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error(`outpost package root not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

/** Absolute path of the package root (the folder holding package.json), from src/ or dist/ alike. */
export const PACKAGE_ROOT: string = findRoot();

/** The version of this build, from package.json. */
export const VERSION: string = (
  JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
