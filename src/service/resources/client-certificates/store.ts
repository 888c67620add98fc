import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../../platform/store/database.js';

/** A client certificate row: its host (lower case) and its document as JSON text (secrets sealed). */
export type CertificateRow = Selectable<Database['client_certificates']>;

/** The `client_certificates` table's queries, every one scoped to one account. */
export class CertificateQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Inserts a certificate row (its document already sealed). */
  async insert(row: CertificateRow): Promise<void> {
    await this.#db.insertInto('client_certificates').values(row).execute();
  }

  /** One page of the account's certificates, oldest first. */
  list(accountId: string, page: { limit: number; offset: number }): Promise<CertificateRow[]> {
    return this.#db
      .selectFrom('client_certificates')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
  }

  /** The certificate's row; undefined when it is not in the account. */
  get(accountId: string, id: string): Promise<CertificateRow | undefined> {
    return this.#db
      .selectFrom('client_certificates')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** The account's certificates for any of `hosts`, newest first. */
  forHosts(accountId: string, hosts: readonly string[]): Promise<CertificateRow[]> {
    return this.#db
      .selectFrom('client_certificates')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('host', 'in', hosts)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }

  /** Deletes the certificate; false when it is not in the account. */
  async delete(accountId: string, id: string): Promise<boolean> {
    const res = await this.#db
      .deleteFrom('client_certificates')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
  }
}
