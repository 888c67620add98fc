import type { Kysely } from 'kysely';
import type { Database, DocRow, JsonColumn, StoredJson } from './schema.js';
import { Statement } from './statement.js';

/** The columns every document table has (`DocRow`): the others are its extra columns. */
type DocColumn = 'id' | 'account_id' | 'doc' | 'created_at' | 'updated_at';

/**
 * The tables whose row is an account-scoped document with an id the store generates (`DocRow<number, …>`):
 * `alert_channels`, `check_groups`, `snippets`.
 */
export type DocTableName = {
  [T in keyof Database]: Database[T] extends DocRow<number, unknown> ? T : never;
}[keyof Database];

/** The extra text columns of the document table `T`, beside `DocRow`'s (`type` of `alert_channels`). */
export type DocTableColumn<T extends DocTableName> = {
  [C in Exclude<keyof Database[T], DocColumn>]: Database[T][C] extends string ? C : never;
}[Exclude<keyof Database[T], DocColumn>];

/** The type of `T`'s document (declared in StoredDocuments by the module that owns the table). */
export type DocTableDoc<T extends DocTableName> = Database[T]['doc'] extends JsonColumn<infer D> ? D : never;

/**
 * A row of the document table `T` as DocTableQueries reads it: `id`, the extra columns `Read`, `doc` (the
 * document as JSON text), `created_at` and `updated_at` (epoch ms; null until the first update).
 */
export type DocTableRow<T extends DocTableName, Read extends DocTableColumn<T> = never> = {
  id: number;
  doc: StoredJson<DocTableDoc<T>>;
  created_at: number;
  updated_at: number | null;
} & { [C in Read]: string };

/**
 * How the queries below see any document table: one extra text column, named `extra` here only (the SQL
 * names the table's own column). Kysely cannot type a query over a table named by a type parameter.
 */
type AnyDocTable = DocRow<number, unknown> & { extra: string };

/** A column a read of a document table selects, under the view's names (see AnyDocTable). */
type ReadColumn = 'id' | 'extra' | 'doc' | 'created_at' | 'updated_at';

type DocTableView = { doc_table: AnyDocTable };

/**
 * The reads run for every result and every alert sent (a channel by id, an account's channels), built and
 * compiled once per table and column list (store/statement.ts), by `${table}:${columns}`.
 */
const readStatements = new Map<
  string,
  {
    get: Statement<DocTableView, { accountId: string; id: number }, unknown>;
    all: Statement<DocTableView, { accountId: string }, unknown>;
  }
>();

function readStatementsOf(table: 'doc_table', columns: readonly ReadColumn[]) {
  const key = `${table}:${columns.join(',')}`;
  let statements = readStatements.get(key);
  if (statements === undefined) {
    statements = {
      get: new Statement((db: Kysely<DocTableView>, v: { accountId: string; id: number }) =>
        db.selectFrom(table).select(columns).where('account_id', '=', v.accountId).where('id', '=', v.id),
      ),
      all: new Statement((db: Kysely<DocTableView>, v: { accountId: string }) =>
        db.selectFrom(table).select(columns).where('account_id', '=', v.accountId).orderBy('id'),
      ),
    };
    readStatements.set(key, statements);
  }
  return statements;
}

/**
 * The queries of one account-scoped document table (`T`, see DocTableName), every one scoped to one
 * account but `setDoc` (by the id the store generated). `Extra` is the table's extra text column, written
 * with the document (`type` of `alert_channels`, `name` of `check_groups` and `snippets`); `Read` is the
 * extra columns its rows are read with: `Extra`, or none (`never`). Times are epoch ms.
 */
export class DocTableQueries<
  T extends DocTableName,
  Extra extends DocTableColumn<T>,
  Read extends Extra = Extra,
> {
  readonly #db: Kysely<{ doc_table: AnyDocTable }>;
  /** The table, `T`, under the view's name. */
  readonly #table: 'doc_table';
  /** The extra column, `Extra`, under the view's name. */
  readonly #extra: 'extra';
  /** The columns a read selects: `id`, `Read`, `doc`, `created_at`, `updated_at`, in this order. */
  readonly #columns: readonly ReadColumn[];

  /**
   * Queries of `table` over `db` (a transaction too), whose extra column is `extra`; rows are read with
   * the extra columns `read` (`[extra]` or `[]`).
   */
  constructor(db: Kysely<Database>, table: T, extra: Extra, read: readonly Read[]) {
    this.#db = db as unknown as Kysely<{ doc_table: AnyDocTable }>;
    this.#table = table as unknown as 'doc_table';
    this.#extra = extra as unknown as 'extra';
    this.#columns = ['id', ...(read as unknown as 'extra'[]), 'doc', 'created_at', 'updated_at'];
  }

  /**
   * Inserts a row in the account `accountId`, with `extra` in its `Extra` column, created at `nowMs`
   * (epoch ms), and returns its generated id. Its document is `doc` (JSON text), else an empty one (`{}`): a table whose
   * secrets are sealed for the row's id writes it with `setDoc` in the same transaction.
   */
  async insert(
    accountId: string,
    extra: string,
    nowMs: number,
    doc: StoredJson<DocTableDoc<T>> | '{}' = '{}',
  ): Promise<number> {
    const { id } = await this.#db
      .insertInto(this.#table)
      .values({ account_id: accountId, [this.#extra]: extra, doc, created_at: nowMs, updated_at: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(id);
  }

  /** Writes the document of the row `id` (no timestamp change). */
  async setDoc(id: number, doc: StoredJson<DocTableDoc<T>>): Promise<void> {
    await this.#db.updateTable(this.#table).set({ doc }).where('id', '=', id).execute();
  }

  /** The row `id`; undefined when it is not in the account. */
  get(accountId: string, id: number): Promise<DocTableRow<T, Read> | undefined> {
    return readStatementsOf(this.#table, this.#columns).get.first(this.#db, { accountId, id }) as Promise<
      DocTableRow<T, Read> | undefined
    >;
  }

  /** One page of the account's rows, by id: `limit` rows after `offset`; every row when `limit` is undefined. */
  list(accountId: string, limit?: number, offset = 0): Promise<DocTableRow<T, Read>[]> {
    if (limit === undefined) {
      return readStatementsOf(this.#table, this.#columns).all.rows(this.#db, { accountId }) as Promise<
        DocTableRow<T, Read>[]
      >;
    }
    const query = this.#db
      .selectFrom(this.#table)
      .select(this.#columns)
      .where('account_id', '=', accountId)
      .orderBy('id')
      .limit(limit)
      .offset(offset);
    return query.execute() as Promise<DocTableRow<T, Read>[]>;
  }

  /** Replaces the row's document and its `Extra` column, updated at `nowMs` (epoch ms). */
  async update(
    accountId: string,
    id: number,
    extra: string,
    doc: StoredJson<DocTableDoc<T>>,
    nowMs: number,
  ): Promise<void> {
    await this.#db
      .updateTable(this.#table)
      .set({ [this.#extra]: extra, doc, updated_at: nowMs })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }

  /** Deletes the row; false when it is not in the account. */
  async delete(accountId: string, id: number): Promise<boolean> {
    const res = await this.#db
      .deleteFrom(this.#table)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
  }
}
