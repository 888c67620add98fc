import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from '../common/paths.js';

let cached: Promise<string> | null = null;

/**
 * Absolute path of the script processes' bootstrap, `child.cts` compiled to `child.cjs`.
 *
 * From the build (`dist/src/sandbox/`) it is the file next to this module. From TypeScript
 * sources (vitest, tsx) `child.cts` is transpiled with the `typescript` dev dependency into
 * `node_modules/.cache/outpost-sandbox/child-<hash of the source>.cjs`, so tests never run a
 * stale build and no process leaves a copy behind. Rejects when neither is possible.
 */
export function childBootstrapPath(): Promise<string> {
  cached ??= locate();
  cached.catch(() => {
    cached = null;
  });
  return cached;
}

async function locate(): Promise<string> {
  const here = fileURLToPath(import.meta.url);
  if (!here.endsWith('.ts')) {
    const built = join(dirname(here), 'child.cjs');
    if (!existsSync(built)) throw new Error(`the sandbox bootstrap ${built} is missing: run npm run build`);
    return built;
  }
  const source = await readFile(join(dirname(here), 'child.cts'), 'utf8');
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const dir = join(PACKAGE_ROOT, 'node_modules', '.cache', 'outpost-sandbox');
  const file = join(dir, `child-${hash}.cjs`);
  if (existsSync(file)) return file;
  const ts = (await import('typescript')).default;
  const { outputText } = ts.transpileModule(source, {
    fileName: 'child.cts',
    compilerOptions: { module: ts.ModuleKind.NodeNext, target: ts.ScriptTarget.ES2023 },
  });
  await mkdir(dir, { recursive: true });
  // Written whole, then renamed: a process starting at the same time never reads half a file.
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, outputText);
  await rename(partial, file);
  return file;
}
