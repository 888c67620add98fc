import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArtifactFile } from './types.js';

/** Where scrubbed artifacts are written: plain names only, each written under a partial name first. */

/** Longest reason an outcome gives, characters. */
export const MAX_REASON_CHARS = 500;

/** Deletes the scrubbed copies (and half-written ones) of `files` in `outDir`, unless that is the input `dir`. */
export async function removeOutputs(
  outDir: string,
  files: ArtifactFile[],
  dir: string | null,
): Promise<void> {
  for (const file of files) {
    if (!isPlainName(file.name)) continue;
    if (dir === null || outDir !== dir) await rm(join(outDir, file.name), { force: true });
    await rm(join(outDir, partialName(file.name)), { force: true });
  }
}

/** The name a scrubbed copy is written under until it is complete. */
export const partialName = (name: string) => `.${name}.scrubbing`;

/** True for a file name without a directory part: `trace.zip`, not `../x` or `a/b`. */
export function isPlainName(name: string): boolean {
  return (
    typeof name === 'string' &&
    name.length > 0 &&
    name.length <= 255 &&
    !/[/\\\0]/.test(name) &&
    name !== '.' &&
    name !== '..'
  );
}
