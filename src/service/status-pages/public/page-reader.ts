/**
 * Reads what a public status page shows (page-queries.ts) and makes its model (page-model.ts), and tells
 * the page's version without building it: what the caches of the public routes compare.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { maintenanceCovering } from '../../maintenance-windows/index.js';
import type { Database } from '../../platform/store/database.js';
import {
  countingChecks,
  groupIdsOf,
  type LinkedCheck,
  linkedChecksByService,
  pageModel,
  pageServiceIds,
  runsByService,
  stripChecks,
  stripStart,
  triggerChecks,
} from './page-model.js';
import {
  alertStates,
  alertStatesStamp,
  checksMentioningServices,
  checksSignature,
  groupFlags,
  pageServices,
  pageStamps,
  readIncidents,
} from './page-queries.js';
import { type CheckDayCounts, StripResultQueries } from './result-queries.js';
import type { PublicMaintenance, PublicPage, StatusPageModel } from './types.js';
import { DAY_MS, utcDate, utcDayStart } from './uptime.js';

/** The checks of an account with an incident trigger, by service id, as of the account's checks signature. */
type TriggerIndex = { signature: string; byService: Map<string, LinkedCheck[]> };

/** Accounts whose trigger index a reader keeps (the oldest read is dropped past it). */
const MAX_TRIGGER_INDEXES = 500;

/** How far ahead a page shows a maintenance window's next occurrence: a week. */
const MAINTENANCE_HORIZON_MS = 7 * 86_400_000;

/** Checks whose past strip days a reader keeps (the oldest read is dropped past it). */
const MAX_PAST_DAYS = 5000;

/** One check's run counts of the strip's days before today, as read on the UTC day `todayStartMs`. */
type PastDays = { todayStartMs: number; counts: CheckDayCounts[] };

/**
 * The store side of public status pages for one service: a page's version and its model. It keeps, per
 * account (at most 500), the checks whose `triggerIncident` names a service, read again only when the
 * account's checks or check groups changed (their signature, one aggregate query per call). The public
 * routes make one reader per service (routes.ts).
 */
