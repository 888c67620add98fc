import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { REDACTED } from '../../../common/redaction.js';
import { badField, HttpError, notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/pagination.js';
import type { CreateVariable, UpdateVariable, Variable } from './schema.js';
import type { Database } from '../../platform/store/database.js';
import { SecretBox, secretBoxOf } from '../../platform/store/secret-box.js';
import { VariableQueries, type VariableRow } from './store.js';

/** A variable with its real value, for the job builder only: never send this to an API client. */
export type ResolvedVariable = { key: string; value: string; secret: boolean };

/**
 * The API view of a stored variable (docs/api.md, "Environment variable"): a `secret`
 * variable's value is replaced by REDACTED (`*****`) on every read, so once set it is never
 * readable again. `locked` values are shown: the spec says the flag only tells the
 * UI to mask the value.
 */
export function presentVariable(row: VariableRow): Variable {
  return {
    key: row.key,
    value: row.secret ? REDACTED : row.value,
    locked: row.locked === 1,
    secret: row.secret === 1,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at),
  };
}

/** The AAD a variable's sealed value is bound to: its row id. */
function placeOf(id: string): string {
  return `variables:${id}:value`;
}

/** The row as stored: a secret variable's value sealed (AES-256-GCM, see secret-box.ts). */
function storedRow(db: Kysely<Database>, row: VariableRow): VariableRow {
  return row.secret === 1 ? { ...row, value: secretBoxOf(db).seal(row.value, placeOf(row.id)) } : row;
}

/**
 * The value of a stored variable in clear (a value stored before sealing passes through).
 * @throws OutpostError OUTPOST_ERR_ENCRYPTION_KEY when a sealed value does not open with the store's key.
 */
function openValue(db: Kysely<Database>, row: { id: string; value: string; secret: number }): string {
  return row.secret === 1 && SecretBox.isSealed(row.value)
    ? secretBoxOf(db).open(row.value, placeOf(row.id))
    : row.value;
}

/** True for a unique-constraint violation on SQLite (better-sqlite3) or PostgreSQL (23505). */
function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

function conflict(key: string): HttpError {
  return new HttpError('OUTPOST_ERR_VARIABLE_EXISTS', `body.key ${key} already exists in this account`, {
    field: 'key',
    in: 'body',
    rule: 'unique',
  });
}

/** Account-level environment variables, always scoped to one account; keys are unique per account. */
export class Variables {
  readonly #db: Kysely<Database>;
  readonly #rows: VariableQueries;
  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.#rows = new VariableQueries(db);
  }

  /** One page of the account's variables, ordered by key. */
  async list(accountId: string, page: { limit: number; offset: number }): Promise<VariableRow[]> {
    return this.#rows.list(accountId, page);
  }

  /** @throws HttpError 404 when the account has no variable `key`. */
  async get(accountId: string, key: string): Promise<VariableRow> {
    const row = await this.#rows.get(accountId, key);
    if (!row) throw notFound('variable', key);
    return row;
  }

  /** @throws HttpError 409 naming `key` when the account already has that key. */
  async create(accountId: string, body: CreateVariable, nowMs: number): Promise<VariableRow> {
    const row: VariableRow = {
      id: randomUUID(),
      account_id: accountId,
      key: body.key,
      value: body.value,
      locked: body.locked ? 1 : 0,
      secret: body.secret ? 1 : 0,
      created_at: nowMs,
      updated_at: null,
    };
    try {
      await this.#rows.insert(storedRow(this.#db, row));
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(body.key);
      throw err;
    }
    return row;
  }

  /**
   * Replaces the value and flags of variable `key`; omitted flags keep their values.
   * @throws HttpError 404 when absent; 400 naming `key` when the body's key differs
   *   from the path's (keys cannot change), or `secret` when it would turn a secret
   *   variable back into a plain one (spec: once set, the value cannot be unlocked).
   */
  async update(accountId: string, key: string, body: UpdateVariable, nowMs: number): Promise<VariableRow> {
    const before = await this.get(accountId, key);
    if (body.key !== undefined && body.key !== key) {
      throw badField('key', `cannot be changed: must be ${key} as in the path`, 'const');
    }
    if (before.secret === 1 && body.secret === false) {
      throw badField('secret', 'cannot be set back to false: a secret variable stays secret', 'const');
    }
    // The mask of a secret value sent back (a GET's body) keeps the stored value.
    const value = body.value === REDACTED && before.secret === 1 ? openValue(this.#db, before) : body.value;
    const after: VariableRow = {
      ...before,
      value,
      locked: body.locked === undefined ? before.locked : body.locked ? 1 : 0,
      secret: body.secret === undefined ? before.secret : body.secret ? 1 : 0,
      updated_at: nowMs,
    };
    await this.#rows.update(accountId, before.id, {
      value: storedRow(this.#db, after).value,
      locked: after.locked,
      secret: after.secret,
      updated_at: nowMs,
    });
    return after;
  }

  /** @returns true when a variable was deleted. */
  async delete(accountId: string, key: string): Promise<boolean> {
    return this.#rows.delete(accountId, key);
  }
}

/**
 * Every environment variable of an account with its real value and `secret`
 * flag, ordered by key, for the job builder (docs/protocol.md: a job carries the
 * merged variables; check > group > account, account being the lowest).
 * The values of secret variables are in clear here: they go to the agent only,
 * which scrubs them from everything it reports.
 */
export async function accountVariables(db: Kysely<Database>, accountId: string): Promise<ResolvedVariable[]> {
  const rows = await new VariableQueries(db).list(accountId);
  return rows.map((r) => ({ key: r.key, value: openValue(db, r), secret: r.secret === 1 }));
}
