import type { Kysely } from 'kysely';
import type { Database } from '../platform/store/database.js';

/** What a trigger is of: a check (`target_id` its id) or a check group (the group id as text). */
export type TriggerKind = 'CHECK' | 'GROUP';

/** A trigger row; times in epoch ms. */
export type TriggerRow = {
  id: number;
  account_id: string;
  target_kind: TriggerKind;
  target_id: string;
  token_hash: string;
  token_sealed: string;
  called_at: number | null;
  created_at: number;
  updated_at: number | null;
};

const COLUMNS = [
  'id',
  'account_id',
  'target_kind',
  'target_id',
  'token_hash',
  'token_sealed',
  'called_at',
  'created_at',
  'updated_at',
] as const;

/** The `triggers` table's queries: by account and target for `/v1`, by token hash for a call of the URL. */
export class TriggerQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Inserts a trigger; returns its generated id. */
  async insert(row: Omit<TriggerRow, 'id'>): Promise<number> {
    const { id } = await this.#db
      .insertInto('triggers')
      .values(row)
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(id);
  }

  /** The trigger of the target in the account; undefined when it has none. */
  async ofTarget(accountId: string, kind: TriggerKind, targetId: string): Promise<TriggerRow | undefined> {
    const row = await this.#db
      .selectFrom('triggers')
      .select(COLUMNS)
      .where('account_id', '=', accountId)
      .where('target_kind', '=', kind)
      .where('target_id', '=', targetId)
      .executeTakeFirst();
    return row && { ...row, id: Number(row.id) };
  }

  /** The trigger whose token has the SHA-256 `tokenHash` (hex); undefined when none has. */
  async byTokenHash(tokenHash: string): Promise<TriggerRow | undefined> {
    const row = await this.#db
      .selectFrom('triggers')
      .select(COLUMNS)
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
    return row && { ...row, id: Number(row.id) };
  }

  /** Records a call that started runs at `nowMs`. */
  async called(id: number, nowMs: number): Promise<void> {
    await this.#db.updateTable('triggers').set({ called_at: nowMs }).where('id', '=', id).execute();
  }

  /** Deletes the target's trigger; false when it had none. */
  async delete(accountId: string, kind: TriggerKind, targetId: string): Promise<boolean> {
    const result = await this.#db
      .deleteFrom('triggers')
      .where('account_id', '=', accountId)
      .where('target_kind', '=', kind)
      .where('target_id', '=', targetId)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /**
   * Deletes up to `limit` triggers whose check or check group was deleted; returns how many. The target
   * column is text: a group's id is compared as text.
   */
  async deleteOrphans(limit: number): Promise<number> {
    const rows = await this.#db
      .selectFrom('triggers as t')
      .select('t.id')
      .where((eb) =>
        eb.or([
          eb.and([
            eb('t.target_kind', '=', 'CHECK'),
            eb.not(
              eb.exists(
                eb
                  .selectFrom('checks as c')
                  .select('c.id')
                  .whereRef('c.id', '=', 't.target_id')
                  .whereRef('c.account_id', '=', 't.account_id'),
              ),
            ),
          ]),
          eb.and([
            eb('t.target_kind', '=', 'GROUP'),
            eb.not(
              eb.exists(
                eb
                  .selectFrom('check_groups as g')
                  .select('g.id')
                  .where((inner) => inner(inner.cast('g.id', 'text'), '=', inner.ref('t.target_id')))
                  .whereRef('g.account_id', '=', 't.account_id'),
              ),
            ),
          ]),
        ]),
      )
      .limit(limit)
      .execute();
    if (rows.length === 0) return 0;
    await this.#db
      .deleteFrom('triggers')
      .where(
        'id',
        'in',
        rows.map((r) => Number(r.id)),
      )
      .execute();
    return rows.length;
  }
}
