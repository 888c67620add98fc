import type { Kysely, Migration } from 'kysely';

/**
 * `0012_public_status_pages`: what public status pages need (docs/status-pages.md).
 *
 * - `status_pages.custom_domain`: the page's `customDomain`, as a column so a request's `Host` finds its page
 *   with one indexed read (filled from the documents by `backfillCustomDomains` at start-up; the store keeps
 *   it with the document from then on). `url` gets an index of its own: `/status/{url}` finds a page by it
 *   alone.
 * - `status_page_subscribers`: who asked for an incident's updates by email, to the whole page
 *   (`service_ids` null) or to chosen services (a JSON array of service ids). An address is mailed only once
 *   `confirmed_at` is set (double opt-in). One row per (page, address).
 * - `alert_notifications.subscriber_id`: a notification to a status-page subscriber goes through the same
 *   durable delivery as alert notifications (once per idempotency key, across restarts); its
 *   `channel_id` is 0 and `subscriber_id` names the subscriber.
 */
export const publicStatusPages: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('status_pages').addColumn('custom_domain', 'text').execute();
    await db.schema
      .createIndex('status_pages_custom_domain')
      .on('status_pages')
      .column('custom_domain')
      .execute();
    await db.schema.createIndex('status_pages_url').on('status_pages').column('url').execute();

    await db.schema
      .createTable('status_page_subscribers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('status_page_id', 'text', (c) => c.notNull())
      // Lower-cased address.
      .addColumn('email', 'text', (c) => c.notNull())
      // JSON array of status-page service ids; null: every service of the page.
      .addColumn('service_ids', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('confirmed_at', 'bigint')
      // When the last confirmation mail was queued (resending is rate-limited).
      .addColumn('confirmation_sent_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('status_page_subscribers_page_email')
      .unique()
      .on('status_page_subscribers')
      .columns(['status_page_id', 'email'])
      .execute();

    await db.schema.alterTable('alert_notifications').addColumn('subscriber_id', 'text').execute();
  },
};
