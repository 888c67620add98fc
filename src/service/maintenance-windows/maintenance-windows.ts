import type { Kysely, Transaction } from 'kysely';
import { CheckQueries } from '../checks/index.js';
import { badField, notFound } from '../platform/http/errors.js';
import { iso } from '../platform/http/pagination.js';
import type { Database } from '../platform/store/database.js';
import { readDoc } from '../platform/store/schema.js';
import { assertGroupExists, GroupQueries } from '../resources/index.js';
import {
  instantOf,
  isIanaZone,
  type Occurrence,
  occurrenceAt,
  occurrencesFrom,
  type RepeatUnit,
  type WindowTimes,
  wallTimeOf,
} from './repeat.js';
import type { CreateMaintenanceWindow, MaintenanceWindow, UpdateMaintenanceWindow } from './schemas.js';
import { type MaintenanceWindowRow, MaintenanceWindowQueries } from './store.js';

/**
 * The stored document of a maintenance window (docs/api.md, "Maintenance windows"). Times are ISO 8601
 * instants in UTC; `repeatEndsOn` is a calendar date (`YYYY-MM-DD`) in `timezone`.
 */
export type MaintenanceWindowDoc = {
  name: string;
  tags: string[];
  startsAt: string;
  endsAt: string;
  repeatUnit: RepeatUnit | null;
  repeatInterval: number | null;
  repeatEndsOn: string | null;
  timezone: string;
  description: string | null;
  pauseAllChecks: boolean;
  silenceAllAlerts: boolean;
  silenceAlertsTags: string[];
  checkIds: string[];
  groupIds: number[];
  pauseRuns: boolean;
  silenceAlerts: boolean;
};

type Tx = Kysely<Database> | Transaction<Database>;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;
/** A date-time without an offset: a wall time in the window's time zone. */
const LOCAL_DATE_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(:\d{2}(\.\d{1,3})?)?$/;

/** A valid calendar date `YYYY-MM-DD` as its wall time at midnight, or null. */
function dateWall(text: string): number | null {
  const m = DATE.exec(text);
  if (!m) return null;
  const wall = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return new Date(wall).toISOString().slice(0, 10) === text ? wall : null;
}

/**
 * The instant `text` names: a date-time with its offset, a date-time without one (a wall time in
 * `timezone`, what a form's date and time fields give), or a date (midnight in `timezone`).
 * @throws HttpError 400 naming `field`, rule `format`.
 */
function instantField(field: string, text: string, timezone: string): number {
  const wall = dateWall(text);
  if (wall !== null) return instantOf(timezone, wall);
  const local = LOCAL_DATE_TIME.exec(text);
  const day = local ? dateWall(local[1] ?? '') : null;
  if (local && day !== null && Number(local[2]) < 24 && Number(local[3]) < 60) {
    return instantOf(timezone, Date.parse(`${text}Z`));
  }
  const ms = DATE_TIME.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(ms)) {
    throw badField(field, 'must be a date (2026-03-29) or a date-time (2026-03-29T02:00:00Z)', 'format');
  }
  return ms;
}

/**
 * `repeatEndsAt` as a calendar date: a date as it is, a date-time as its UTC date (the hosted API's rule).
 * @throws HttpError 400 naming `repeatEndsAt`, rule `format`.
 */
function repeatEndDate(text: string): string {
  if (dateWall(text) !== null) return text;
  return new Date(instantField('repeatEndsAt', text, 'UTC')).toISOString().slice(0, 10);
}

/**
 * The stored document of a window from its previous document (none on create) and a validated body:
 * fields left out keep their value (or take their default), times are normalised to UTC instants.
 * @throws HttpError 400 naming the field: `timezone` not an IANA zone, `startsAt`/`endsAt`/`repeatEndsAt`
 *   not a date or date-time, `endsAt` before `startsAt`, `repeatEndsAt` before the first start's date,
 *   `repeatInterval` without `repeatUnit`.
 */
