import type { Kysely, Migration } from 'kysely';
import { autoIncrementId } from './dialect.js';

/**
 * `0020_dashboards`: public dashboards of an account's checks (`/v1/dashboards`, docs/api.md, "Dashboards").
 *
 * - `dashboards`: one row per dashboard, `id` the number the API answers as `id`, `dashboard_id` the string
 *   id of its path (unique), the lower-cased `custom_url` its public path `/dashboards/{customUrl}` is looked
 *   up by (unique across the service; null when it has none), its `custom_domain` (stored, not served) and
 *   the dashboard as the API shows it (`doc`, JSON). Times in epoch ms.
 */
export const dashboards: Migration = {
  async up(db: Kysely<unknown>) {
    await autoIncrementId(db, db.schema.createTable('dashboards'))
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('dashboard_id', 'text', (c) => c.notNull().unique())
      .addColumn('custom_url', 'text')
      .addColumn('custom_domain', 'text')
      .addColumn('doc', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('dashboards_custom_url')
      .unique()
      .on('dashboards')
      .column('custom_url')
      .execute();
    await db.schema.createIndex('dashboards_account').on('dashboards').column('account_id').execute();
  },
};
