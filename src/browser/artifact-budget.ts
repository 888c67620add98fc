import { rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { MAX_ARTIFACT_SIZE_BYTES } from '../protocol/messages.js';
import { runArtifactTask } from './trace-scrub.js';
import type { ArtifactKind, ScrubbedArtifact, ShrinkLevel } from './trace-scrub/types.js';
import { readArtifactFile, readZip, type ZipEntry, writeZip } from './trace-scrub/zip.js';

/**
 * Fitting a browser run's artifacts into the upload budget (docs/architecture.md, "Browser
 * checks"): the most useful files first, traces trimmed of what costs most and explains least
 * (screencast frames, then DOM snapshots) before whole files are left out. An upload is never
 * refused as a whole: whatever fits goes.
 */

/** Bytes one run may upload by default: 150 MB. */
export const DEFAULT_UPLOAD_BUDGET_BYTES = 150_000_000;
/** Time trimming one trace may take, ms. */
export const SHRINK_TIMEOUT_MS = 60_000;

/** An artifact to plan: a scrubbed file, and whether it belongs to the failing test (its trace, its screenshot). */
export type PlannedArtifact = ScrubbedArtifact & { failing?: boolean };

/** A file left out of the upload, and why. */
export type DroppedArtifact = { name: string; kind: ArtifactKind; sizeBytes: number; reason: string };

/** What trimming a trace removed: events and resources, and the sizes before and after, bytes. */
export type TrimmedTrace = {
  name: string;
  screencastFrames: number;
  snapshots: number;
  resources: number;
  bytesBefore: number;
  bytesAfter: number;
};

/**
 * The upload: `files` in upload order (most useful first), together at most the budget;
 * `dropped` the files left out; `trimmed` the traces that lost frames or snapshots (rewritten in
 * place under the same name); `totalBytes` the size of `files`.
 */
export type UploadPlan = {
  files: ScrubbedArtifact[];
  dropped: DroppedArtifact[];
  trimmed: TrimmedTrace[];
  totalBytes: number;
};

/** Options of {@link planArtifactUpload}. */
export type PlanOptions = {
  /** Scrubbed artifacts (their paths are rewritten when a trace is trimmed). */
  files: PlannedArtifact[];
  /** Bytes the run may upload (default {@link DEFAULT_UPLOAD_BUDGET_BYTES}). */
  budgetBytes?: number;
  /** Stops trimming; what was planned so far is kept and files not yet fitted are dropped. */
  signal?: AbortSignal;
  /** Time trimming one trace may take, ms (default {@link SHRINK_TIMEOUT_MS}). */
  shrinkTimeoutMs?: number;
};

/**
 * Upload priority, lower first: the failing test's trace (the one marked `failing`, else the
 * first trace), one screenshot (the one marked `failing`, else the last one taken, the state at
 * the end), the other screenshots, videos, then the other traces and reports.
 */
export function uploadOrder<T extends PlannedArtifact>(files: readonly T[]): T[] {
  const traces = files.filter((f) => f.kind === 'TRACE');
  const screenshots = files.filter((f) => f.kind === 'SCREENSHOT');
  const mainTrace = traces.find((f) => f.failing === true) ?? traces[0];
  const mainShot = screenshots.find((f) => f.failing === true) ?? screenshots[screenshots.length - 1];
  const rank = (f: T): number => {
    if (f === mainTrace) return 0;
    if (f === mainShot) return 1;
    if (f.kind === 'SCREENSHOT') return 2;
    if (f.kind === 'VIDEO') return 3;
    return 4;
  };
  return files
    .map((file, index) => ({ file, index }))
    .sort((a, b) => rank(a.file) - rank(b.file) || a.index - b.index)
    .map((x) => x.file);
}

/**
 * Plans the upload of a run's scrubbed artifacts within `budgetBytes`. When they are over it,
 * traces lose their screencast frames (`screencast-frame` events and their images), the
 * lowest-priority trace first, until the files fit; still over, their DOM snapshots
 * (`frame-snapshot` events and the resources only they use) likewise, keeping actions, logs,
 * console messages and network entries; still over, files are taken in upload order
 * ({@link uploadOrder}) while they fit and the others dropped, so the upload is empty only when
 * no single file fits. A file larger than the service takes (MAX_ARTIFACT_SIZE_BYTES) is
 * dropped. A trimmed trace is rewritten in place. Trimming runs in the artifact worker; a trace
 * that cannot be trimmed (broken, deadline, `signal`) is kept as it is for the last step.
 * @throws Error only when a trimmed file cannot be measured (its directory removed meanwhile).
 */
export async function planArtifactUpload(options: PlanOptions): Promise<UploadPlan> {
  const budget = options.budgetBytes ?? DEFAULT_UPLOAD_BUDGET_BYTES;
  const ordered = uploadOrder(options.files).map((f) => ({ ...f }));
  const dropped: DroppedArtifact[] = [];
  const trimmed = new Map<string, TrimmedTrace>();
  const candidates = ordered.filter((f) => {
    if (f.sizeBytes <= MAX_ARTIFACT_SIZE_BYTES) return true;
    dropped.push({
      ...describe(f),
      reason: `larger than the ${MAX_ARTIFACT_SIZE_BYTES} bytes one artifact may be`,
    });
    return false;
  });
  const total = () => candidates.reduce((sum, f) => sum + f.sizeBytes, 0);
  for (const level of ['FRAMES', 'SNAPSHOTS'] as const) {
    if (total() <= budget) break;
    // The lowest-priority traces first: the failing test's trace keeps its frames longest.
    for (const file of [...candidates].reverse()) {
      if (total() <= budget || options.signal?.aborted) break;
      if (file.kind !== 'TRACE') continue;
      try {
        const outPath = join(dirname(file.path), `.${basename(file.path)}.trimming`);
        const outcome = await runArtifactTask<ShrinkOutcome>(
          { kind: 'shrink', path: file.path, outPath, level },
          options.shrinkTimeoutMs ?? SHRINK_TIMEOUT_MS,
          options.signal,
        );
        await rename(outPath, file.path);
        const sizeAfter = (await stat(file.path)).size;
        const before = trimmed.get(file.name);
        trimmed.set(file.name, {
          name: file.name,
          screencastFrames: (before?.screencastFrames ?? 0) + outcome.screencastFrames,
          snapshots: (before?.snapshots ?? 0) + outcome.snapshots,
          resources: (before?.resources ?? 0) + outcome.resources,
          bytesBefore: before?.bytesBefore ?? file.sizeBytes,
          bytesAfter: sizeAfter,
        });
        file.sizeBytes = sizeAfter;
      } catch {
        await rm(join(dirname(file.path), `.${basename(file.path)}.trimming`), { force: true });
      }
    }
  }
  const files: ScrubbedArtifact[] = [];
  let used = 0;
  for (const file of candidates) {
    if (used + file.sizeBytes <= budget) {
      files.push(describeFile(file));
      used += file.sizeBytes;
    } else {
      dropped.push({ ...describe(file), reason: `over the run's upload budget of ${budget} bytes` });
    }
  }
  return { files, dropped, trimmed: [...trimmed.values()], totalBytes: used };
}

const describe = (f: ScrubbedArtifact) => ({ name: f.name, kind: f.kind, sizeBytes: f.sizeBytes });
const describeFile = (f: ScrubbedArtifact): ScrubbedArtifact => ({
  name: f.name,
  kind: f.kind,
  path: f.path,
  sizeBytes: f.sizeBytes,
});

// ---------------------------------------------------------------------------------------------
// Trimming a trace (worker side)

/** What {@link shrinkTraceHere} removed. */
export type ShrinkOutcome = { screencastFrames: number; snapshots: number; resources: number };

/** Resource references in trace events and network entries: `"sha1":"…"`, `"_sha1":"…"`. */
const RESOURCE_REF = /"_?sha1":"([^"\\]+)"/g;

