import type { RunnerArtifact } from '../messages.js';

/** The shapes of scrubbing a browser run's artifacts (../trace-scrub.ts) and of the artifact worker's tasks. */

/** What kind of file an artifact is; REPORT is any other file a run leaves (an HTML report). */
export type ArtifactKind = RunnerArtifact['kind'] | 'REPORT';

/** An artifact to scrub: its file name in the run's directory (no slashes) and its kind. */
export type ArtifactFile = { name: string; kind: ArtifactKind };

/** A scrubbed artifact, written to the output directory: `path` is absolute, `sizeBytes` its size. */
export type ScrubbedArtifact = { name: string; kind: ArtifactKind; path: string; sizeBytes: number };

/** What a scrub replaced (numbers only: a result never carries a value). */
export type ScrubCounts = {
  /** Secret values replaced by `*****`, occurrences in all artifacts. */
  secretValues: number;
  /** Credential header values (and cookie values) replaced by `*****`, occurrences. */
  credentialHeaders: number;
  /** Distinct secrets shorter than MIN_SECRET_LENGTH characters: too short to scrub, left as they are. */
  shortSecretsNotScrubbed: number;
};

/**
 * The outcome of `scrubArtifacts` (../trace-scrub.ts). `leaked: true` means the artifacts must not be uploaded:
 * a secret (or a credential value) was still found after scrubbing, was found where it cannot
 * be removed (the bytes of an image), or the scrub could not finish; `files` is then empty and
 * the output files are deleted. `reason` says why in words, never with a value.
 */
export type ScrubOutcome = {
  files: ScrubbedArtifact[];
  counts: ScrubCounts;
  leaked: boolean;
  reason: string | null;
};

/** Options of `scrubArtifacts` (../trace-scrub.ts). */
export type ScrubArtifactsOptions = {
  /** The run's directory holding the artifacts. */
  dir: string;
  files: ArtifactFile[];
  /** Secret values of the run (secret variables, `SERVICE_SECRET_*`/`OUTPOST_SECRET_*` values set at run time). */
  secrets: string[];
  /** Where the scrubbed files are written (created when missing); may be `dir` itself. */
  outDir: string;
  /**
   * The uid of the run that wrote the artifacts (its run user): a file another uid owns is refused.
   * Absent: any owner.
   */
  ownerUid?: number;
  /** Stops the scrub: the outcome is then `leaked: true` (nothing may be uploaded unscrubbed). */
  signal?: AbortSignal;
  /** Time the whole scrub may take, ms (default `SCRUB_TIMEOUT_MS`, 120 000). */
  timeoutMs?: number;
};

/** A task of the artifact worker (../scrub-worker.ts): a scrub, or trimming a trace to fit the upload budget. */
export type ArtifactTask =
  | ({ kind: 'scrub' } & Omit<ScrubArtifactsOptions, 'signal' | 'timeoutMs'>)
  | { kind: 'shrink'; path: string; outPath: string; level: ShrinkLevel };

/** How much of a trace {@link ArtifactTask} `shrink` drops: screencast frames, or frames and DOM snapshots. */
export type ShrinkLevel = 'FRAMES' | 'SNAPSHOTS';
