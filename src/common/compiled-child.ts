import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, realpath, rename, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from './paths.js';

/**
 * The child bootstraps bundled from several modules: the bundle's path without `.cjs`, relative to
 * the package root (`src/sandbox/child` → `dist/src/sandbox/child.cjs` in the build), mapped to its
 * entry module. A bootstrap not listed here is the single file `<name>.cts` next to its module.
 */
export const CHILD_BUNDLES: Readonly<Record<string, string>> = {
  'src/sandbox/child': 'src/sandbox/child/main.ts',
  'src/browser/runner-child': 'src/browser/runner/main.ts',
  'src/browser/host-child': 'src/browser/host/main.ts',
};

/**
 * Bundles the child bootstrap `entry` (absolute path of a `.ts` or `.cts` module) with esbuild into
 * one self-contained CommonJS text: the Node permission model lets a child read that one file
 * (`--allow-fs-read=<bootstrap>`, src/common/process-launcher.ts), so everything it imports of ours
 * is inlined. It may import only `node:` built-ins besides our own modules: what the runtime
 * provides (playwright-core of runtimes/<id>) is resolved at run time through `createRequire`,
 * never bundled.
 *
 * @returns the bundle's text (CommonJS, Node 20) and the absolute paths of its input files.
 * @throws Error naming any import that is neither ours nor a `node:` built-in, or esbuild's error;
 *   rejects when the `esbuild` dev dependency is not installed.
 */
export async function bundleChild(entry: string): Promise<{ text: string; inputs: string[] }> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [entry],
    absWorkingDir: PACKAGE_ROOT,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    charset: 'utf8',
    legalComments: 'none',
    logLevel: 'silent',
    plugins: [
      {
        name: 'outpost-child-imports',
        setup(build) {
          // Only `node:` built-ins (left to Node) and relative imports of our own sources.
          build.onResolve({ filter: /^[^./]/ }, (args) =>
            args.path.startsWith('node:')
              ? { path: args.path, external: true }
              : {
                  errors: [
                    { text: `${args.path} may not be imported by a child bootstrap (only node: built-ins)` },
                  ],
                },
          );
        },
      },
    ],
  });
  const output = result.outputFiles?.[0];
  if (output === undefined) throw new Error(`esbuild wrote no bundle for ${entry}`);
  const inputs = Object.keys(result.metafile?.inputs ?? {}).map((input) => join(PACKAGE_ROOT, input));
  return { text: output.text, inputs };
}

/**
 * The entry module of the bootstrap `name` beside the source module `here`: its {@link CHILD_BUNDLES}
 * entry, else `<name>.cts` next to it.
 */
function entryOf(here: string, name: string): string {
  const key = relative(PACKAGE_ROOT, join(dirname(here), name))
    .split(sep)
    .join('/');
  const listed = CHILD_BUNDLES[key];
  return listed === undefined ? join(dirname(here), `${name}.cts`) : join(PACKAGE_ROOT, listed);
}

const cache = new Map<string, Promise<string>>();

/**
 * Absolute path of a child-process bootstrap `<name>.cjs` beside the module `moduleUrl` (the
 * sandbox's script processes, the browser host and runners, the suite report worker).
 *
 * From the build (`dist/src/...`) it is the `.cjs` file next to the module (written by
 * scripts/build-children.mjs, or by tsc for a single `.cts`). From TypeScript sources (vitest,
 * tsx) the bootstrap is bundled with esbuild ({@link bundleChild}) into
 * `node_modules/.cache/outpost-children/<name>-<hash of the bundle>.cjs`: the hash covers every
 * input file, so tests never run a stale bundle, and no process leaves a copy behind. Cached per
 * process.
 *
 * @param moduleUrl `import.meta.url` of the module beside the bootstrap.
 * @param name the bootstrap's file name without extension (`child`, `runner-child`).
 * @returns the bootstrap's absolute path. Rejects when the built file is missing, or the sources
 *   cannot be bundled (esbuild missing, an import that is not allowed).
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
  const { text } = await bundleChild(entryOf(here, name));
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 16);
  const dir = join(PACKAGE_ROOT, 'node_modules', '.cache', 'outpost-children');
  // Its real path: Node's permission model allows reading the bootstrap by the path it is given,
  // and resolving a path through a symlinked node_modules reads the link itself.
  await mkdir(dir, { recursive: true });
  const file = join(await realpath(dir), `${name}-${hash}.cjs`);
  if (existsSync(file)) return file;
  // Written whole, then renamed: a process starting at the same time never reads half a file.
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, text);
  await rename(partial, file);
  return file;
}
