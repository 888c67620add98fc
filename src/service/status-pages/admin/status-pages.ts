import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Static } from '@sinclair/typebox';
import { hashApiKey } from '../../platform/http/auth.js';
import { badField, HttpError, notFound } from '../../platform/http/errors.js';
import { incidentsForServices } from '../incidents/incident-views.js';
import { iso } from '../../platform/http/pagination.js';
import type { CardBody, StatusPageBody, StatusPageSchema, ThemeColors } from './schema.js';
import { servicesById } from './status-page-services.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc, writeDoc } from '../../platform/store/schema.js';
import {
  type CustomDomainPolicy,
  type PagesChanged,
  serviceHostProblem,
  verificationRecord,
  verifyCustomDomain,
} from './custom-domains.js';
import { customDomainColumn, PageQueries, type PageRow, type PageRowWithDomain } from './store.js';

/** A status page as every operation answers it (see StatusPageSchema). */
export type StatusPageView = Static<typeof StatusPageSchema>;

/** A card as stored: services by id, so a renamed service shows its new name. */
type CardDoc = {
  id: string;
  name: string;
  serviceIds: string[];
  created_at: string;
  updated_at: string | null;
};
/** An access key of a private page: only its SHA-256 (hex, `hashApiKey`) and its mask are kept. */
export type KeyDoc = {
  id: string;
  keyHash: string;
  maskedKey: string;
  created_at: string;
  updated_at: string | null;
};
/** The stored document of a status page: its fields, cards by service id, hashed access keys. */
export type StatusPageDoc = Required<Omit<StatusPageBody, 'cards'>> & {
  id: string;
  cards: CardDoc[];
  keys: KeyDoc[];
};

/** At most this many access keys a private page holds at once (409 beyond). */
export const MAX_PAGE_KEYS = 50;

/** At most this many incidents, newest first, are shown per page. */
export const MAX_PAGE_INCIDENTS = 100;

const theme = (
  background: string,
  card: string,
  font: string,
  muted: string,
  border: string,
): ThemeColors['light'] => ({
  bodyBackgroundColor: background,
  headerBackgroundColor: card,
  headerFontColor: font,
  titleFontColor: font,
  bodyFontColor: font,
  bodyFontColorMuted: muted,
  navigationFontColor: font,
  linkFontColor: '#2563EB',
  cardBackgroundColor: card,
  borderColor: border,
  primaryButtonBackgroundColor: '#2563EB',
  primaryButtonFontColor: '#FFFFFF',
});

/** Colours of a page created without `themeColors`. */
export const DEFAULT_THEME_COLORS: ThemeColors = {
  light: theme('#F8FAFC', '#FFFFFF', '#0F172A', '#64748B', '#E2E8F0'),
  dark: theme('#0B1120', '#111827', '#F1F5F9', '#94A3B8', '#1F2937'),
};

/** A new access key: `spk_` + 24 random bytes in hex; the mask keeps the first 8 and last 4 characters. */
function newKey(nowIso: string): { doc: KeyDoc; key: string } {
  const key = `spk_${randomBytes(24).toString('hex')}`;
  const maskedKey = `${key.slice(0, 8)}${'*'.repeat(16)}${key.slice(-4)}`;
  return {
    key,
    doc: { id: randomUUID(), keyHash: hashApiKey(key), maskedKey, created_at: nowIso, updated_at: null },
  };
}

function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}

const urlTaken = (url: string) =>
  new HttpError(
    'OUTPOST_ERR_URL_TAKEN',
    `body.url ${url} is already used by another status page (a url is unique across the service: it is the page's public path /status/${url})`,
    {
      field: 'url',
      in: 'body',
      rule: 'unique',
    },
  );

/**
 * Status pages with cards of services, the incidents of those services and
 * access keys for private pages (docs/api.md, "Status page"), scoped to one account.
 * `url` is unique across the service (409): it is how visitors find a page. A `customDomain` may be set by
 * several pages, but serves only the one page that holds it verified (docs/status-pages.md, "Custom
 * domains"). Listed by `(created_at, id)` with an opaque cursor.
 */
