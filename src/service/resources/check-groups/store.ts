import type { Kysely } from 'kysely';
import type { Database } from '../../platform/store/database.js';
import { DocTableQueries, type DocTableRow } from '../../platform/store/doc-table.js';

/** A check group row: its document as JSON text (secrets sealed); times in epoch ms. */
export type GroupRow = DocTableRow<'check_groups'>;

/**
 * The `check_groups` table's queries, every one scoped to one account (but `setDoc`, by generated id);
 * `name` is the extra column, written but not read (the document has it). `insert` writes an empty
 * document: its secrets are sealed for the generated id, so the caller writes the document with `setDoc`
 * in the same transaction.
 */
export class GroupQueries extends DocTableQueries<'check_groups', 'name', never> {
  constructor(db: Kysely<Database>) {
    super(db, 'check_groups', 'name', []);
  }
}
