import type { Kysely, Migration } from 'kysely';
import { autoIncrementId } from './dialect.js';

/**
 * `0019_maintenance_windows`: maintenance windows (docs/api.md, "Maintenance windows").
 *
 * - `maintenance_windows`: one row per window, an integer id the store generates, the account, its `name` and
 *   its document (`doc`, JSON text: times, repeats, time zone, the checks it covers, what it does), created and
 *   updated at (epoch ms). The scheduler and the alert recorder read an account's windows by
 *   `maintenance_windows_account`.
 */
export const maintenanceWindows: Migration = {
  async up(db: Kysely<unknown>) {
    await autoIncrementId(db, db.schema.createTable('maintenance_windows'))
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('doc', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('maintenance_windows_account')
      .on('maintenance_windows')
      .column('account_id')
      .execute();
  },
};