export class StatusPages {
  readonly #db: Kysely<Database>;
  readonly #rows: PageQueries;
  readonly #domains: CustomDomainPolicy;
  readonly #changed: PagesChanged;
  /**
   * @param changed awaited after each create, update and delete of a page and each change of a custom
   *   domain's verification, before the operation returns (the routes pass the service's
   *   `CustomDomains.pagesChanged`, so the served domains follow at once).
   */
  constructor(db: Kysely<Database>, domains: CustomDomainPolicy, changed: PagesChanged) {
    this.#db = db;
    this.#rows = new PageQueries(db);
    this.#domains = domains;
    this.#changed = changed;
  }

  /**
   * Creates a page; a private one gets an access key, shown in clear (`keys[0].key`) only in this answer.
   * A `customDomain` starts pending, or verified at once when the allow-list covers it and no other page
   * holds it.
   * @throws HttpError 400 for an unknown card service or a `customDomain` that is one of the service's own
   *   host names; 409 when `url` is taken.
   */
  async create(accountId: string, body: StatusPageBody, now: Date): Promise<StatusPageView> {
    const nowIso = now.toISOString();
    const { cards: cardBodies, ...fields } = body;
    const made = fields.isPrivate ? newKey(nowIso) : undefined;
    this.#assertDomainAllowed(fields.customDomain ?? null);
    const row = await this.#write(body.url, async (trx) => {
      const id = randomUUID();
      const cards = await this.#cards(trx, accountId, cardBodies, [], undefined, nowIso);
      await assertUrlFree(new PageQueries(trx), body.url);
      const themeColors = fields.themeColors ?? DEFAULT_THEME_COLORS;
      // The create schema's defaults (statusPageBody(true)) have filled every optional field.
      const doc = { ...fields, themeColors, id, cards, keys: made ? [made.doc] : [] } as StatusPageDoc;
      const row: PageRow = {
        id,
        account_id: accountId,
        doc: writeDoc(doc),
        created_at: now.getTime(),
        updated_at: null,
      };
      await new PageQueries(trx).insert(row, body.url, doc.customDomain);
      return row;
    });
    await this.#activateAllowListed(accountId, row.id, now.getTime());
    await this.#changed();
    const stored = await this.#row(this.#rows, accountId, row.id);
    return withClearKey((await this.#present(accountId, [stored], now.getTime()))[0]!, made);
  }

  /** @throws HttpError 404 when the page is not in the account. */
  async get(accountId: string, id: string, nowMs: number): Promise<StatusPageView> {
    return (await this.#present(accountId, [await this.#row(this.#rows, accountId, id)], nowMs))[0]!;
  }

  /**
   * One page of status pages from the cursor on.
   * @throws HttpError 400 naming `nextId` for a cursor this service did not answer.
   */
  async list(
    accountId: string,
    query: { limit: number; nextId?: string },
    nowMs: number,
  ): Promise<{ entries: StatusPageView[]; nextId: string | null }> {
    const page = await this.#rows.page(accountId, query);
    return { entries: await this.#present(accountId, page.rows, nowMs), nextId: page.nextId };
  }

  /**
   * Replaces name, url and cards; other fields keep their stored values when
   * omitted. Cards named by `id` keep their id and created_at. Turning a page
   * private makes a key (shown in clear once); turning it public drops its keys. A changed `customDomain`
   * starts pending again (or verified by the allow-list); an unchanged one keeps its verification.
   * @throws HttpError 404, 400 (cards; a new `customDomain` that is one of the service's own host names),
   *   409 (`url` taken).
   */
  async update(accountId: string, id: string, body: StatusPageBody, now: Date): Promise<StatusPageView> {
    const nowIso = now.toISOString();
    const { cards: cardBodies, ...fields } = body;
    let made: { doc: KeyDoc; key: string } | undefined;
    let domainChanged = false;
    await this.#write(body.url, async (trx) => {
      const rows = new PageQueries(trx);
      const row = await this.#row(rows, accountId, id);
      const stored = readDoc(row.doc);
      const cards = await this.#cards(trx, accountId, cardBodies, stored.cards, id, nowIso);
      const doc: StatusPageDoc = { ...stored, ...fields, cards };
      // Checked when they change only: a page that shares its url with an older page of another account
      // (written when urls were unique per account) stays editable, and so does a page whose domain was
      // stored before the service's own host names were refused (it never serves).
      domainChanged = customDomainColumn(doc.customDomain) !== customDomainColumn(stored.customDomain);
      if (domainChanged) this.#assertDomainAllowed(doc.customDomain);
      if (doc.url !== stored.url) await assertUrlFree(rows, doc.url, id);
      made = doc.isPrivate && !stored.isPrivate ? newKey(nowIso) : undefined;
      doc.keys = doc.isPrivate ? [...stored.keys, ...(made ? [made.doc] : [])] : [];
      await rows.update(
        accountId,
        id,
        writeDoc(doc),
        body.url,
        doc.customDomain,
        now.getTime(),
        domainChanged,
      );
    });
    if (domainChanged) await this.#activateAllowListed(accountId, id, now.getTime());
    await this.#changed();
    const updated = await this.#row(this.#rows, accountId, id);
    return withClearKey((await this.#present(accountId, [updated], now.getTime()))[0]!, made);
  }

  /**
   * Checks the page's custom domain now (docs/api.md, "Status pages and services"): verified when the
   * allow-list covers it or its TXT record `_outpost-challenge.{domain}` holds the page's
   * `customDomainVerification.value`, unless another page holds the domain verified. A verified domain
   * serves the page before this answers. The DNS lookup takes at most the policy's lookup timeout (10 s by
   * default).
   * @returns the page, with `customDomainStatus` and, while pending, `customDomainProblem`.
   * @throws HttpError 404 when the page is not in the account; 400 (`id`, rule `customDomain`) when the
   *   page has no custom domain.
   */
  async verifyDomain(accountId: string, id: string, now: Date): Promise<StatusPageView> {
    const row = await this.#row(this.#rows, accountId, id);
    if (row.custom_domain === null) {
      throw new HttpError(
        'OUTPOST_ERR_VALIDATION',
        `status page ${id} has no customDomain to verify (set one with PUT /v1/status-pages/${id} first)`,
        { field: 'id', in: 'params', rule: 'customDomain' },
      );
    }
    await verifyCustomDomain(this.#db, this.#domains, row, now.getTime(), this.#changed);
    const checked = await this.#row(this.#rows, accountId, id);
    return (await this.#present(accountId, [checked], now.getTime()))[0]!;
  }

  /**
   * @throws HttpError 400 naming `customDomain` when `domain` is one of the service's own host names (its
   *   public URL's host, `localhost`): those answer with the web app and the API, never with a page.
   */
  #assertDomainAllowed(domain: string | null | undefined): void {
    if (domain && this.#domains.isServiceHost(domain)) {
      throw badField('customDomain', serviceHostProblem(domain), 'serviceHost');
    }
  }

  /** Verifies the page's new custom domain at once when the operator's allow-list covers it. */
  async #activateAllowListed(accountId: string, id: string, nowMs: number): Promise<void> {
    const row = await this.#rows.get(accountId, id);
    if (row?.custom_domain && this.#domains.isAllowListed(row.custom_domain)) {
      await verifyCustomDomain(this.#db, this.#domains, row, nowMs, this.#changed);
    }
  }

  /** @returns false when the page is not in the account. */
  async delete(accountId: string, id: string): Promise<boolean> {
    const deleted = await this.#rows.delete(accountId, id);
    if (deleted) await this.#changed();
    return deleted;
  }

  /**
   * Adds an access key to a private page.
   * @returns the key as the API shows it, with `key` in clear: the only time it is seen.
   * @throws HttpError 404 when the page is not in the account; 400 (`isPrivate`) when the page is public
   *   (keys open private pages only); 409 OUTPOST_ERR_TOO_MANY_KEYS when it holds MAX_PAGE_KEYS keys.
   */
  async addKey(accountId: string, id: string, now: Date): Promise<StatusPageView['keys'][number]> {
    return this.#db.transaction().execute(async (trx) => {
      const rows = new PageQueries(trx);
      const doc = readDoc((await this.#row(rows, accountId, id)).doc);
      if (!doc.isPrivate) {
        throw new HttpError(
          'OUTPOST_ERR_VALIDATION',
          `status page ${id} is public: access keys open private pages only (set isPrivate first)`,
          { field: 'id', in: 'params', rule: 'isPrivate' },
        );
      }
      if (doc.keys.length >= MAX_PAGE_KEYS) {
        throw new HttpError(
          'OUTPOST_ERR_TOO_MANY_KEYS',
          `status page ${id} already has ${MAX_PAGE_KEYS} access keys; delete one first`,
          { id },
        );
      }
      const made = newKey(now.toISOString());
      doc.keys = [...doc.keys, made.doc];
      await rows.replaceDoc(accountId, id, writeDoc(doc));
      const { keyHash: _hash, ...shown } = made.doc;
      return { ...shown, key: made.key };
    });
  }

  /**
   * Deletes an access key of a page: visitors it let in (their cookies, its feed tokens) lose access at
   * their next request.
   * @throws HttpError 404 when the page is not in the account or has no such key.
   */
  async deleteKey(accountId: string, id: string, keyId: string): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      const rows = new PageQueries(trx);
      const doc = readDoc((await this.#row(rows, accountId, id)).doc);
      const kept = doc.keys.filter((k) => k.id !== keyId);
      if (kept.length === doc.keys.length) throw notFound('status page key', keyId);
      await rows.replaceDoc(accountId, id, writeDoc({ ...doc, keys: kept }));
    });
  }

  /** @throws HttpError 404 when the page is not in the account. */
  async #row(rows: PageQueries, accountId: string, id: string): Promise<PageRowWithDomain> {
    const row = await rows.get(accountId, id);
    if (!row) throw notFound('status page', id);
    return row;
  }

  /**
   * Runs `work` in a transaction, answering 409 when it breaks the unique
   * index on (account, url): the check in {@link assertAddressFree} can race.
   */
  async #write<T>(url: string, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    try {
      return await this.#db.transaction().execute(work);
    } catch (err) {
      if (isUniqueViolation(err)) throw urlTaken(url);
      throw err;
    }
  }

  /**
   * Validates the request cards against the account's services and the page's existing cards: a card keeps an
   * existing one named by its `id`, else the first unclaimed one of its `name`; any other is new.
   */
  async #cards(
    db: Kysely<Database>,
    accountId: string,
    bodies: readonly CardBody[],
    existing: readonly CardDoc[],
    pageId: string | undefined,
    nowIso: string,
  ): Promise<CardDoc[]> {
    const known = await servicesById(
      db,
      accountId,
      bodies.flatMap((c) => (c.services ?? []).map((s) => s.id)),
    );
    const kept = new Set<string>();
    // A card sent without `id` (as the Terraform provider sends every card) keeps the existing card of its name
    // that no other card of the body names by id: an unchanged body changes nothing.
    const namedIds = new Set(bodies.flatMap((c) => (c.id === undefined ? [] : [c.id])));
    const sameName = (name: string) =>
      existing.find((c) => c.name === name && !kept.has(c.id) && !namedIds.has(c.id));
    return bodies.map((body, i) => {
      if (pageId !== undefined && body.statusPageId !== undefined && body.statusPageId !== pageId) {
        throw badField(`cards[${i}].statusPageId`, `must be the id of this status page (${pageId})`, 'const');
      }
      const serviceIds: string[] = [];
      (body.services ?? []).forEach((ref, j) => {
        const field = `cards[${i}].services[${j}].id`;
        if (!known.has(ref.id))
          throw badField(field, `is not a status-page service of this account: ${ref.id}`, 'exists');
        if (serviceIds.includes(ref.id))
          throw badField(field, `lists service ${ref.id} twice in this card`, 'uniqueItems');
        serviceIds.push(ref.id);
      });
      const before = body.id === undefined ? sameName(body.name) : existing.find((c) => c.id === body.id);
      if (before && kept.has(before.id))
        throw badField(`cards[${i}].id`, `names card ${before.id} twice`, 'uniqueItems');
      if (!before)
        return { id: randomUUID(), name: body.name, serviceIds, created_at: nowIso, updated_at: null };
      kept.add(before.id);
      const changed = before.name !== body.name || before.serviceIds.join() !== serviceIds.join();
      return { ...before, name: body.name, serviceIds, updated_at: changed ? nowIso : before.updated_at };
    });
  }

  /**
   * Rows → views: cards with their services, the incidents of those services, masked keys, and the custom
   * domain's verification.
   */
  async #present(
    accountId: string,
    rows: readonly PageRowWithDomain[],
    nowMs: number,
  ): Promise<StatusPageView[]> {
    const docs = rows.map((r) => readDoc(r.doc));
    const serviceIds = docs.flatMap((d) => d.cards.flatMap((c) => c.serviceIds));
    const services = await servicesById(this.#db, accountId, serviceIds);
    const incidents = await incidentsForServices(this.#db, accountId, [...services.keys()], nowMs);
    return rows.map((row, i) => {
      const { cards, keys, ...fields } = docs[i]!;
      const own = new Set(cards.flatMap((c) => c.serviceIds));
      return {
        ...fields,
        whiteLabel: false,
        accountId: row.account_id,
        created_at: iso(row.created_at)!,
        updated_at: iso(row.updated_at),
        cards: cards.map(({ serviceIds: ids, ...card }) => ({
          ...card,
          services: ids.flatMap((sid) => services.get(sid) ?? []),
        })),
        incidents: incidents
          .filter((x) => [...x.serviceIds].some((sid) => own.has(sid)))
          .slice(0, MAX_PAGE_INCIDENTS)
          .map((x) => x.incident),
        keys: keys.map(({ keyHash: _hash, ...key }) => key),
        ...this.#domainFields(row),
      };
    });
  }

  /** The custom-domain fields of a page's view (docs/api.md, "Status page"). */
  #domainFields(row: PageRowWithDomain) {
    const domain = row.custom_domain;
    return {
      customDomainStatus:
        domain === null ? null : row.custom_domain_verified_at === null ? 'PENDING' : 'VERIFIED',
      customDomainVerification: domain === null ? null : verificationRecord(this.#db, row.account_id, domain),
      customDomainVerifiedAt: iso(row.custom_domain_verified_at),
      customDomainVerifiedBy: row.custom_domain_verified_by,
      customDomainCheckedAt: iso(row.custom_domain_checked_at),
      customDomainProblem: row.custom_domain_problem,
    } as const;
  }
}

/**
 * @throws HttpError 409 when another page (not `selfId`) of any account uses `url`: it is how a visitor finds
 *   the page (`/status/{url}`).
 */
async function assertUrlFree(rows: PageQueries, url: string, selfId?: string): Promise<void> {
  if (await rows.urlTakenAnywhere(url, selfId)) throw urlTaken(url);
}

function withClearKey(view: StatusPageView, made: { doc: KeyDoc; key: string } | undefined): StatusPageView {
  if (!made) return view;
  return { ...view, keys: view.keys.map((k) => (k.id === made.doc.id ? { ...k, key: made.key } : k)) };
}

declare module '../../platform/store/schema.js' {
  /** The documents of this module's tables (see StoredDocuments). */
  interface StoredDocuments {
    status_pages: StatusPageDoc;
  }
}
