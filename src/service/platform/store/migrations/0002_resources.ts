import type { CreateTableBuilder, Kysely, Migration } from 'kysely';
import { autoIncrementId } from './dialect.js';

/**
 * `0002_resources`: the account-scoped resources (check groups, alert channels, snippets,
 * status pages and their services, incidents and their updates, variables, client
 * certificates, error groups, private locations and their keys).
 */
export const resources: Migration = {
  async up(db: Kysely<unknown>) {
    // Account-scoped resources of the API (docs/api.md). Each keeps the API document as JSON text
    // (`doc`) plus the columns that queries filter, sort or join on.
    const intPk = (name: string) => autoIncrementId(db, db.schema.createTable(name));
    const textPk = (name: string) =>
      db.schema.createTable(name).addColumn('id', 'text', (c) => c.primaryKey());
    const scoped = <T extends string, C extends string>(t: CreateTableBuilder<T, C>) =>
      t
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint');

    await scoped(
      intPk('check_groups')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('doc', 'text', (c) => c.notNull()),
    ).execute();
    await scoped(
      intPk('alert_channels')
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('doc', 'text', (c) => c.notNull()),
    ).execute();
    await scoped(
      intPk('snippets')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('doc', 'text', (c) => c.notNull()),
    ).execute();
    await scoped(textPk('status_pages').addColumn('doc', 'text', (c) => c.notNull())).execute();
    await scoped(textPk('status_page_services').addColumn('name', 'text', (c) => c.notNull())).execute();
    await scoped(textPk('incidents').addColumn('doc', 'text', (c) => c.notNull())).execute();
    await scoped(
      textPk('incident_updates')
        .addColumn('incident_id', 'text', (c) => c.notNull().references('incidents.id').onDelete('cascade'))
        .addColumn('doc', 'text', (c) => c.notNull()),
    ).execute();
    await scoped(
      textPk('variables')
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('locked', 'integer', (c) => c.notNull())
        .addColumn('secret', 'integer', (c) => c.notNull()),
    ).execute();
    await db.schema
      .createIndex('variables_account_key')
      .unique()
      .on('variables')
      .columns(['account_id', 'key'])
      .execute();
    await scoped(
      textPk('client_certificates')
        .addColumn('host', 'text', (c) => c.notNull())
        .addColumn('doc', 'text', (c) => c.notNull()),
    ).execute();
    await scoped(
      textPk('error_groups')
        .addColumn('check_id', 'text', (c) => c.notNull())
        .addColumn('error_hash', 'text', (c) => c.notNull())
        .addColumn('raw_error_message', 'text')
        .addColumn('cleaned_error_message', 'text', (c) => c.notNull())
        .addColumn('first_seen', 'bigint', (c) => c.notNull())
        .addColumn('last_seen', 'bigint', (c) => c.notNull())
        .addColumn('archived_until_next_event', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('archived_forever', 'integer', (c) => c.notNull().defaultTo(0)),
    ).execute();
    await db.schema
      .createIndex('error_groups_check_hash')
      .unique()
      .on('error_groups')
      .columns(['check_id', 'error_hash'])
      .execute();
    await scoped(
      textPk('private_locations')
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('doc', 'text', (c) => c.notNull()),
    ).execute();
    await db.schema
      .createIndex('private_locations_slug')
      .unique()
      .on('private_locations')
      .columns(['account_id', 'slug'])
      .execute();
    await scoped(
      textPk('private_location_keys')
        .addColumn('location_id', 'text', (c) =>
          c.notNull().references('private_locations.id').onDelete('cascade'),
        )
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('masked_key', 'text', (c) => c.notNull()),
    ).execute();
  },
};
