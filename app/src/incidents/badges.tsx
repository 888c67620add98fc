/**
 * Impacts and update statuses of incidents, as badges and as choices.
 */
import type { Impact, IncidentView, UpdateStatus } from '../api/schemas.js';

/** How often the pages look again (an incident a check opened or resolved shows up), ms. */
export const POLL_MS = 30_000;

/** Impacts in the form's order, with their words and badge (glyph and colour; the text says it). */
const IMPACTS: Record<Impact, { label: string; cls: string; glyph: string }> = {
  MINOR: { label: 'Minor', cls: 'degraded', glyph: '!' },
  MAJOR: { label: 'Major', cls: 'failing', glyph: '✕' },
  MAINTENANCE: { label: 'Maintenance', cls: 'paused', glyph: '⚙' },
};

/** Update statuses in their usual order, with their words and badge. */
const STATUSES: Record<UpdateStatus, { label: string; cls: string; glyph: string }> = {
  INVESTIGATING: { label: 'Investigating', cls: 'failing', glyph: '?' },
  IDENTIFIED: { label: 'Identified', cls: 'degraded', glyph: '!' },
  MONITORING: { label: 'Monitoring', cls: 'pending', glyph: '…' },
  RESOLVED: { label: 'Resolved', cls: 'passing', glyph: '✓' },
  MAINTENANCE: { label: 'Maintenance', cls: 'paused', glyph: '⚙' },
};

/** The impacts and the update statuses as the options of the form's selects. */
export const IMPACT_OPTIONS = (Object.keys(IMPACTS) as Impact[]).map((i) => ({
  value: i,
  label: IMPACTS[i].label,
}));

/** The update statuses as the options of the form's selects. */
export const STATUS_OPTIONS = (Object.keys(STATUSES) as UpdateStatus[]).map((s) => ({
  value: s,
  label: STATUSES[s].label,
}));

/**
 * Renders an incident's impact as a badge (glyph, colour and word; "impact" for screen readers).
 * @param impact the impact shown.
 */
export function ImpactBadge({ impact }: { impact: Impact }) {
  const { label, cls, glyph } = IMPACTS[impact];
  return (
    <span class={`badge badge-${cls}`}>
      <span aria-hidden="true" class="badge-glyph">
        {glyph}
      </span>
      {label}
      <span class="visually-hidden"> impact</span>
    </span>
  );
}

/**
 * Renders an update's status as a badge (glyph, colour and word).
 * @param status the update status shown.
 */
export function UpdateStatusBadge({ status }: { status: UpdateStatus }) {
  const { label, cls, glyph } = STATUSES[status];
  return (
    <span class={`badge badge-${cls}`}>
      <span aria-hidden="true" class="badge-glyph">
        {glyph}
      </span>
      {label}
    </span>
  );
}

/** Whether an incident is over: it stopped, or its latest update resolved it. */
export function isResolved(incident: IncidentView): boolean {
  return incident.stoppedAt !== null || incident.incidentUpdates[0]?.status === 'RESOLVED';
}