export function windowDoc(
  before: MaintenanceWindowDoc | null,
  body: CreateMaintenanceWindow | UpdateMaintenanceWindow,
): MaintenanceWindowDoc {
  const timezone = body.timezone === undefined ? (before?.timezone ?? 'UTC') : (body.timezone ?? 'UTC');
  if (!isIanaZone(timezone)) {
    throw badField('timezone', 'must be a named IANA time zone (e.g. Europe/Berlin)', 'format');
  }
  const startsAtMs =
    body.startsAt === undefined
      ? Date.parse(before?.startsAt ?? '')
      : instantField('startsAt', body.startsAt, timezone);
  const endsAtMs =
    body.endsAt === undefined
      ? Date.parse(before?.endsAt ?? '')
      : instantField('endsAt', body.endsAt, timezone);
  if (endsAtMs < startsAtMs) throw badField('endsAt', 'must not be before startsAt', 'minimum');
  const repeatUnit = body.repeatUnit === undefined ? (before?.repeatUnit ?? null) : body.repeatUnit;
  const interval = body.repeatInterval === undefined ? (before?.repeatInterval ?? null) : body.repeatInterval;
  if (repeatUnit === null && interval !== null && body.repeatInterval !== undefined) {
    throw badField('repeatUnit', 'must be DAY, WEEK or MONTH when repeatInterval is set', 'dependencies');
  }
  const repeatEndsOn =
    body.repeatEndsAt === undefined
      ? (before?.repeatEndsOn ?? null)
      : body.repeatEndsAt === null
        ? null
        : repeatEndDate(body.repeatEndsAt);
  const firstDate = new Date(wallTimeOf(timezone, startsAtMs)).toISOString().slice(0, 10);
  if (repeatUnit !== null && repeatEndsOn !== null && repeatEndsOn < firstDate) {
    throw badField('repeatEndsAt', 'must not be before the date of startsAt', 'minimum');
  }
  return {
    name: body.name ?? before?.name ?? '',
    tags: body.tags ?? before?.tags ?? [],
    startsAt: new Date(startsAtMs).toISOString(),
    endsAt: new Date(endsAtMs).toISOString(),
    repeatUnit,
    repeatInterval: repeatUnit === null ? null : interval,
    repeatEndsOn: repeatUnit === null ? null : repeatEndsOn,
    timezone,
    description: body.description === undefined ? (before?.description ?? null) : body.description,
    pauseAllChecks: body.pauseAllChecks ?? before?.pauseAllChecks ?? false,
    silenceAllAlerts: body.silenceAllAlerts ?? before?.silenceAllAlerts ?? false,
    silenceAlertsTags: body.silenceAlertsTags ?? before?.silenceAlertsTags ?? [],
    checkIds: body.checkIds ?? before?.checkIds ?? [],
    groupIds: body.groupIds ?? before?.groupIds ?? [],
    pauseRuns: body.pauseRuns ?? before?.pauseRuns ?? true,
    silenceAlerts: body.silenceAlerts ?? before?.silenceAlerts ?? true,
  };
}

/** What the occurrences of a stored window depend on. */
export function timesOf(doc: MaintenanceWindowDoc): WindowTimes {
  return {
    startsAtMs: Date.parse(doc.startsAt),
    endsAtMs: Date.parse(doc.endsAt),
    timezone: doc.timezone,
    repeatUnit: doc.repeatUnit,
    repeatInterval: doc.repeatInterval,
    repeatEndsOn: doc.repeatEndsOn,
  };
}