/**
 * Writes the trace at `path` to `outPath` without its screencast frames (`FRAMES`), or without
 * its frames and DOM snapshots (`SNAPSHOTS`): those events leave the event logs (`*.trace`), and
 * their resources leave the archive unless another event or network entry still refers to them.
 * Actions, logs, console messages and network entries stay, so the viewer still lists every
 * action. Runs in the artifact worker.
 * @throws Error when the trace cannot be read as a ZIP archive.
 */
export async function shrinkTraceHere(
  path: string,
  outPath: string,
  level: ShrinkLevel,
): Promise<ShrinkOutcome> {
  const entries = await readZip(await readArtifactFile(path));
  const outcome: ShrinkOutcome = { screencastFrames: 0, snapshots: 0, resources: 0 };
  const droppedRefs = new Set<string>();
  const keptRefs = new Set<string>();
  const collect = (text: string, into: Set<string>) => {
    for (const match of text.matchAll(RESOURCE_REF)) into.add(match[1] as string);
  };
  for (const entry of entries) {
    if (entry.name.endsWith('.trace')) {
      const kept: string[] = [];
      for (const line of entry.data.toString('utf8').split('\n')) {
        const drop = eventToDrop(line, level);
        if (drop === 'FRAME') outcome.screencastFrames++;
        if (drop === 'SNAPSHOT') outcome.snapshots++;
        if (drop === null) {
          kept.push(line);
          collect(line, keptRefs);
        } else {
          collect(line, droppedRefs);
        }
      }
      entry.data = Buffer.from(kept.join('\n'));
    } else if (entry.name.endsWith('.network')) {
      collect(entry.data.toString('utf8'), keptRefs);
    }
  }
  const out: ZipEntry[] = entries.filter((entry) => {
    if (!entry.name.startsWith('resources/')) return true;
    const ref = entry.name.slice('resources/'.length);
    if (droppedRefs.has(ref) && !keptRefs.has(ref)) {
      outcome.resources++;
      return false;
    }
    return true;
  });
  await writeZip(out, outPath);
  return outcome;
}

/** Whether a trace event line goes at `level`: a screencast frame, a DOM snapshot, or null (kept). */
function eventToDrop(line: string, level: ShrinkLevel): 'FRAME' | 'SNAPSHOT' | null {
  // The type is the event's first key as Playwright writes it; parse only lines that may match.
  const frame = line.includes('"screencast-frame"');
  const snapshot = level === 'SNAPSHOTS' && line.includes('"frame-snapshot"');
  if (!frame && !snapshot) return null;
  let type: unknown;
  try {
    type = (JSON.parse(line) as { type?: unknown }).type;
  } catch {
    return null;
  }
  if (type === 'screencast-frame') return 'FRAME';
  if (type === 'frame-snapshot' && level === 'SNAPSHOTS') return 'SNAPSHOT';
  return null;
}
