import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../../platform/store/database.js';
import { Statement } from '../../platform/store/statement.js';

/** A variable row as stored: a secret variable's value sealed; times in epoch ms. */
export type VariableRow = Selectable<Database['variables']>;

/** Every variable of an account, by key: read for every alert sent and every check run that uses them. */
const ALL_OF_ACCOUNT = new Statement((db: Kysely<Database>, v: { accountId: string }) =>
  db.selectFrom('variables').selectAll().where('account_id', '=', v.accountId).orderBy('key'),
);

/** The `variables` table's queries, every one scoped to one account; keys are unique per account. */
export class VariableQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** One page of the account's variables, ordered by key; every variable when `page` is undefined. */
  list(accountId: string, page?: { limit: number; offset: number }): Promise<VariableRow[]> {
    if (page === undefined) return ALL_OF_ACCOUNT.rows(this.#db, { accountId });
    return this.#db
      .selectFrom('variables')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('key')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
  }

  /** The variable `key`; undefined when the account has none. */
  get(accountId: string, key: string): Promise<VariableRow | undefined> {
    return this.#db
      .selectFrom('variables')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .executeTakeFirst();
  }

  /** Inserts a variable. @throws the driver's unique-constraint error when the key exists in the account. */
  async insert(row: VariableRow): Promise<void> {
    await this.#db.insertInto('variables').values(row).execute();
  }

  /** Writes the value (as stored) and flags of the variable with row id `id`. */
  async update(
    accountId: string,
    id: string,
    set: Pick<VariableRow, 'value' | 'locked' | 'secret' | 'updated_at'>,
  ): Promise<void> {
    await this.#db
      .updateTable('variables')
      .set(set)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }

  /** Deletes the variable `key`; false when the account has none. */
  async delete(accountId: string, key: string): Promise<boolean> {
    const res = await this.#db
      .deleteFrom('variables')
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
  }
}
