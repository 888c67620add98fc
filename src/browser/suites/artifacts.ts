import { lstat, readdir } from 'node:fs/promises';
import { join, posix, relative, sep } from 'node:path';
import type { Layout, SuiteArtifact, SuiteIdentity } from './types.js';

/** Most files listed in the output folder, and how deep. */
const MAX_OUTPUT_FILES = 500;
const MAX_OUTPUT_DEPTH = 6;

const KINDS: [RegExp, SuiteArtifact['kind']][] = [
  [/(^|\/)trace\.zip$|\.trace\.zip$/, 'TRACE'],
  [/\.png$|\.jpe?g$/, 'SCREENSHOT'],
  [/\.webm$/, 'VIDEO'],
];

/**
 * Traces, screenshots and videos under the output folder and the JSON report: regular files only
 * (links are never followed, and with `runAs` only files the run's uid owns with one link), at
 * most {@link MAX_OUTPUT_FILES}. Files of failed attempts first.
 */
export async function listArtifacts(
  layout: Layout,
  runAs: SuiteIdentity | null,
  failedAttachments: string[],
): Promise<SuiteArtifact[]> {
  const failed = new Set(failedAttachments);
  const found: SuiteArtifact[] = [];
  const acceptable = async (path: string) => {
    const stat = await lstat(path).catch(() => null);
    if (!stat?.isFile()) return null;
    if (runAs !== null && (stat.uid !== runAs.uid || stat.nlink !== 1)) return null;
    return stat;
  };
  let listed = 0;
  const walk = async (folder: string, depth: number): Promise<void> => {
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (++listed > MAX_OUTPUT_FILES) return;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (depth < MAX_OUTPUT_DEPTH) await walk(path, depth + 1);
        continue;
      }
      const rel = relative(layout.output, path).split(sep).join(posix.sep);
      const kind = KINDS.find(([pattern]) => pattern.test(rel))?.[1];
      if (kind === undefined) continue;
      const stat = await acceptable(path);
      if (stat === null) continue;
      found.push({
        name: rel.replaceAll('/', '-'),
        kind,
        path,
        sizeBytes: stat.size,
        failed: failed.has(path),
      });
    }
  };
  await walk(layout.output, 0);
  const report = await acceptable(layout.reportFile);
  if (report !== null)
    found.push({
      name: 'report.json',
      kind: 'REPORT',
      path: layout.reportFile,
      sizeBytes: report.size,
      failed: false,
    });
  return found.sort((a, b) => Number(b.failed) - Number(a.failed));
}
