import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { badField, notFound } from '../platform/http/errors.js';
import { iso } from '../platform/http/pagination.js';
import type { Database } from '../platform/store/database.js';
import { readDoc } from '../platform/store/schema.js';
import type { CreateDashboard, Dashboard, UpdateDashboard } from './schema.js';
import { DashboardQueries, type DashboardRow } from './store.js';

/** The stored document of a dashboard: its fields as answered, without ids, keys and times. */
export type DashboardDoc = Omit<Dashboard, 'id' | 'dashboardId' | 'keys' | 'created_at' | 'updated_at'>;

/** The hosted API's defaults (docs/api.md, "Dashboards"): what a field left out of a create becomes. */
export const DASHBOARD_DEFAULTS: Omit<DashboardDoc, 'header'> = {
  customUrl: null,
  customDomain: null,
  logo: null,
  favicon: null,
  link: null,
  description: null,
  width: 'FULL',
  refreshRate: 60,
  paginate: true,
  paginationRate: 60,
  sortByStatus: false,
  checksPerPage: 15,
  useTagsAndOperator: false,
  hideTags: false,
  enableIncidents: false,
  expandChecks: false,
  tags: [],
  showHeader: true,
  showCheckRunLinks: false,
  showGroupNames: true,
  customCSS: '',
  isPrivate: false,
  showP95: true,
  showP99: true,
};

/** A new `dashboardId`: 64 random bits, hex (16 characters). */
function newDashboardId(): string {
  return randomBytes(8).toString('hex');
}

/**
 * `doc` with a body's fields applied over it: a field left out keeps its value; null becomes the field's
 * default where the answer has no null (`checksPerPage`, `useTagsAndOperator`, `customCSS`); an empty
 * `customUrl`, `customDomain` or link is none (null).
 */
function applied(
  doc: Omit<DashboardDoc, 'header'> & { header?: string },
  body: UpdateDashboard,
): DashboardDoc {
  const next = { ...doc } as Record<string, unknown>;
  for (const [field, value] of Object.entries(body)) {
    if (value === undefined) continue;
    next[field] = value;
  }
  const out = next as DashboardDoc;
  out.checksPerPage ??= DASHBOARD_DEFAULTS.checksPerPage;
  out.useTagsAndOperator ??= DASHBOARD_DEFAULTS.useTagsAndOperator;
  out.customCSS ??= '';
  for (const field of ['customUrl', 'customDomain', 'logo', 'favicon', 'link'] as const) {
    if (out[field] === '') out[field] = null;
  }
  return out;
}

/** A row as the API shows it (`keys` always empty: a private dashboard has none, it is not served). */
export function presentDashboard(row: DashboardRow): Dashboard {
  return {
    id: Number(row.id),
    dashboardId: row.dashboard_id,
    ...readDoc(row.doc),
    keys: [],
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at),
  };
}

/**
 * The dashboards of `/v1/dashboards` (docs/api.md, "Dashboards"): create, list, read, update and delete, each
 * scoped to one account. A `customUrl` is unique across the service (it is the public path
 * `/dashboards/{customUrl}`), compared without regard to case.
 */
export class Dashboards {
  readonly #rows: DashboardQueries;
  constructor(db: Kysely<Database>) {
    this.#rows = new DashboardQueries(db);
  }

  /**
   * Creates a dashboard from `body` and the defaults.
   * @throws HttpError 400 naming `customUrl` when another dashboard (of any account) has it.
   */
  async create(accountId: string, body: CreateDashboard, nowMs: number): Promise<Dashboard> {
    const doc = applied({ ...DASHBOARD_DEFAULTS }, body);
    await this.#assertUrlFree(doc.customUrl, null);
    const row = await this.#rows.insert(accountId, newDashboardId(), doc, nowMs);
    return presentDashboard(row);
  }

  /** One page of the account's dashboards, oldest first. */
  async list(accountId: string, limit: number, offset: number): Promise<Dashboard[]> {
    return (await this.#rows.list(accountId, limit, offset)).map(presentDashboard);
  }

  /** @throws HttpError 404 when the account has no dashboard `dashboardId`. */
  async get(accountId: string, dashboardId: string): Promise<Dashboard> {
    return presentDashboard(await this.#row(accountId, dashboardId));
  }

  /**
   * Applies `body` (fields left out keep their value).
   * @throws HttpError 404 unknown dashboard; 400 naming `customUrl` when another dashboard has it.
   */
  async update(
    accountId: string,
    dashboardId: string,
    body: UpdateDashboard,
    nowMs: number,
  ): Promise<Dashboard> {
    const before = await this.#row(accountId, dashboardId);
    const doc = applied(readDoc(before.doc), body);
    await this.#assertUrlFree(doc.customUrl, before.id);
    await this.#rows.update(before.id, doc, nowMs);
    return presentDashboard(await this.#row(accountId, dashboardId));
  }

  /** @throws HttpError 404 when the account has no dashboard `dashboardId`. */
  async delete(accountId: string, dashboardId: string): Promise<void> {
    if (!(await this.#rows.delete(accountId, dashboardId))) throw notFound('dashboard', dashboardId);
  }

  async #row(accountId: string, dashboardId: string): Promise<DashboardRow> {
    const row = await this.#rows.get(accountId, dashboardId);
    if (!row) throw notFound('dashboard', dashboardId);
    return row;
  }

  /** @throws HttpError 400 naming `customUrl` when a dashboard other than `ownId` has `url`. */
  async #assertUrlFree(url: string | null, ownId: number | null): Promise<void> {
    if (url === null) return;
    const holder = await this.#rows.idOfUrl(url.toLowerCase());
    if (holder !== undefined && holder !== ownId) {
      throw badField(
        'customUrl',
        `${url} is already used by another dashboard (a customUrl is unique across the service: it is the public path /dashboards/${url})`,
        'unique',
      );
    }
  }
}

declare module '../platform/store/schema.js' {
  /** The documents of this module's tables (see StoredDocuments). */
  interface StoredDocuments {
    dashboards: DashboardDoc;
  }
}
