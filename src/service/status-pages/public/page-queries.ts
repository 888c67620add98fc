/**
 * The store reads of public status pages (docs/status-pages.md): finding a page by its url or custom
 * domain, what its model is built from, the aggregates its version hashes, and the incident facts of the
 * Statuspage-compatible JSON. Every query of `public/` is here; none writes. Times are epoch ms.
 */
import { type Kysely, sql } from 'kysely';
import type { AlertState } from '../../alerting/index.js';
import type { CheckDoc } from '../../checks/index.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc } from '../../platform/store/schema.js';
import { customDomainColumn, type PageRow } from '../admin/store.js';
import type { IncidentDoc, UpdateDoc } from '../incidents/incident-views.js';
import type { PublicPage } from './types.js';

// --- Pages -----------------------------------------------------------------------------------------

/** What a public path segment or Host header may hold before it is looked up (longer is never a page). */
const MAX_URL_LENGTH = 63;
const MAX_HOST_LENGTH = 253;

const COLUMNS = ['id', 'account_id', 'doc', 'created_at', 'updated_at'] as const;

function toPublicPage(row: PageRow & { url: string | null }): PublicPage {
  const doc = readDoc(row.doc);
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url ?? doc.url,
    doc,
    updatedAtMs: row.updated_at ?? row.created_at,
  };
}

/**
 * The status page whose `url` is `url` (the path segment of `/status/{url}`), of any account. A url is
 * unique across the service since issue 14; where older rows share one (it used to be unique per account
 * only), the oldest page (by `created_at`, then id) is the one shown.
 * @returns null when no page has it (or `url` is empty or longer than 63 characters).
 */
export async function findPageByUrl(db: Kysely<Database>, url: string): Promise<PublicPage | null> {
  if (url === '' || url.length > MAX_URL_LENGTH) return null;
  const row = await db
    .selectFrom('status_pages')
    .select([...COLUMNS, 'url'])
    .where('url', '=', url)
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row ? toPublicPage(row) : null;
}

/**
 * The status page that holds `host` (a request's Host header without its port; compared without case) as
 * its verified `customDomain`, of any account: at most one page does (a unique index). A page whose domain
 * is pending is never found by it (docs/status-pages.md, "Custom domains").
 * @returns null when no page holds it verified (or `host` is longer than 253 characters).
 */
export async function findPageByHost(db: Kysely<Database>, host: string): Promise<PublicPage | null> {
  const domain = customDomainColumn(host);
  if (domain === null || domain.length > MAX_HOST_LENGTH) return null;
  const row = await db
    .selectFrom('status_pages')
    .select([...COLUMNS, 'url'])
    .where('custom_domain', '=', domain)
    .where('custom_domain_verified_at', 'is not', null)
    .limit(1)
    .executeTakeFirst();
  return row ? toPublicPage(row) : null;
}

/**
 * Every verified custom domain, lower-cased, with the `url` of the page that holds it (one page at most per
 * domain): what the synchronous custom-domain URL rewrite (`CustomDomains`, access.ts) keeps in memory.
 * Pending domains are left out: a request to one gets the service (the web app), not a page.
 */
export async function customDomainUrls(db: Kysely<Database>): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('status_pages')
    .select(['custom_domain', 'url'])
    .where('custom_domain', 'is not', null)
    .where('custom_domain_verified_at', 'is not', null)
    .where('url', 'is not', null)
    .execute();
  const map = new Map<string, string>();
  for (const row of rows) map.set(row.custom_domain!, row.url!);
  return map;
}

// --- Services --------------------------------------------------------------------------------------

/** A status-page service as a page shows it: its name and row times. */
export type ServiceRowOfPage = { id: string; name: string; created_at: number; updated_at: number | null };

/** The account's services among `ids` (any order); none for no ids. */
export function pageServices(
  db: Kysely<Database>,
  accountId: string,
  ids: readonly string[],
): Promise<ServiceRowOfPage[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('status_page_services')
    .select(['id', 'name', 'created_at', 'updated_at'])
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .execute();
}

// --- Incidents -------------------------------------------------------------------------------------

/** An incident of a page as read from the store, before it is shown (updates newest first by `seq`). */
export type StoredIncident = {
  id: string;
  doc: IncidentDoc;
  createdAtMs: number;
  updatedAtMs: number;
  /** Every service the incident is linked to among those asked for. */
  serviceIds: string[];
  updates: { doc: UpdateDoc; createdAtMs: number; updatedAtMs: number }[];
};

