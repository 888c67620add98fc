import type { Kysely } from 'kysely';
import { customDomainColumn, type PageRow } from '../admin/store.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc } from '../../platform/store/schema.js';
import type { PublicPage } from './types.js';

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
 * @returns null when no page has it.
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
 * @returns null when no page holds it verified.
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
