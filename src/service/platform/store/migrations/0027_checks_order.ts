import type { Kysely, Migration } from 'kysely';

/**
 * `0027_checks_order`: the index `checks_account_created` on `(account_id, created_at, id)`, the order of
 * `GET /v1/checks` (oldest first), so a page of an account's checks, numbered or from a cursor, is read from
 * the index instead of sorting every check of the account. It replaces `checks_account` (`account_id` alone),
 * whose look-ups it serves as well.
 */
export const checksOrder: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('checks_account_created')
      .on('checks')
      .columns(['account_id', 'created_at', 'id'])
      .execute();
    await db.schema.dropIndex('checks_account').execute();
  },
};
