import { type Kysely, sql } from 'kysely';
import { mapSecrets, type SecretLayout } from './secret-fields.js';
import { isPostgres } from './dialect.js';
import type { Database } from './database.js';
import { SecretBox, secretBoxOf } from './secret-box.js';

/** What `sealStoredSecrets` did: values sealed now (stored in clear before) and sealed values verified. */
export type SealReport = { sealed: number; verified: number };

/**
 * A table whose `doc` column holds secrets, and where in a row's document they are (given the document's
 * JSON text: an alert channel's secret fields depend on its type). The modules owning the tables say so
 * (main.ts lists them).
 */
export type SecretDocTable = {
  table: 'checks' | 'check_groups' | 'client_certificates' | 'alert_channels';
  layoutOf(docText: string): SecretLayout;
};

const VARIABLE_REFERENCE = /^\{\{\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\}$/;

/**
 * Seals every secret still stored in clear (stores written before secrets were sealed) and opens every
 * sealed one once, so a wrong key stops the start instead of failing later requests. Idempotent: a
 * second run seals nothing. Runs at start-up, one transaction per table.
 * @throws OutpostError OUTPOST_ERR_ENCRYPTION_KEY naming the first value that does not open with the
 *   store's key (another OUTPOST_ENCRYPTION_KEY or key file than the store was written with).
 */
export async function sealStoredSecrets(
  db: Kysely<Database>,
  docTables: readonly SecretDocTable[],
): Promise<SealReport> {
  const box = secretBoxOf(db);
  const report: SealReport = { sealed: 0, verified: 0 };
  // SQLite keeps a rewritten row's old bytes in the page's free space (and freed pages) unless told to
  // overwrite them: without this, a value sealed here would stay readable in clear in the file.
  // (PostgreSQL stores are made by this version, which writes every secret sealed: nothing to reseal.)
  const sqlite = !isPostgres(db);
  if (sqlite) await sql`PRAGMA secure_delete = ON`.execute(db);
  const reseal = (value: string, aad: string): string => {
    if (SecretBox.isSealed(value)) {
      box.open(value, aad);
      report.verified += 1;
      return value;
    }
    report.sealed += 1;
    return box.seal(value, aad);
  };
  const resealDoc = (text: string, layout: SecretLayout, table: string, id: string | number) => {
    const doc = JSON.parse(text) as Record<string, unknown>;
    const before = report.sealed;
    const after = mapSecrets(doc, layout, (value, place) =>
      (place.kind === 'pair' || place.kind === 'password') && VARIABLE_REFERENCE.test(value.trim())
        ? value
        : reseal(value, `${table}:${id}:${place.path}`),
    );
    return report.sealed > before ? JSON.stringify(after) : null;
  };

  await db.transaction().execute(async (tx) => {
    const rows = await tx.selectFrom('variables').select(['id', 'value']).where('secret', '=', 1).execute();
    for (const row of rows) {
      const before = report.sealed;
      const value = reseal(row.value, `variables:${row.id}:value`);
      if (report.sealed > before)
        await tx.updateTable('variables').set({ value }).where('id', '=', row.id).execute();
    }
    // People's TOTP seeds (users.totp_secret, docs/teams.md "Two-factor"): written sealed, verified here.
    const seeds = await tx
      .selectFrom('users')
      .select(['id', 'totp_secret'])
      .where('totp_secret', 'is not', null)
      .execute();
    for (const row of seeds) {
      const before = report.sealed;
      const value = reseal(row.totp_secret!, `users:${row.id}:totp_secret`);
      if (report.sealed > before)
        await tx.updateTable('users').set({ totp_secret: value }).where('id', '=', row.id).execute();
    }
    // Single sign-on client secrets (sso_settings.client_secret, docs/teams.md "Single sign-on"): written
    // sealed, verified here. A sign-in in progress (sso_sign_ins) lives 10 minutes and is not verified.
    const clients = await tx.selectFrom('sso_settings').select(['account_id', 'client_secret']).execute();
    for (const row of clients) {
      const before = report.sealed;
      const value = reseal(row.client_secret, `sso_settings:${row.account_id}:client_secret`);
      if (report.sealed > before) {
        await tx
          .updateTable('sso_settings')
          .set({ client_secret: value })
          .where('account_id', '=', row.account_id)
          .execute();
      }
    }
  });
  for (const { table, layoutOf } of docTables) {
    await db.transaction().execute(async (tx) => {
      const rows = (await tx.selectFrom(table).select(['id', 'doc']).execute()) as {
        id: string | number;
        doc: string;
      }[];
      for (const row of rows) {
        const text = resealDoc(row.doc, layoutOf(row.doc), table, row.id);
        if (text !== null) {
          await tx
            .updateTable(table)
            .set({ doc: text })
            .where('id', '=', row.id as never)
            .execute();
        }
      }
    });
  }
  if (report.sealed > 0 && sqlite) {
    // The WAL may still hold frames of the pages as they were in clear: fold it in and truncate it.
    await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
  }
  return report;
}
