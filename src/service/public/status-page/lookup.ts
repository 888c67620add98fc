import type { Kysely } from 'kysely';
import { customDomainColumn, type PageRow } from '../../resources/status-pages/store.js';
import type { Database } from '../../store/database.js';
import { readDoc } from '../../store/schema.js';
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
 * The status page whose `customDomain` is `host` (a request's Host header without its port; compared
 * without case), of any account; the oldest one where older rows share a domain.
 * @returns null when no page has it.
 */
export async function findPageByHost(db: Kysely<Database>, host: string): Promise<PublicPage | null> {
  const domain = customDomainColumn(host);
  if (domain === null || domain.length > MAX_HOST_LENGTH) return null;
  const row = await db
    .selectFrom('status_pages')
    .select([...COLUMNS, 'url'])
    .where('custom_domain', '=', domain)
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row ? toPublicPage(row) : null;
}

/**
 * Every custom domain in use, lower-cased, with the `url` of the page it shows (the oldest page where
 * older rows share a domain): what the synchronous custom-domain URL rewrite (`CustomDomains`, access.ts)
 * keeps in memory.
 */
export async function customDomainUrls(db: Kysely<Database>): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('status_pages')
    .select(['custom_domain', 'url'])
    .where('custom_domain', 'is not', null)
    .where('url', 'is not', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  const map = new Map<string, string>();
  // Newest first, so the oldest page of a shared domain is set last and wins.
  for (const row of rows) map.set(row.custom_domain!, row.url!);
  return map;
}
