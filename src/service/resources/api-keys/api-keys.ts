import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { generateApiKey, hashApiKey } from '../../platform/http/auth.js';
import { badField, HttpError, notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/pagination.js';
import type { Database } from '../../platform/store/database.js';
import { EMBEDDED_AGENT_KEY_LABEL } from '../../platform/web/sessions.js';
import type { ApiKeyView, CreateApiKey, CreatedApiKey } from './schema.js';
import { ApiKeyQueries, type ApiKeyRow } from './store.js';

/** How many characters of a key its listing shows (`op_` and four more), as `key_prefix` stores them. */
export const KEY_PREFIX_CHARS = 7;

/** A key as listed (docs/api.md, "API keys"): never the key nor its hash. */
export function presentApiKey(row: ApiKeyRow): ApiKeyView {
  return {
    id: row.id,
    name: row.label,
    keyPrefix: row.key_prefix,
    createdAt: iso(row.created_at),
    lastUsedAt: iso(row.last_used_at),
  };
}

/**
 * The account API keys of `/v1/api-keys`: create (the key answered once, only its SHA-256 stored), list and
 * revoke. The embedded agent's key (label `embedded-agent`, rotated by `outpost up` at each start) is
 * neither listed nor revocable here: for these routes it does not exist.
 */
export class ApiKeys {
  readonly #rows: ApiKeyQueries;
  constructor(db: Kysely<Database>) {
    this.#rows = new ApiKeyQueries(db, EMBEDDED_AGENT_KEY_LABEL);
  }

  /** The account's keys, oldest first. */
  async list(accountId: string): Promise<ApiKeyView[]> {
    return (await this.#rows.list(accountId)).map(presentApiKey);
  }

  /**
   * Makes a key named `body.name` (trimmed).
   * @returns the key as listed with `rawKey`, the key itself: the only time it is ever seen.
   * @throws HttpError 400 naming `name` for the embedded agent's name.
   */
  async create(accountId: string, body: CreateApiKey, nowMs: number): Promise<CreatedApiKey> {
    const name = body.name.trim();
    if (name === EMBEDDED_AGENT_KEY_LABEL) {
      throw badField('name', `cannot be ${EMBEDDED_AGENT_KEY_LABEL}: the embedded agent's key has it`, 'not');
    }
    const rawKey = generateApiKey();
    const row: ApiKeyRow = {
      id: randomUUID(),
      account_id: accountId,
      key_prefix: rawKey.slice(0, KEY_PREFIX_CHARS),
      label: name,
      created_at: nowMs,
      last_used_at: null,
    };
    await this.#rows.insert({ ...row, key_hash: hashApiKey(rawKey) });
    return { ...presentApiKey(row), rawKey };
  }

  /**
   * Revokes the key `id`: it stops working at once, and so do the web sessions opened with it.
   * @param currentKeyId the key of the request doing it (`request.apiKeyId`).
   * @throws HttpError 409 OUTPOST_ERR_API_KEY_IN_USE when `id` is `currentKeyId`; 404 when the account has
   *   no such key (or it is the embedded agent's).
   */
  async revoke(accountId: string, id: string, currentKeyId: string | null): Promise<void> {
    if (id === currentKeyId && (await this.#rows.get(accountId, id))) {
      throw new HttpError(
        'OUTPOST_ERR_API_KEY_IN_USE',
        'this request is authenticated with this key (or a web session opened with it): revoke it with another key of the account',
        { id },
      );
    }
    if (!(await this.#rows.delete(accountId, id))) throw notFound('API key', id);
  }
}
