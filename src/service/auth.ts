import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { sendError } from './errors.js';
import type { Database } from './store/database.js';

/** API keys are `op_` + 32 random bytes in hex; only their SHA-256 is stored. */
export function generateApiKey(): string {
  return `op_${randomBytes(32).toString('hex')}`;
}

/**
 * Hash of a key for storage and look-up. Keys carry 256 random bits, so a
 * fast hash is enough: there is nothing to brute-force (unlike passwords).
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Creates an account; returns its id. */
export async function createAccount(
  db: Kysely<Database>,
  name: string,
  id: string = randomUUID(),
): Promise<string> {
  await db.insertInto('accounts').values({ id, name, created_at: Date.now() }).execute();
  return id;
}

/** Stores a key for an account (generated unless given); returns the key in clear, the only time it is seen. */
export async function createApiKey(
  db: Kysely<Database>,
  accountId: string,
  key: string = generateApiKey(),
  label: string | null = null,
): Promise<string> {
  await db
    .insertInto('api_keys')
    .values({
      id: randomUUID(),
      account_id: accountId,
      key_hash: hashApiKey(key),
      key_prefix: key.slice(0, 7),
      label,
      created_at: Date.now(),
    })
    .execute();
  return key;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated account; set by the auth hook on every /v1 route. */
    accountId: string;
  }
}

/**
 * Fastify onRequest hook: `Authorization: Bearer <key>` is required; an
 * `x-service-account` header, when sent, must name the key's account.
 * Anything else answers 401 with the spec's body (service-api.md, "Authentication").
 */
export function authHook(db: Kysely<Database>) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      await sendError(reply, 401, 'missing or malformed Authorization header; expected "Bearer <API key>"');
      return reply;
    }
    const row = await db
      .selectFrom('api_keys')
      .select('account_id')
      .where('key_hash', '=', hashApiKey(match[1]!))
      .executeTakeFirst();
    const accountHeader = request.headers['x-service-account'];
    if (
      !row ||
      (typeof accountHeader === 'string' && accountHeader !== '' && accountHeader !== row.account_id)
    ) {
      await sendError(reply, 401, 'invalid API key or account');
      return reply;
    }
    request.accountId = row.account_id;
  };
}
