import { shrinkTraceHere, type ShrinkOutcome } from './artifact-budget.js';
import { scrubArtifactsHere } from './trace-scrub/scrub-here.js';
import type { ArtifactTask, ScrubOutcome } from './trace-scrub/types.js';

/**
 * Entry of the artifact worker thread (trace-scrub.ts runs it in a piscina pool): scrubs a run's
 * artifacts, or drops screencast frames and DOM snapshots from a trace to fit an upload budget.
 */
export default function work(task: ArtifactTask): Promise<ScrubOutcome | ShrinkOutcome> {
  if (task.kind === 'scrub') return scrubArtifactsHere(task);
  return shrinkTraceHere(task.path, task.outPath, task.level);
}
