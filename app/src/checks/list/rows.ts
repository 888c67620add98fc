/**
 * The checks list's data: the three lists it loads, one row per check, the status counts, the filter
 * options and the rows the filters and sort keep.
 */
import { useMemo } from 'preact/hooks';
import { listCheckGroups } from '../../api/check-groups.js';
import { listCheckStatuses, listCheckStatusesOf, listChecks, listFirstChecks } from '../../api/checks.js';
import type { Check, CheckGroup, CheckStatus, CheckType } from '../../api/schemas.js';
import { useLoad } from '../../ui/hooks.js';
import { displayStatusOf, type CheckDisplayStatus } from '../../ui/status.js';
import { NO_GROUP, type Row, collator, comparator, parseSort } from './sorting.js';

/** The filters of the page, all kept in the address (`?q=&type=&status=&tag=&group=&sort=`). */
export type Filters = { q: string; type: string; status: string; tag: string; group: string; sort: string };

/** The values a filter select offers. */
export type FilterOptions = { types: CheckType[]; tags: string[]; groups: CheckGroup[] };

/** The filters read from the address's query. */
export function filtersOf(query: Record<string, string | undefined>): Filters {
  return {
    q: query.q ?? '',
    type: query.type ?? '',
    status: query.status ?? '',
    tag: query.tag ?? '',
    group: query.group ?? '',
    sort: query.sort ?? '',
  };
}

/** Checks the page reads first (`GET /v1/checks?limit=`): enough for the rows in view of any screen. */
export const FIRST_CHECKS = 100;

/** The first checks of the account (FIRST_CHECKS, oldest first) with their statuses; `all` when that is every check. */
export type FirstChecks = { checks: Check[]; statuses: CheckStatus[]; all: boolean };

/** Reads the first checks, then their statuses (two small requests: about 150 KB at most). */
export async function loadFirstChecks(signal: AbortSignal): Promise<FirstChecks> {
  const checks = await listFirstChecks(FIRST_CHECKS, signal);
  const statuses =
    checks.length === 0
      ? []
      : await listCheckStatusesOf(
          checks.map((c) => c.id),
          signal,
        );
  return { checks, statuses, all: checks.length < FIRST_CHECKS };
}

/**
 * The lists of the page. It reads the first checks and their statuses first (loadFirstChecks), so the table
 * is drawn from them at once; then, in the background, every check and every status (the lists refreshed live,
 * as conditional requests: statuses every 10 s, checks every 60 s), which take their place once both are in.
 * The groups are read at once (a short list) and every 60 s. `shown` is what the table draws: the whole
 * lists once in (`whole`), else the first checks (`whole` false: sort, filters and counts cover those only).
 * A failed first read falls back to the whole lists.
 */
export function useChecksData() {
  const first = useLoad((signal) => loadFirstChecks(signal), []);
  // The whole lists wait for the first read: the service answers one request at a time per core, and the
  // whole list of checks (megabytes at thousands of checks) would hold up the first page behind it.
  const firstDone = Boolean(first.data || first.error);
  const checks = useLoad(
    (signal) => (firstDone ? listChecks(signal) : Promise.resolve(undefined)),
    [firstDone],
    60_000,
  );
  const statuses = useLoad(
    (signal) => (firstDone ? listCheckStatuses(signal) : Promise.resolve(undefined)),
    [firstDone],
    10_000,
  );
  const groups = useLoad((signal) => listCheckGroups(signal), [], 60_000);
  const whole = Boolean(checks.data && (statuses.data || statuses.error));
  const fromFirst = !whole && first.data !== undefined;
  const shown = {
    checks: whole ? checks.data : fromFirst ? first.data?.checks : undefined,
    statuses: whole ? statuses.data : fromFirst ? first.data?.statuses : undefined,
  };
  return {
    first,
    checks,
    statuses,
    groups,
    shown,
    /** True once the whole lists are shown, or when the first checks were every check. */
    whole: whole || first.data?.all === true,
  };
}

type Data = ReturnType<typeof useChecksData>;

/** One row per check shown: its status, display status, group name and what search and sort read. */
export function useRows({ shown, groups }: Pick<Data, 'shown' | 'groups'>): Row[] {
  const groupNames = useMemo(
    () => (groups.data ? new Map(groups.data.map((g) => [g.id, g.name])) : null),
    [groups.data],
  );
  const shownStatuses = shown.statuses;
  const shownChecks = shown.checks;
  return useMemo<Row[]>(() => {
    const byCheck = shownStatuses ? new Map(shownStatuses.map((s) => [s.checkId, s])) : null;
    return (shownChecks ?? []).map((check) => {
      const status = byCheck?.get(check.id);
      const lastRunMs = status?.lastRunAt ? Date.parse(status.lastRunAt) : null;
      return {
        check,
        status,
        display: byCheck || !check.activated ? displayStatusOf(check, status) : null,
        groupName:
          check.groupId === null ? null : (groupNames?.get(check.groupId) ?? `Group ${check.groupId}`),
        search: check.name.toLowerCase(),
        lastRunMs: lastRunMs === null || Number.isNaN(lastRunMs) ? null : lastRunMs,
      };
    });
  }, [shownChecks, shownStatuses, groupNames]);
}

/** How many checks are in each display status. */
export function useCounts(rows: Row[]): Map<CheckDisplayStatus, number> {
  return useMemo(() => {
    const c = new Map<CheckDisplayStatus, number>();
    for (const r of rows) if (r.display) c.set(r.display, (c.get(r.display) ?? 0) + 1);
    return c;
  }, [rows]);
}

/** The types, tags and groups the filter selects offer, sorted. */
export function useFilterOptions(rows: Row[], groups: CheckGroup[] | undefined): FilterOptions {
  return useMemo(() => {
    const types = new Set<CheckType>();
    const tags = new Set<string>();
    for (const r of rows) {
      types.add(r.check.checkType);
      for (const t of r.check.tags) tags.add(t);
    }
    const sortText = collator.compare;
    return {
      types: [...types].sort(sortText),
      tags: [...tags].sort(sortText),
      groups: [...(groups ?? [])].sort((a, b) => sortText(a.name, b.name)),
    };
  }, [rows, groups]);
}

/** The rows the filters keep, in the sort's order. */
export function useVisible(rows: Row[], filters: Filters): Row[] {
  const sort = parseSort(filters.sort);
  return useMemo(() => {
    const q = filters.q.trim().toLowerCase();
    const groupId = filters.group && filters.group !== NO_GROUP ? Number(filters.group) : null;
    const out = rows.filter(
      (r) =>
        (!q || r.search.includes(q)) &&
        (!filters.type || r.check.checkType === filters.type) &&
        (!filters.status || r.display === filters.status) &&
        (!filters.tag || r.check.tags.includes(filters.tag)) &&
        (!filters.group ||
          (filters.group === NO_GROUP ? r.check.groupId === null : r.check.groupId === groupId)),
    );
    return out.sort(comparator(sort.key, sort.desc));
  }, [rows, filters.q, filters.type, filters.status, filters.tag, filters.group, sort.key, sort.desc]);
}

/** The query of `filters` with `name` set to `value` (empty filters left out), without the `?`. */
export function queryWith(filters: Filters, name: keyof Filters, value: string): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...filters, [name]: value })) if (v) params.set(k, v);
  return params.toString();
}
