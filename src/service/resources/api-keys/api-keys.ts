import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { generateApiKey, hashApiKey } from '../../platform/http/auth.js';
import { badField, HttpError, notFound } from '../../platform/http/errors.js';
import { rankOf, type Role } from '../../platform/http/permissions.js';
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
    role: row.role,
    createdAt: iso(row.created_at),
    expiresAt: iso(row.expires_at),
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
   * Makes a key named `body.name` (trimmed), acting with `body.role` (default `callerRole`) until
   * `body.expiresAt` (default never).
   * @param callerRole the role of the request making it: no key is made stronger than its maker.
   * @param userId the person making it (a person's session or key), whose key it becomes: it then acts with
   *   at most the person's current role and ends with the person (docs/teams.md); null for an account key.
   * @returns the key as listed with `rawKey`, the key itself: the only time it is ever seen.
   * @throws HttpError 400 naming `name` for the embedded agent's name, `role` for a role above
   *   `callerRole`, `expiresAt` for a time not in the future.
   */
  async create(
    accountId: string,
    body: CreateApiKey,
    nowMs: number,
    callerRole: Role,
    userId: string | null = null,
  ): Promise<CreatedApiKey> {
    const name = body.name.trim();
    if (name === EMBEDDED_AGENT_KEY_LABEL) {
      throw badField('name', `cannot be ${EMBEDDED_AGENT_KEY_LABEL}: the embedded agent's key has it`, 'not');
    }
    const role = body.role ?? callerRole;
    if (rankOf(role) > rankOf(callerRole)) {
      throw badField(
        'role',
        `cannot be above the role of the key or person making it (${callerRole})`,
        'enum',
      );
    }
    const expiresAt = body.expiresAt === undefined ? null : Date.parse(body.expiresAt);
    if (expiresAt !== null && !(expiresAt > nowMs)) {
      throw badField('expiresAt', 'must be in the future', 'format');
    }
    const rawKey = generateApiKey();
    const row: ApiKeyRow = {
      id: randomUUID(),
      account_id: accountId,
      key_prefix: rawKey.slice(0, KEY_PREFIX_CHARS),
      label: name,
      role,
      created_at: nowMs,
      expires_at: expiresAt,
      last_used_at: null,
    };
    await this.#rows.insert({ ...row, key_hash: hashApiKey(rawKey), user_id: userId });
    return { ...presentApiKey(row), rawKey };
  }

  /**
   * Revokes the key `id`: it stops working at once, and so do the web sessions opened with it.
   * @param currentKeyId the key of the request doing it (`request.apiKeyId`).
   * @param callerRole the role of the request doing it: a key stronger than its caller stays.
   * @throws HttpError 409 OUTPOST_ERR_API_KEY_IN_USE when `id` is `currentKeyId`; 403 OUTPOST_ERR_FORBIDDEN
   *   for a key of a role above `callerRole`; 404 when the account has no such key (or it is the embedded
   *   agent's).
   */
  async revoke(accountId: string, id: string, currentKeyId: string | null, callerRole: Role): Promise<void> {
    const row = await this.#rows.get(accountId, id);
    if (!row) throw notFound('API key', id);
    if (id === currentKeyId) {
      throw new HttpError(
        'OUTPOST_ERR_API_KEY_IN_USE',
        'this request is authenticated with this key (or a web session opened with it): revoke it with another key of the account',
        { id },
      );
    }
    if (rankOf(row.role) > rankOf(callerRole)) {
      throw new HttpError(
        'OUTPOST_ERR_FORBIDDEN',
        `this key's role (${row.role}) is above the caller's (${callerRole}): only a caller of that role may revoke it`,
        { permission: 'admin', role: row.role },
      );
    }
    if (!(await this.#rows.delete(accountId, id))) throw notFound('API key', id);
  }
}