/** The incidents linked to any of `serviceIds` with their links and updates (three queries). */
export async function readIncidents(
  db: Kysely<Database>,
  accountId: string,
  serviceIds: readonly string[],
): Promise<StoredIncident[]> {
  if (serviceIds.length === 0) return [];
  const links = await db
    .selectFrom('incident_services')
    .select(['incident_id', 'service_id'])
    .where('account_id', '=', accountId)
    .where('service_id', 'in', serviceIds)
    .execute();
  const ids = [...new Set(links.map((l) => l.incident_id))];
  if (ids.length === 0) return [];
  const [rows, updates] = await Promise.all([
    db
      .selectFrom('incidents')
      .select(['id', 'doc', 'created_at', 'updated_at'])
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .execute(),
    db
      .selectFrom('incident_updates')
      .select(['incident_id', 'doc', 'created_at', 'updated_at'])
      .where('account_id', '=', accountId)
      .where('incident_id', 'in', ids)
      .orderBy('seq', 'desc')
      .execute(),
  ]);
  const byId = new Map<string, StoredIncident>();
  for (const row of rows) {
    byId.set(row.id, {
      id: row.id,
      doc: readDoc(row.doc),
      createdAtMs: Number(row.created_at),
      updatedAtMs: Number(row.updated_at ?? row.created_at),
      serviceIds: [],
      updates: [],
    });
  }
  for (const link of links) byId.get(link.incident_id)?.serviceIds.push(link.service_id);
  for (const u of updates) {
    byId.get(u.incident_id)?.updates.push({
      doc: readDoc(u.doc),
      createdAtMs: Number(u.created_at),
      updatedAtMs: Number(u.updated_at ?? u.created_at),
    });
  }
  return [...byId.values()];
}

/** What the store holds of an incident beyond the model: creation time, the planned window, updates' facts. */
export type IncidentFacts = {
  createdAtMs: number;
  /** The incident's `startedAt`; null when it has not started (a maintenance not yet begun). */
  startedAtMs: number | null;
  /** The incident's `stoppedAt`, also when still ahead (a maintenance window's planned end). */
  stoppedAtMs: number | null;
  updates: Map<string, { createdAtMs: number; updatedAtMs: number; notifySubscribers: boolean }>;
};

/**
 * The store's facts of incidents `ids` of the account (one query for the incidents, one for their updates).
 * @returns by incident id; incidents not found are absent. Throws only when the store does.
 */
export async function readIncidentFacts(
  db: Kysely<Database>,
  accountId: string,
  ids: readonly string[],
): Promise<Map<string, IncidentFacts>> {
  const facts = new Map<string, IncidentFacts>();
  if (ids.length === 0) return facts;
  const [rows, updates] = await Promise.all([
    db
      .selectFrom('incidents')
      .select(['id', 'doc', 'created_at'])
      .where('account_id', '=', accountId)
      .where('id', 'in', [...ids])
      .execute(),
    db
      .selectFrom('incident_updates')
      .select(['incident_id', 'doc', 'created_at', 'updated_at'])
      .where('account_id', '=', accountId)
      .where('incident_id', 'in', [...ids])
      .execute(),
  ]);
  const parse = (iso: string | null) => (iso === null ? null : Date.parse(iso));
  for (const row of rows) {
    const doc = readDoc(row.doc) as IncidentDoc;
    facts.set(row.id, {
      createdAtMs: Number(row.created_at),
      startedAtMs: parse(doc.startedAt),
      stoppedAtMs: parse(doc.stoppedAt),
      updates: new Map(),
    });
  }
  for (const u of updates) {
    const doc = readDoc(u.doc) as UpdateDoc;
    facts.get(u.incident_id)?.updates.set(doc.id, {
      createdAtMs: Number(u.created_at),
      updatedAtMs: Number(u.updated_at ?? u.created_at),
      notifySubscribers: doc.notifySubscribers === true,
    });
  }
  return facts;
}

// --- Checks with an incident trigger ---------------------------------------------------------------

/** A check of the account whose document may carry a `triggerIncident` naming a service. */
export type TriggerCheckRow = { id: string; activated: boolean; doc: CheckDoc };

/**
 * The account's checks whose document mentions `"serviceId"` (a narrowing LIKE on the documents, then
 * parsed by the caller: portable, no JSON SQL).
 */
export async function checksMentioningServices(
  db: Kysely<Database>,
  accountId: string,
): Promise<TriggerCheckRow[]> {
  const rows = await db
    .selectFrom('checks')
    .select(['id', 'activated', 'doc'])
    .where('account_id', '=', accountId)
    .where(sql<boolean>`doc like ${'%"serviceId"%'}`)
    .execute();
  return rows.map((row) => ({ id: row.id, activated: Boolean(row.activated), doc: readDoc(row.doc) }));
}

/** Whether a check group runs its checks (`activated`, default true) and whether it is muted (default false). */
export type GroupFlags = { activated: boolean; muted: boolean };