export class PageReader {
  readonly #db: Kysely<Database>;
  readonly #results: StripResultQueries;
  readonly #triggerIndexes = new Map<string, TriggerIndex>();
  readonly #pastDays = new Map<string, PastDays>();

  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.#results = new StripResultQueries(db);
  }

  /**
   * A version of everything a page shows, without building it: the page row, its services, their incidents
   * and updates (counts and newest `created_at`/`updated_at`), the account's checks and check groups (a
   * changed `triggerIncident`), the alert states of the checks linked to its services, the newest run of
   * each linked, not-paused check (the strip counts runs), and the current UTC day (the strip moves at
   * midnight). One set of aggregate queries; the caches compare it to decide
   * whether a rendering is still good. Time alone also changes a page with an open incident (see
   * `modelFreshUntil`, page-model.ts).
   * @returns a short hex hash (24 digits). Throws only when the store does.
   */
  async version(page: PublicPage, nowMs: number): Promise<string> {
    const ids = pageServiceIds(page);
    const accountId = page.accountId;
    const parts: unknown[] = [page.id, page.updatedAtMs, utcDate(nowMs), ids.length];
    if (ids.length > 0) {
      const [[services, links, incidents, updates], index] = await Promise.all([
        pageStamps(this.#db, accountId, ids),
        this.#triggerIndex(accountId),
      ]);
      parts.push(services, links, incidents, updates, index.signature);
      const checkIds = countingChecks(index.byService, ids).map((c) => c.checkId);
      const runIds = stripChecks(index.byService, ids).map((c) => c.checkId);
      const [states, runs] = await Promise.all([
        checkIds.length > 0 ? alertStatesStamp(this.#db, checkIds) : null,
        this.#results.latestRuns(runIds),
      ]);
      parts.push(states, runs, await this.#maintenance(accountId, index, ids, nowMs));
    }
    return createHash('sha256')
      .update(JSON.stringify(parts, (_k, v) => (typeof v === 'bigint' ? String(v) : v)))
      .digest('hex')
      .slice(0, 24);
  }

  /**
   * The model of `page` at `nowMs` (page-model.ts, `pageModel`), with its {@link version}.
   * @throws only when the store does.
   */
  async model(page: PublicPage, nowMs: number): Promise<StatusPageModel> {
    const ids = pageServiceIds(page);
    const accountId = page.accountId;
    const [version, services, incidents, index] = await Promise.all([
      this.version(page, nowMs),
      pageServices(this.#db, accountId, ids),
      readIncidents(this.#db, accountId, ids),
      this.#triggerIndex(accountId),
    ]);
    const checks = countingChecks(index.byService, ids);
    const runChecks = stripChecks(index.byService, ids);
    const [states, counts] = await Promise.all([
      alertStates(
        this.#db,
        checks.map((c) => c.checkId),
      ),
      this.#stripCounts(
        runChecks.map((c) => c.checkId),
        nowMs,
      ),
    ]);
    const runs = runsByService(runChecks, counts, nowMs);
    const maintenance = await this.#maintenance(accountId, index, ids, nowMs);
    return pageModel(
      page,
      { version, services, incidents, checks, alertStates: states, runs, maintenance },
      nowMs,
    );
  }

  /**
   * The maintenance windows in progress or starting within a week that cover a linked, not-paused check of
   * the services `serviceIds` (maintenance-windows module), with the services they cover.
   */
  async #maintenance(
    accountId: string,
    index: TriggerIndex,
    serviceIds: readonly string[],
    nowMs: number,
  ): Promise<PublicMaintenance[]> {
    const linked = stripChecks(index.byService, serviceIds);
    const targets = linked.map((c) => ({ id: c.checkId, tags: c.tags ?? [], groupId: c.groupId ?? null }));
    const found = await maintenanceCovering(this.#db, accountId, targets, nowMs, MAINTENANCE_HORIZON_MS);
    return found.map((window) => ({
      name: window.name,
      description: window.description,
      startsAtMs: window.startMs,
      endsAtMs: window.endMs,
      active: window.startMs <= nowMs,
      serviceIds: [
        ...new Set(linked.filter((c) => window.checkIds.includes(c.checkId)).map((c) => c.serviceId)),
      ],
    }));
  }

  /**
   * The run counts of `checkIds` over the strip's 90 days (result-queries.ts): today's read at each call;
   * the days before today read once per check and UTC day, then kept (they change only when a result
   * arrives late or retention removes old ones; both show the next day).
   */
  async #stripCounts(checkIds: readonly string[], nowMs: number): Promise<CheckDayCounts[]> {
    if (checkIds.length === 0) return [];
    const todayStartMs = utcDayStart(nowMs);
    const missing = checkIds.filter((id) => this.#pastDays.get(id)?.todayStartMs !== todayStartMs);
    const [past, today] = await Promise.all([
      this.#results.dailyCounts(missing, stripStart(nowMs), todayStartMs),
      this.#results.dailyCounts(checkIds, todayStartMs, todayStartMs + DAY_MS),
    ]);
    for (const id of missing) {
      if (this.#pastDays.size >= MAX_PAST_DAYS) this.#pastDays.delete(this.#pastDays.keys().next().value!);
      this.#pastDays.set(id, { todayStartMs, counts: past.filter((c) => c.checkId === id) });
    }
    return [...checkIds.flatMap((id) => this.#pastDays.get(id)?.counts ?? []), ...today];
  }

  /**
   * The account's checks whose `triggerIncident` names a service, by service id: the kept index while the
   * account's checks signature is unchanged, else read again (the checks, then their groups).
   */
  async #triggerIndex(accountId: string): Promise<TriggerIndex> {
    const signature = await checksSignature(this.#db, accountId);
    const known = this.#triggerIndexes.get(accountId);
    if (known?.signature === signature) return known;
    const checks = triggerChecks(await checksMentioningServices(this.#db, accountId));
    const groups = await groupFlags(this.#db, accountId, groupIdsOf(checks));
    const index = { signature, byService: linkedChecksByService(checks, groups) };
    if (this.#triggerIndexes.size >= MAX_TRIGGER_INDEXES) {
      this.#triggerIndexes.delete(this.#triggerIndexes.keys().next().value!);
    }
    this.#triggerIndexes.set(accountId, index);
    return index;
  }
}

/**
 * The model of `page` at `nowMs`, read with a reader of its own (nothing kept across calls): for one-off
 * builds outside the routes (tests, tools).
 * @throws only when the store does.
 */
export function buildPageModel(
  db: Kysely<Database>,
  page: PublicPage,
  nowMs: number,
): Promise<StatusPageModel> {
  return new PageReader(db).model(page, nowMs);
}
