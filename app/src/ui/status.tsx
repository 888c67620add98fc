import type { Check, CheckStatus } from '../api/schemas.js';

/** The status a check shows: never shown by colour alone (see {@link StatusBadge}). */
export type CheckDisplayStatus = 'passing' | 'degraded' | 'failing' | 'muted' | 'paused' | 'pending';

/** The label and glyph of each status: the text always says it, the colour only repeats it. */
const STATUS_TEXT: Record<CheckDisplayStatus, { label: string; glyph: string }> = {
  passing: { label: 'Passing', glyph: '✓' },
  degraded: { label: 'Degraded', glyph: '!' },
  failing: { label: 'Failing', glyph: '✕' },
  muted: { label: 'Muted', glyph: '◌' },
  paused: { label: 'Paused', glyph: '❚❚' },
  pending: { label: 'No runs yet', glyph: '…' },
};

/**
 * The status a check shows: paused (not activated) wins, then failing (its latest final result failed or
 * errored), degraded, muted (notifications off), passing; pending before its first result.
 */
export function displayStatusOf(
  check: Pick<Check, 'activated' | 'muted'>,
  status?: CheckStatus,
): CheckDisplayStatus {
  if (!check.activated) return 'paused';
  if (status?.lastResultId) {
    if (status.hasFailures || status.hasErrors) return 'failing';
    if (status.isDegraded) return 'degraded';
  }
  if (check.muted) return 'muted';
  return status?.lastResultId ? 'passing' : 'pending';
}

/** A status as a badge: glyph, text and colour together. */
export function StatusBadge({ status }: { status: CheckDisplayStatus }) {
  const { label, glyph } = STATUS_TEXT[status];
  return (
    <span class={`badge badge-${status}`}>
      <span aria-hidden="true" class="badge-glyph">
        {glyph}
      </span>
      {label}
    </span>
  );
}

/** The status of one run (PASSED, FAILED, DEGRADED, …) as a badge. */
export function RunStatusBadge({ status }: { status: string }) {
  const map: Record<string, CheckDisplayStatus> = {
    PASSED: 'passing',
    FAILED: 'failing',
    DEGRADED: 'degraded',
    TIMED_OUT: 'failing',
    CANCELLED: 'paused',
    PROGRESS: 'pending',
  };
  const display = map[status] ?? 'pending';
  const { glyph } = STATUS_TEXT[display];
  const label =
    status === 'PROGRESS' ? 'Running' : status.charAt(0) + status.slice(1).toLowerCase().replace('_', ' ');
  return (
    <span class={`badge badge-${display}`}>
      <span aria-hidden="true" class="badge-glyph">
        {glyph}
      </span>
      {label}
    </span>
  );
}
