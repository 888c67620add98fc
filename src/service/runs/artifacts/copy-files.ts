import { createReadStream, type Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type Artifacts, validArtifactKey } from './artifacts.js';

/**
 * What {@link copyArtifactFiles} copied: files and bytes; the paths it left (not an artifact's place); the
 * files that could not be copied, each with the reason.
 */
export type ArtifactCopy = {
  files: number;
  bytes: number;
  skipped: string[];
  failed: { path: string; reason: string }[];
};

/**
 * Copies the artifact files of a file store's folder (`<dir>/<accountId>/<jobId>/<name>`, ArtifactStore) into
 * `into` (the database store, when `outpost migrate-store` moves a SQLite store to PostgreSQL), one file at a
 * time, streamed. Uploads in progress (`.partial`) and anything that is not an artifact's path are left and
 * named in `skipped`; a file that cannot be read or stored is named in `failed` and the copy goes on. Answers
 * zeros when `dir` does not exist.
 * @throws only when a folder cannot be listed.
 */
export async function copyArtifactFiles(dir: string, into: Artifacts): Promise<ArtifactCopy> {
  const out: ArtifactCopy = { files: 0, bytes: 0, skipped: [], failed: [] };
  const list = async (path: string): Promise<Dirent[]> => {
    try {
      return await readdir(path, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  };
  for (const account of await list(dir)) {
    if (account.name === '.partial') continue; // uploads that never completed
    if (!account.isDirectory() || !validArtifactKey(account.name, 'job')) {
      out.skipped.push(account.name);
      continue;
    }
    for (const job of await list(join(dir, account.name))) {
      if (!job.isDirectory() || !validArtifactKey(account.name, job.name)) {
        out.skipped.push(join(account.name, job.name));
        continue;
      }
      for (const file of await list(join(dir, account.name, job.name))) {
        const path = join(dir, account.name, job.name, file.name);
        if (!file.isFile() || !validArtifactKey(account.name, job.name, file.name)) {
          out.skipped.push(join(account.name, job.name, file.name));
          continue;
        }
        try {
          const { size } = await stat(path);
          await into.write(account.name, job.name, file.name, createReadStream(path), size);
          out.files += 1;
          out.bytes += size;
        } catch (err) {
          out.failed.push({ path, reason: err instanceof Error ? err.message : String(err) });
        }
      }
    }
  }
  return out;
}