/** The flags of the account's check groups among `groupIds`, by id; none for no ids. */
export async function groupFlags(
  db: Kysely<Database>,
  accountId: string,
  groupIds: readonly number[],
): Promise<Map<number, GroupFlags>> {
  const groups = new Map<number, GroupFlags>();
  if (groupIds.length === 0) return groups;
  const rows = await db
    .selectFrom('check_groups')
    .select(['id', 'doc'])
    .where('account_id', '=', accountId)
    .where('id', 'in', [...groupIds])
    .execute();
  for (const g of rows) {
    const doc = readDoc(g.doc) as { activated?: boolean; muted?: boolean };
    groups.set(Number(g.id), { activated: doc.activated !== false, muted: doc.muted === true });
  }
  return groups;
}

/** The alert states of `checkIds` (parsed), by check id; checks never judged are absent. */
export async function alertStates(
  db: Kysely<Database>,
  checkIds: readonly string[],
): Promise<Map<string, AlertState>> {
  const states = new Map<string, AlertState>();
  if (checkIds.length === 0) return states;
  const rows = await db
    .selectFrom('alert_states')
    .select(['check_id', 'doc'])
    .where('check_id', 'in', [...checkIds])
    .execute();
  for (const row of rows) states.set(row.check_id, JSON.parse(row.doc) as AlertState);
  return states;
}

// --- Versions --------------------------------------------------------------------------------------

/** Tables whose rows carry `account_id`, `created_at` and `updated_at`. */
type StampedTable = 'checks' | 'check_groups' | 'status_page_services' | 'incidents' | 'incident_updates';

/** How many rows a set has and its newest `created_at` and `updated_at` (`n`, `c`, `u`): it changes with any write. */
export type RowsStamp = { n: unknown; c: unknown; u: unknown } | undefined;

/**
 * The stamp of the account's rows of `table`, or of those whose `column` is among `values` (a list or a
 * sub-query): one aggregate query.
 */
function stampOf(
  db: Kysely<Database>,
  table: StampedTable,
  accountId: string,
  where?: { column: 'id' | 'incident_id'; values: readonly string[] | LinkedIncidentIds },
): Promise<RowsStamp> {
  let query = db
    .selectFrom(table)
    .select((eb) => [
      eb.fn.countAll().as('n'),
      eb.fn.max('created_at').as('c'),
      eb.fn.max('updated_at').as('u'),
    ])
    .where('account_id', '=', accountId);
  if (where) query = query.where(where.column, 'in', where.values);
  return query.executeTakeFirst();
}

/** The sub-query of the account's incidents linked to any of a page's services. */
type LinkedIncidentIds = ReturnType<typeof linkedIncidentIds>;

function linkedIncidentIds(db: Kysely<Database>, accountId: string, serviceIds: readonly string[]) {
  return db
    .selectFrom('incident_services')
    .select('incident_id')
    .where('account_id', '=', accountId)
    .where('service_id', 'in', serviceIds);
}

/**
 * A signature of every check and check group of the account (`{n}/{c}/{u}|{n}/{c}/{u}` of their stamps): it
 * changes when any is created, changed or deleted.
 */
export async function checksSignature(db: Kysely<Database>, accountId: string): Promise<string> {
  const [checks, groups] = await Promise.all([
    stampOf(db, 'checks', accountId),
    stampOf(db, 'check_groups', accountId),
  ]);
  return `${checks?.n}/${checks?.c}/${checks?.u}|${groups?.n}/${groups?.c}/${groups?.u}`;
}

/**
 * The stamps of what a page shows of `serviceIds` (at least one): the services, the count of their incident
 * links, the linked incidents and those incidents' updates, in that order (four aggregate queries).
 */
export function pageStamps(
  db: Kysely<Database>,
  accountId: string,
  serviceIds: readonly string[],
): Promise<[RowsStamp, { n: unknown } | undefined, RowsStamp, RowsStamp]> {
  const linked = linkedIncidentIds(db, accountId, serviceIds);
  return Promise.all([
    stampOf(db, 'status_page_services', accountId, { column: 'id', values: serviceIds }),
    db
      .selectFrom('incident_services')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('account_id', '=', accountId)
      .where('service_id', 'in', serviceIds)
      .executeTakeFirst(),
    stampOf(db, 'incidents', accountId, { column: 'id', values: linked }),
    stampOf(db, 'incident_updates', accountId, { column: 'incident_id', values: linked }),
  ]);
}

/** How many alert states `checkIds` (at least one) have and the newest `updated_at` (`n`, `u`). */
export function alertStatesStamp(
  db: Kysely<Database>,
  checkIds: readonly string[],
): Promise<{ n: unknown; u: unknown } | undefined> {
  return db
    .selectFrom('alert_states')
    .select((eb) => [eb.fn.countAll().as('n'), eb.fn.max('updated_at').as('u')])
    .where('check_id', 'in', [...checkIds])
    .executeTakeFirst();
}