/** A row as the API shows it, with whether it is on at `nowMs` and its occurrence in progress or next. */
export function presentWindow(row: MaintenanceWindowRow, nowMs: number): MaintenanceWindow {
  const doc = readDoc(row.doc);
  const [next] = occurrencesFrom(timesOf(doc), nowMs, 1);
  return {
    id: Number(row.id),
    name: doc.name,
    tags: doc.tags,
    startsAt: doc.startsAt,
    endsAt: doc.endsAt,
    repeatInterval: doc.repeatInterval,
    repeatUnit: doc.repeatUnit,
    repeatEndsAt: doc.repeatEndsOn === null ? null : `${doc.repeatEndsOn}T00:00:00.000Z`,
    timezone: doc.timezone,
    description: doc.description,
    pauseAllChecks: doc.pauseAllChecks,
    silenceAllAlerts: doc.silenceAllAlerts,
    silenceAlertsTags: doc.silenceAlertsTags,
    checkIds: doc.checkIds,
    groupIds: doc.groupIds,
    pauseRuns: doc.pauseRuns,
    silenceAlerts: doc.silenceAlerts,
    active: next !== undefined && next.startMs <= nowMs,
    nextOccurrence: next ? { startsAt: iso(next.startMs), endsAt: iso(next.endMs) } : null,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** Maintenance windows of one account (queries in MaintenanceWindowQueries). */
export class MaintenanceWindows {
  readonly #db: Kysely<Database>;
  readonly #rows: MaintenanceWindowQueries;
  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.#rows = new MaintenanceWindowQueries(db);
  }

  /**
   * Asserts the checks and groups a window names are the account's.
   * @throws HttpError 400 naming `checkIds` or `groupIds`, rule `exists`.
   */
  async #assertTargets(accountId: string, doc: MaintenanceWindowDoc): Promise<void> {
    const checks = new CheckQueries(this.#db);
    for (const id of doc.checkIds) {
      if (!(await checks.exists(accountId, id))) {
        throw badField('checkIds', `must be ids of checks of this account; ${id} is not`, 'exists');
      }
    }
    for (const id of doc.groupIds) await assertGroupExists(this.#db, accountId, id, 'groupIds');
  }

  /** Creates a window; returns its row. @throws HttpError 400 (windowDoc, targets). */
  async create(
    accountId: string,
    body: CreateMaintenanceWindow,
    nowMs: number,
  ): Promise<MaintenanceWindowRow> {
    const doc = windowDoc(null, body);
    await this.#assertTargets(accountId, doc);
    return this.#rows.insert(accountId, doc, nowMs);
  }

  /** @throws HttpError 404 when the window is not in the account. */
  async get(accountId: string, id: number): Promise<MaintenanceWindowRow> {
    const row = await this.#rows.get(accountId, id);
    if (!row) throw notFound('maintenance window', id);
    return row;
  }

  /** One page of the account's windows, oldest first. */
  list(accountId: string, limit: number, offset: number): Promise<MaintenanceWindowRow[]> {
    return this.#rows.list(accountId, limit, offset);
  }

  /** Applies the fields of `body`; returns the new row. @throws HttpError 404; 400 (windowDoc, targets). */
  async update(
    accountId: string,
    id: number,
    body: UpdateMaintenanceWindow,
    nowMs: number,
  ): Promise<MaintenanceWindowRow> {
    const before = await this.get(accountId, id);
    const doc = windowDoc(readDoc(before.doc), body);
    await this.#assertTargets(accountId, doc);
    const text = await this.#rows.update(accountId, id, doc, nowMs);
    return { ...before, name: doc.name, doc: text, updated_at: nowMs };
  }

  /** Deletes a window. @throws HttpError 404. */
  async delete(accountId: string, id: number): Promise<void> {
    if (!(await this.#rows.delete(accountId, id))) throw notFound('maintenance window', id);
  }
}

/** A check as a window sees it: its id, tags and group (with the group's tags when the caller has them). */
export type MaintenanceTarget = {
  id: string;
  tags?: readonly string[] | null;
  groupId?: number | null;
  /** The group's tags; read from the store when left out and a window needs them. */
  groupTags?: readonly string[] | null;
};

/** Whether two tag lists share a tag. */
function meets(a: readonly string[], b: readonly string[]): boolean {
  return a.some((tag) => b.includes(tag));
}

/**
 * The windows of accounts as of one instant, read once per account: what the scheduler asks for each due
 * check of a tick, and the alert recorder for each result. Build one per pass (its reads are not refreshed).
 */
export class MaintenanceLookup {
  readonly #db: Tx;
  readonly #atMs: number;
  readonly #windows = new Map<string, Promise<{ doc: MaintenanceWindowDoc; on: Occurrence }[]>>();
  readonly #groupTags = new Map<string, Promise<readonly string[]>>();

  /** `db`: the store or the caller's transaction; `atMs`: the instant asked about, epoch ms. */
  constructor(db: Tx, atMs: number) {
    this.#db = db;
    this.#atMs = atMs;
  }

  /** The account's windows that are on at the instant. */
  #activeOf(accountId: string) {
    let found = this.#windows.get(accountId);
    if (!found) {
      found = new MaintenanceWindowQueries(this.#db).list(accountId).then((rows) =>
        rows.flatMap((row) => {
          const doc = readDoc(row.doc);
          const on = occurrenceAt(timesOf(doc), this.#atMs);
          return on ? [{ doc, on }] : [];
        }),
      );
      this.#windows.set(accountId, found);
    }
    return found;
  }

  /** The tags of the check's group (none for a check without one). */
  async #tagsOfGroup(accountId: string, check: MaintenanceTarget): Promise<readonly string[]> {
    if (check.groupTags) return check.groupTags;
    if (check.groupId == null) return [];
    const key = `${accountId}:${check.groupId}`;
    let tags = this.#groupTags.get(key);
    if (!tags) {
      tags = new GroupQueries(this.#db as Kysely<Database>)
        .get(accountId, check.groupId)
        .then((row) => (row ? (readDoc(row.doc).tags ?? []) : []));
      this.#groupTags.set(key, tags);
    }
    return tags;
  }

  /** Whether `doc` covers the check: every check, by id, by group, or by a tag of the check or its group. */
  async covers(accountId: string, doc: MaintenanceWindowDoc, check: MaintenanceTarget): Promise<boolean> {
    if (doc.pauseAllChecks || doc.checkIds.includes(check.id)) return true;
    if (check.groupId != null && doc.groupIds.includes(check.groupId)) return true;
    if (doc.tags.length === 0) return false;
    if (meets(doc.tags, check.tags ?? [])) return true;
    return meets(doc.tags, await this.#tagsOfGroup(accountId, check));
  }

  /**
   * The windows on at the instant that pause the check's scheduled runs (`pauseRuns`, and the window covers
   * it), with their occurrence; empty when none does.
   */
  async pausing(accountId: string, check: MaintenanceTarget): Promise<{ name: string; endMs: number }[]> {
    const found: { name: string; endMs: number }[] = [];
    for (const { doc, on } of await this.#activeOf(accountId)) {
      if (doc.pauseRuns && (await this.covers(accountId, doc, check))) {
        found.push({ name: doc.name, endMs: on.endMs });
      }
    }
    return found;
  }

  /**
   * Whether a window on at the instant silences the check's alerts: `silenceAllAlerts`, or `silenceAlerts`
   * and the window covers it, or a tag of the check (or its group) is in `silenceAlertsTags` (whatever
   * `silenceAlerts` says).
   */
  async silences(accountId: string, check: MaintenanceTarget): Promise<boolean> {
    for (const { doc } of await this.#activeOf(accountId)) {
      if (doc.silenceAllAlerts) return true;
      if (doc.silenceAlerts && (await this.covers(accountId, doc, check))) return true;
      if (doc.silenceAlertsTags.length === 0) continue;
      if (meets(doc.silenceAlertsTags, check.tags ?? [])) return true;
      if (meets(doc.silenceAlertsTags, await this.#tagsOfGroup(accountId, check))) return true;
    }
    return false;
  }
}

/** An occurrence of a window, in progress or next, and which of the checks asked about it covers. */
export type CoveringOccurrence = {
  windowId: number;
  name: string;
  description: string | null;
  /** The occurrence, epoch ms. */
  startMs: number;
  endMs: number;
  /** The ids of the checks asked about that the window covers (its scope, not its silencing tags). */
  checkIds: string[];
};

/**
 * The occurrences in progress at `atMs`, or starting within `horizonMs` after it, of the account's windows
 * that cover one of `checks` (what a public status page shows for the services those checks watch); by
 * start. Reads every window of the account and the groups of the checks.
 */
export async function maintenanceCovering(
  db: Tx,
  accountId: string,
  checks: readonly MaintenanceTarget[],
  atMs: number,
  horizonMs: number,
): Promise<CoveringOccurrence[]> {
  if (checks.length === 0) return [];
  const lookup = new MaintenanceLookup(db, atMs);
  const found: CoveringOccurrence[] = [];
  for (const row of await new MaintenanceWindowQueries(db).list(accountId)) {
    const doc = readDoc(row.doc);
    const [next] = occurrencesFrom(timesOf(doc), atMs, 1);
    if (!next || next.startMs > atMs + horizonMs) continue;
    const checkIds: string[] = [];
    for (const check of checks) if (await lookup.covers(accountId, doc, check)) checkIds.push(check.id);
    if (checkIds.length === 0) continue;
    found.push({
      windowId: Number(row.id),
      name: doc.name,
      description: doc.description,
      startMs: next.startMs,
      endMs: next.endMs,
      checkIds,
    });
  }
  return found.sort((a, b) => a.startMs - b.startMs || a.windowId - b.windowId);
}

/**
 * Whether a window pauses the scheduled runs of `check` at `atMs` (docs/api.md, "Maintenance windows").
 * For many checks at once, use one MaintenanceLookup.
 */
export async function isPausedAt(db: Tx, accountId: string, check: MaintenanceTarget, atMs: number) {
  return (await new MaintenanceLookup(db, atMs).pausing(accountId, check)).length > 0;
}

/** Whether a window silences the alerts of `check` at `atMs` (docs/alerting.md, "Maintenance windows"). */
export function isSilencedAt(db: Tx, accountId: string, check: MaintenanceTarget, atMs: number) {
  return new MaintenanceLookup(db, atMs).silences(accountId, check);
}

declare module '../platform/store/schema.js' {
  /** The documents of this module's tables (see StoredDocuments). */
  interface StoredDocuments {
    maintenance_windows: MaintenanceWindowDoc;
  }
}
