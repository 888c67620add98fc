#!/usr/bin/env node
// Bundles the child bootstraps (CHILD_BUNDLES of src/common/compiled-child.ts) with esbuild into
// the single self-contained .cjs files the Node permission model needs (`--allow-fs-read=<bootstrap>`),
// where compiledChildPath looks for them in the build: dist/<bundle>.cjs next to the modules that
// start them. Run by `npm run build` after tsc, which emits dist/src/common/compiled-child.js.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { CHILD_BUNDLES, bundleChild } = await import(join(root, 'dist/src/common/compiled-child.js'));

for (const [bundle, entry] of Object.entries(CHILD_BUNDLES)) {
  const { text, inputs } = await bundleChild(join(root, entry));
  const file = join(root, 'dist', `${bundle}.cjs`);
  await mkdir(dirname(file), { recursive: true });
  // Written whole, then renamed: an agent starting meanwhile never reads half a file.
  await writeFile(`${file}.tmp`, text);
  await rename(`${file}.tmp`, file);
  console.log(`${bundle}.cjs: ${inputs.length} modules, ${Buffer.byteLength(text)} bytes`);
}
