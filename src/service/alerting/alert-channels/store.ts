import type { Kysely } from 'kysely';
import type { Database } from '../../platform/store/database.js';
import { DocTableQueries, type DocTableRow } from '../../platform/store/doc-table.js';

/** An alert channel row: its type, its document as JSON text (secrets sealed); times in epoch ms. */
export type ChannelRow = DocTableRow<'alert_channels', 'type'>;

/**
 * The `alert_channels` table's queries, every one scoped to one account (but `setDoc`, by generated id);
 * `type` is the extra column. `insert` writes an empty document: its secrets are sealed for the generated
 * id, so the caller writes the document with `setDoc` in the same transaction.
 */
export class ChannelQueries extends DocTableQueries<'alert_channels', 'type'> {
  constructor(db: Kysely<Database>) {
    super(db, 'alert_channels', 'type', ['type']);
  }
}
