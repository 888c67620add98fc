import type { Kysely } from 'kysely';
import { CheckStore } from '../checks/checks.js';
import { badField, HttpError, notFound } from '../../http/errors.js';
import { iso } from '../../http/pagination.js';
import { SNIPPET_SCRIPT_MAX_BYTES, type Snippet } from './schema.js';
import type { Database } from '../../store/database.js';

type Row = { id: number; name: string; doc: string; created_at: number; updated_at: number | null };
export type SnippetDoc = { name: string; script: string };

/**
 * Asserts `script` is at most 128 KiB of UTF-8 (the schema bounds characters only).
 * @throws HttpError 400 naming `script`, rule `maxLength`.
 */
export function assertScriptSize(script: string | undefined): void {
  if (script !== undefined && Buffer.byteLength(script, 'utf8') > SNIPPET_SCRIPT_MAX_BYTES) {
    throw badField(
      'script',
      `must be at most ${SNIPPET_SCRIPT_MAX_BYTES} bytes of UTF-8 (128 KiB)`,
      'maxLength',
    );
  }
}

/** A row as the API shows it. */
export function presentSnippet(row: Row): Snippet {
  const doc = JSON.parse(row.doc) as SnippetDoc;
  return {
    id: Number(row.id),
    name: doc.name,
    script: doc.script,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at),
  };
}

/** Data access for snippets, always scoped to one account. */
export class SnippetStore {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Inserts a snippet; returns its row. */
  async insert(accountId: string, doc: SnippetDoc, nowMs: number): Promise<Row> {
    const text = JSON.stringify({ name: doc.name, script: doc.script });
    const { id } = await this.#db
      .insertInto('snippets')
      .values({ account_id: accountId, name: doc.name, doc: text, created_at: nowMs, updated_at: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { id: Number(id), name: doc.name, doc: text, created_at: nowMs, updated_at: null };
  }

  /** @throws HttpError 404 when the snippet is not in the account. */
  async get(accountId: string, id: number): Promise<Row> {
    const row = await this.#db
      .selectFrom('snippets')
      .select(['id', 'name', 'doc', 'created_at', 'updated_at'])
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('snippet', id);
    return row;
  }

  /** One page of the account's snippets, oldest first. */
  async list(accountId: string, limit: number, offset: number): Promise<Row[]> {
    return this.#db
      .selectFrom('snippets')
      .select(['id', 'name', 'doc', 'created_at', 'updated_at'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute();
  }

  /** Applies `name` and/or `script`; returns the new row. @throws HttpError 404. */
  async update(accountId: string, id: number, patch: Partial<SnippetDoc>, nowMs: number): Promise<Row> {
    const before = await this.get(accountId, id);
    const old = JSON.parse(before.doc) as SnippetDoc;
    const doc = { name: patch.name ?? old.name, script: patch.script ?? old.script };
    const text = JSON.stringify(doc);
    await this.#db
      .updateTable('snippets')
      .set({ name: doc.name, doc: text, updated_at: nowMs })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
    return { ...before, name: doc.name, doc: text, updated_at: nowMs };
  }

  /**
   * Deletes a snippet no check or check group uses as `setupSnippetId` or
   * `tearDownSnippetId`, so no run ever loses its setup or teardown code.
   * @throws HttpError 404 unknown snippet; 409 while still in use.
   */
  async delete(accountId: string, id: number): Promise<void> {
    await this.get(accountId, id);
    const uses = (doc: Record<string, unknown>) => doc.setupSnippetId === id || doc.tearDownSnippetId === id;
    const checkIds = (await new CheckStore(this.#db).list(accountId)).filter(uses).map((c) => c.id);
    const groupRows = await this.#db
      .selectFrom('check_groups')
      .select(['id', 'doc'])
      .where('account_id', '=', accountId)
      .execute();
    const groupIds = groupRows.filter((g) => uses(JSON.parse(g.doc))).map((g) => Number(g.id));
    if (checkIds.length + groupIds.length > 0) {
      throw new HttpError(
        409,
        `snippet ${id} is still used by ${checkIds.length} check(s) and ${groupIds.length} check group(s)`,
        {
          id: String(id),
          checkIds,
          groupIds,
          code: 'OUTPOST_ERR_SNIPPET_IN_USE',
        },
      );
    }
    await this.#db.deleteFrom('snippets').where('account_id', '=', accountId).where('id', '=', id).execute();
  }
}
