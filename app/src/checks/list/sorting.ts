/**
 * The rows of the checks list and their sort orders.
 */
import { STATUS_ORDER } from '../labels.js';
import type { Check, CheckStatus } from '../../api/schemas.js';
import type { CheckDisplayStatus } from '../../ui/status.js';

/** Sortable columns; `status` (failing first, then by name) is the default. */
export type SortKey = 'status' | 'name' | 'lastRun' | 'availability';

const SORT_KEYS: readonly SortKey[] = ['status', 'name', 'lastRun', 'availability'];

/** `group` filter value for checks in no group. */
export const NO_GROUP = 'none';

/** One row of the table: a check, its status entry and what is derived once from them. */
export type Row = {
  check: Check;
  status: CheckStatus | undefined;
  /** Null when the statuses could not be loaded (a paused check is paused whatever its results). */
  display: CheckDisplayStatus | null;
  /** The group's name; null without a group. */
  groupName: string | null;
  /** Lower-case name, for the search. */
  search: string;
  lastRunMs: number | null;
};

/** Reads the sort parameter: `name` ascending, `-name` descending; unknown values mean the default. */
export function parseSort(value: string): { key: SortKey; desc: boolean } {
  const desc = value.startsWith('-');
  const key = (desc ? value.slice(1) : value) as SortKey;
  return SORT_KEYS.includes(key) ? { key, desc } : { key: 'status', desc: false };
}

const statusRank = new Map(STATUS_ORDER.map((s, i) => [s, i]));

/** One collator for every comparison (`localeCompare` with options builds one per call: slow for 1,000 rows). */
export const collator = new Intl.Collator(undefined, { sensitivity: 'base', numeric: true });

const byName = (a: Row, b: Row) => collator.compare(a.check.name, b.check.name);

/** Compares rows by a column; rows without a value (never run, no availability) go last either way. */
export function comparator(key: SortKey, desc: boolean): (a: Row, b: Row) => number {
  const dir = desc ? -1 : 1;
  const nullsLast = (x: number | null, y: number | null, a: Row, b: Row) => {
    if (x === null && y === null) return byName(a, b);
    if (x === null) return 1;
    if (y === null) return -1;
    return (x - y) * dir || byName(a, b);
  };
  switch (key) {
    case 'name':
      return (a, b) => byName(a, b) * dir;
    case 'lastRun':
      return (a, b) => nullsLast(a.lastRunMs, b.lastRunMs, a, b);
    case 'availability':
      return (a, b) => nullsLast(a.status?.availability24h ?? null, b.status?.availability24h ?? null, a, b);
    default:
      return (a, b) =>
        ((statusRank.get(a.display ?? 'pending') ?? 9) - (statusRank.get(b.display ?? 'pending') ?? 9)) *
          dir || byName(a, b);
  }
}

/** What a row shows of its status entry: a row re-renders only when one of these changed. */
export function statusKey(s: CheckStatus | undefined): string {
  if (!s) return '';
  return `${s.lastResultId}|${s.longestRun}|${s.availability24h}|${s.responseTimes24h.join(',')}`;
}
