import type { Kysely, Migration } from 'kysely';

/**
 * `0004_status_pages`: a status page's unique `url` per account, `(account_id, created_at, id)`
 * list order of pages, services and incidents, the incidents ↔ services link, update sequence numbers.
 */
export const statusPages: Migration = {
  async up(db: Kysely<unknown>) {
    // Status pages: `url` (the subdomain) is unique per account; pages, services and
    // incidents are listed by (created_at, id).
    await db.schema.alterTable('status_pages').addColumn('url', 'text').execute();
    await db.schema
      .createIndex('status_pages_account_url')
      .unique()
      .on('status_pages')
      .columns(['account_id', 'url'])
      .execute();
    for (const table of ['status_pages', 'status_page_services', 'incidents']) {
      await db.schema
        .createIndex(`${table}_account_order`)
        .on(table)
        .columns(['account_id', 'created_at', 'id'])
        .execute();
    }
    // Which status-page services an incident affects; its pages show it.
    await db.schema
      .createTable('incident_services')
      .addColumn('incident_id', 'text', (c) => c.notNull().references('incidents.id').onDelete('cascade'))
      .addColumn('service_id', 'text', (c) =>
        c.notNull().references('status_page_services.id').onDelete('cascade'),
      )
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('incident_services_pk', ['incident_id', 'service_id'])
      .execute();
    await db.schema
      .createIndex('incident_services_service')
      .on('incident_services')
      .column('service_id')
      .execute();
    // Updates are numbered per incident so "latest" is exact within one millisecond.
    await db.schema.alterTable('incident_updates').addColumn('seq', 'integer').execute();
    await db.schema
      .createIndex('incident_updates_incident_seq')
      .unique()
      .on('incident_updates')
      .columns(['incident_id', 'seq'])
      .execute();
  },
};
