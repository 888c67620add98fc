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

/** The private location a `pl_` key authenticated for. */
export type PrivateLocationRef = { id: string; slug: string };

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated account; set by the auth hook on every /v1 route. */
    accountId: string;
    /**
     * The private location when the request authenticated with a private-location
     * key (`pl_…`, agent routes only); null for an account API key.
     */
    privateLocation: PrivateLocationRef | null;
  }
}

/** Prefix of private-location keys (design.md §1). */
export const PRIVATE_LOCATION_KEY_PREFIX = 'pl_';

/** Routes a private-location key may call: the agent protocol only (design.md §2). */
const AGENT_ROUTE_PREFIX = '/v1/agent/';

/** Resolves a key to its account, and to its private location for a `pl_` key; null when unknown. */
async function lookUpKey(
  db: Kysely<Database>,
  key: string,
): Promise<{ accountId: string; privateLocation: PrivateLocationRef | null } | null> {
  const keyHash = hashApiKey(key);
  if (key.startsWith(PRIVATE_LOCATION_KEY_PREFIX)) {
    const row = await db
      .selectFrom('private_location_keys as k')
      .innerJoin('private_locations as l', 'l.id', 'k.location_id')
      .select(['l.account_id', 'l.id', 'l.slug'])
      .where('k.key_hash', '=', keyHash)
      .executeTakeFirst();
    return row ? { accountId: row.account_id, privateLocation: { id: row.id, slug: row.slug } } : null;
  }
  const row = await db
    .selectFrom('api_keys')
    .select('account_id')
    .where('key_hash', '=', keyHash)
    .executeTakeFirst();
  return row ? { accountId: row.account_id, privateLocation: null } : null;
}

/**
 * Fastify onRequest hook: `Authorization: Bearer <key>` is required; an
 * `x-service-account` header, when sent, must name the key's account.
 * A private-location key (`pl_…`) authenticates as its location's account and
 * sets `request.privateLocation`, on `/v1/agent/*` routes only.
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
    const found = await lookUpKey(db, match[1]!);
    const accountHeader = request.headers['x-service-account'];
    if (
      !found ||
      (typeof accountHeader === 'string' && accountHeader !== '' && accountHeader !== found.accountId)
    ) {
      await sendError(reply, 401, 'invalid API key or account');
      return reply;
    }
    // The matched route pattern, not the raw URL, so no path trick reaches another route.
    if (found.privateLocation && !request.routeOptions.url?.startsWith(AGENT_ROUTE_PREFIX)) {
      await sendError(
        reply,
        401,
        'a private-location key is valid on /v1/agent/ routes only; use an account API key',
      );
      return reply;
    }
    request.accountId = found.accountId;
    request.privateLocation = found.privateLocation;
  };
}
