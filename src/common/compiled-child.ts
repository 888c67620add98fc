import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from './paths.js';

const cache = new Map<string, Promise<string>>();

/**
 * Absolute path of a child-process bootstrap, `<name>.cts` next to the module `moduleUrl`
 * compiled to `<name>.cjs` (the sandbox's script processes, the browser host and runners).
 *
 * From the build (`dist/src/...`) it is the `.cjs` file next to the module. From TypeScript
 * sources (vitest, tsx) the `.cts` is transpiled with the `typescript` dev dependency into
 * `node_modules/.cache/outpost-children/<name>-<hash of the source>.cjs`, so tests never run a
 * stale build and no process leaves a copy behind. Rejects when neither is possible.
 *
 * @param moduleUrl `import.meta.url` of the module beside the bootstrap.
 * @param name the bootstrap's file name without extension (`child`, `runner-child`).
 */
export function compiledChildPath(moduleUrl: string, name: string): Promise<string> {
  const key = `${moduleUrl}#${name}`;
  let located = cache.get(key);
  if (located === undefined) {
    located = locate(fileURLToPath(moduleUrl), name);
    cache.set(key, located);
    located.catch(() => cache.delete(key));
  }
  return located;
}

async function locate(here: string, name: string): Promise<string> {
  if (!here.endsWith('.ts')) {
    const built = join(dirname(here), `${name}.cjs`);
    if (!existsSync(built)) throw new Error(`the bootstrap ${built} is missing: run npm run build`);
    return built;
  }
  const source = await readFile(join(dirname(here), `${name}.cts`), 'utf8');
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const dir = join(PACKAGE_ROOT, 'node_modules', '.cache', 'outpost-children');
  const file = join(dir, `${name}-${hash}.cjs`);
  if (existsSync(file)) return file;
  const ts = (await import('typescript')).default;
  const { outputText } = ts.transpileModule(source, {
    fileName: `${name}.cts`,
    compilerOptions: { module: ts.ModuleKind.NodeNext, target: ts.ScriptTarget.ES2023 },
  });
  await mkdir(dir, { recursive: true });
  // Written whole, then renamed: a process starting at the same time never reads half a file.
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, outputText);
  await rename(partial, file);
  return file;
}
