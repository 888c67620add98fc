import type { Kysely, Migration } from 'kysely';

/**
 * `0005_private_locations`: the private location an agent last authenticated for, and the
 * indexes that count a location's agents and find its keys.
 */
export const privateLocations: Migration = {
  async up(db: Kysely<unknown>) {
    // Which private location an agent last authenticated for (null: an account API key),
    // so a location can report how many agents serve it.
    await db.schema.alterTable('agents').addColumn('location_id', 'text').execute();
    await db.schema
      .createIndex('agents_location_seen')
      .on('agents')
      .columns(['location_id', 'last_seen_at'])
      .execute();
    await db.schema
      .createIndex('private_location_keys_location')
      .on('private_location_keys')
      .column('location_id')
      .execute();
  },
};
