import type { Kysely } from 'kysely';
import type { Database } from '../platform/store/database.js';
import { readDoc } from '../platform/store/schema.js';
import type { DashboardDoc } from './dashboards.js';
import { type DashboardCheckRow, DashboardQueries, type LastResultRow, type RunCounts } from './store.js';

/** The state a check shows on a dashboard: its latest final result's, or why it has none. */
export type DashboardCheckState = 'PASSING' | 'DEGRADED' | 'FAILING' | 'PAUSED' | 'NO_DATA';

/** One check as the public page shows it: names, tags, state and availability only. */
export type DashboardCheck = {
  name: string;
  checkType: string;
  tags: string[];
  state: DashboardCheckState;
  /** When the latest final run stopped, epoch ms; null before the first. */
  lastRunAt: number | null;
  /** Percent of runs without failure in the last 24 hours; null when none ran. */
  availability24h: number | null;
  /** Percent of runs without failure in the last 7 days; null when none ran. */
  availability7d: number | null;
};

/** What the public page renders: the dashboard, the page of checks shown and where it sits in the pages. */
export type DashboardPageModel = {
  doc: DashboardDoc;
  checks: DashboardCheck[];
  /** Every selected check's state, for the summary line. */
  counts: Record<DashboardCheckState, number>;
  total: number;
  /** 1-based. */
  page: number;
  pages: number;
  nowMs: number;
};

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Failing first, then degraded, passing, paused and no data (`sortByStatus`). */
const STATE_ORDER: Record<DashboardCheckState, number> = {
  FAILING: 0,
  DEGRADED: 1,
  PASSING: 2,
  PAUSED: 3,
  NO_DATA: 4,
};

/**
 * Whether a check's tags select it: every check when the dashboard has no tags; else a check with any of
 * them, or all of them with `useTagsAndOperator`.
 */
export function selects(doc: DashboardDoc, tags: readonly string[]): boolean {
  if (doc.tags.length === 0) return true;
  return doc.useTagsAndOperator
    ? doc.tags.every((t) => tags.includes(t))
    : doc.tags.some((t) => tags.includes(t));
}

/** A check's state from whether it is activated and its latest final result. */
function stateOf(check: DashboardCheckRow, last: LastResultRow | undefined): DashboardCheckState {
  if (!check.activated) return 'PAUSED';
  if (!last) return 'NO_DATA';
  if (last.has_failures || last.has_errors || last.status === 'FAILED') return 'FAILING';
  if (last.is_degraded || last.status === 'DEGRADED') return 'DEGRADED';
  return 'PASSING';
}

/** Percent of `counts`' runs without failure; null without runs. */
function availability(counts: RunCounts | undefined): number | null {
  if (!counts || counts.runs === 0) return null;
  return ((counts.runs - counts.failures) / counts.runs) * 100;
}

/**
 * The model of a dashboard's public page at `nowMs`: the account's checks its tags select, each with its
 * state and the share of runs without failure over 24 hours and 7 days (from the hourly roll-ups), sorted
 * by state when `sortByStatus`, cut into pages of `checksPerPage` when `paginate`; `page` is clamped into
 * range. Reads no check document: nothing of a check's request, script or variables can reach the page.
 */
export async function dashboardPageModel(
  db: Kysely<Database>,
  accountId: string,
  doc: DashboardDoc,
  page: number,
  nowMs: number,
): Promise<DashboardPageModel> {
  const store = new DashboardQueries(db);
  const [checks, last, day, week] = await Promise.all([
    store.checks(accountId),
    store.lastResults(accountId),
    store.runCounts(accountId, Math.floor((nowMs - DAY_MS) / HOUR_MS) * HOUR_MS),
    store.runCounts(accountId, Math.floor((nowMs - 7 * DAY_MS) / HOUR_MS) * HOUR_MS),
  ]);
  const lastBy = new Map(last.map((r) => [r.check_id, r]));
  const dayBy = new Map(day.map((r) => [r.check_id, r]));
  const weekBy = new Map(week.map((r) => [r.check_id, r]));
  const shown: DashboardCheck[] = checks
    .filter((c) => selects(doc, c.tags))
    .map((c) => {
      const result = lastBy.get(c.id);
      return {
        name: c.name,
        checkType: c.checkType,
        tags: c.tags,
        state: stateOf(c, result),
        lastRunAt: result ? Number(result.stopped_at) : null,
        availability24h: availability(dayBy.get(c.id)),
        availability7d: availability(weekBy.get(c.id)),
      };
    });
  if (doc.sortByStatus) shown.sort((a, b) => STATE_ORDER[a.state] - STATE_ORDER[b.state]);
  const counts: Record<DashboardCheckState, number> = {
    PASSING: 0,
    DEGRADED: 0,
    FAILING: 0,
    PAUSED: 0,
    NO_DATA: 0,
  };
  for (const c of shown) counts[c.state] += 1;
  const perPage = doc.paginate ? doc.checksPerPage : Math.max(1, shown.length);
  const pages = Math.max(1, Math.ceil(shown.length / perPage));
  const current = Math.min(Math.max(1, page), pages);
  return {
    doc,
    checks: shown.slice((current - 1) * perPage, current * perPage),
    counts,
    total: shown.length,
    page: current,
    pages,
    nowMs,
  };
}

/** The dashboard served at `/dashboards/{url}` and its account; undefined when none is, or it is private. */
export async function publicDashboard(
  db: Kysely<Database>,
  url: string,
): Promise<{ accountId: string; doc: DashboardDoc } | undefined> {
  const row = await new DashboardQueries(db).byUrl(url.toLowerCase());
  if (!row) return undefined;
  const doc = readDoc(row.doc);
  if (doc.isPrivate) return undefined;
  return { accountId: row.account_id, doc };
}
