import type { Kysely } from 'kysely';
import { CheckQueries } from '../../checks/index.js';
import { badField, HttpError, notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/pagination.js';
import { SNIPPET_SCRIPT_MAX_BYTES, type Snippet } from './schema.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc } from '../../platform/store/schema.js';
import { GroupQueries } from '../check-groups/store.js';
import { type SnippetRow, SnippetQueries } from './store.js';

/** The stored document of a snippet. */
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
export function presentSnippet(row: SnippetRow): Snippet {
  const doc = readDoc(row.doc);
  return {
    id: Number(row.id),
    name: doc.name,
    script: doc.script,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at),
  };
}

/** Snippets of one account (queries in SnippetQueries). */
export class Snippets {
  readonly #db: Kysely<Database>;
  readonly #rows: SnippetQueries;
  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.#rows = new SnippetQueries(db);
  }

  /** Inserts a snippet; returns its row. */
  async insert(accountId: string, doc: SnippetDoc, nowMs: number): Promise<SnippetRow> {
    return this.#rows.insert(accountId, { name: doc.name, script: doc.script }, nowMs);
  }

  /** @throws HttpError 404 when the snippet is not in the account. */
  async get(accountId: string, id: number): Promise<SnippetRow> {
    const row = await this.#rows.get(accountId, id);
    if (!row) throw notFound('snippet', id);
    return row;
  }

  /** One page of the account's snippets, oldest first. */
  async list(accountId: string, limit: number, offset: number): Promise<SnippetRow[]> {
    return this.#rows.list(accountId, limit, offset);
  }

  /** Applies `name` and/or `script`; returns the new row. @throws HttpError 404. */
  async update(
    accountId: string,
    id: number,
    patch: Partial<SnippetDoc>,
    nowMs: number,
  ): Promise<SnippetRow> {
    const before = await this.get(accountId, id);
    const old = readDoc(before.doc);
    const doc = { name: patch.name ?? old.name, script: patch.script ?? old.script };
    const text = await this.#rows.update(accountId, id, doc, nowMs);
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
    const checkIds = (await new CheckQueries(this.#db).list(accountId)).filter(uses).map((c) => c.id);
    const groupRows = await new GroupQueries(this.#db).list(accountId);
    const groupIds = groupRows.filter((g) => uses(readDoc(g.doc))).map((g) => Number(g.id));
    if (checkIds.length + groupIds.length > 0) {
      throw new HttpError(
        'OUTPOST_ERR_SNIPPET_IN_USE',
        `snippet ${id} is still used by ${checkIds.length} check(s) and ${groupIds.length} check group(s)`,
        {
          id: String(id),
          checkIds,
          groupIds,
        },
      );
    }
    await this.#rows.delete(accountId, id);
  }
}

declare module '../../platform/store/schema.js' {
  /** The documents of this module's tables (see StoredDocuments). */
  interface StoredDocuments {
    snippets: SnippetDoc;
  }
}
