import type { Kysely, Migration } from 'kysely';

/**
 * `0023_rate_limits`: the counters of the rate limiters shared by service replicas on one PostgreSQL store
 * (rate-limiter-flexible's RateLimiterPostgres, its own column layout: `key` = a limiter's prefix and the
 * bucket, `points` consumed, `expire` epoch ms). On SQLite, whose one process keeps its counters in memory,
 * the table stays empty.
 */
export const rateLimits: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('rate_limits')
      .addColumn('key', 'varchar(255)', (c) => c.primaryKey())
      .addColumn('points', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('expire', 'bigint')
      .execute();
    await db.schema.createIndex('rate_limits_expire').on('rate_limits').column('expire').execute();
  },
};
