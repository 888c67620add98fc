import { type Kysely, type Migration, sql } from 'kysely';

/**
 * `0013_custom_domain_verification`: a status page's `customDomain` serves the page only once it is verified
 * (docs/status-pages.md, "Custom domains").
 *
 * - `status_pages.custom_domain_verified_at`: when the domain was verified (epoch ms); null while it is
 *   pending. Every domain stored before this migration starts pending: it serves again once its owner adds the
 *   TXT record (the periodic refresh finds it), or when the operator's allow-list covers it.
 * - `status_pages.custom_domain_verified_by`: how: `TXT` (the `_outpost-challenge` record) or `ALLOW_LIST`
 *   (`OUTPOST_STATUS_PAGE_DOMAINS`).
 * - `status_pages.custom_domain_checked_at`, `custom_domain_problem`: when the domain was last checked and, while
 *   it is pending, why the check did not verify it (shown by the API).
 * - `status_pages_custom_domain_verified`: at most one page holds a domain verified, across every account
 *   (a partial unique index; pending claims of the same domain may be many).
 */
export const customDomainVerification: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('status_pages').addColumn('custom_domain_verified_at', 'bigint').execute();
    await db.schema.alterTable('status_pages').addColumn('custom_domain_verified_by', 'text').execute();
    await db.schema.alterTable('status_pages').addColumn('custom_domain_checked_at', 'bigint').execute();
    await db.schema.alterTable('status_pages').addColumn('custom_domain_problem', 'text').execute();
    await db.schema
      .createIndex('status_pages_custom_domain_verified')
      .unique()
      .on('status_pages')
      .column('custom_domain')
      .where(sql.ref('custom_domain_verified_at'), 'is not', null)
      .execute();
  },
};
