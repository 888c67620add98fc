import { createHmac, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../platform/store/database.js';
import { secretBoxOf } from '../platform/store/secret-box.js';

/** `SecretBox.deriveKey` purpose of the HMAC that stores people's tokens and recovery codes. */
export const TOKEN_KEY_PURPOSE = 'user-tokens';
/** `SecretBox.deriveKey` purpose of the public ids of sessions (GET /v1/users/me/sessions). */
export const SESSION_ID_KEY_PURPOSE = 'web-session-public-id';

/** A new token: 32 random bytes, base64url (256 bits: nothing to guess). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The HMAC-SHA256 (hex) under which a token is stored (`user_tokens.token_hash`), keyed by the store's
 * SecretBox (purpose `user-tokens`): a copy of the table without the key cannot be tried offline, which
 * matters for recovery codes (50 bits each). `scope` keeps kinds apart (`recovery:<userId>` for a code).
 */
export function tokenHashOf(db: Kysely<Database>, scope: string, token: string): string {
  return createHmac('sha256', secretBoxOf(db).deriveKey(TOKEN_KEY_PURPOSE))
    .update(`${scope}\n${token}`)
    .digest('hex');
}

/**
 * The public id of a session (what GET /v1/users/me/sessions shows and DELETE takes): the first 16 hex
 * characters of HMAC-SHA256(`web-session-public-id` key, the session's id hash). Neither the cookie's id
 * nor its SHA-256 can be found from it.
 */
export function publicSessionIdOf(db: Kysely<Database>, idHash: string): string {
  return createHmac('sha256', secretBoxOf(db).deriveKey(SESSION_ID_KEY_PURPOSE))
    .update(idHash)
    .digest('hex')
    .slice(0, 16);
}

/** Recovery codes given when two-factor is turned on (docs/teams.md, "Two-factor"). */
export const RECOVERY_CODE_COUNT = 10;
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** A recovery code: 10 characters of a 31-letter alphabet without look-alikes, as `xxxxx-xxxxx` (~50 bits). */
export function newRecoveryCode(): string {
  const bytes = randomBytes(10);
  let code = '';
  for (const byte of bytes) code += RECOVERY_ALPHABET[byte % RECOVERY_ALPHABET.length];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

/** A recovery code as typed (any case, spaces or dashes) in the form it is stored under. */
export function normalizeRecoveryCode(code: string): string {
  const bare = code.toLowerCase().replace(/[\s-]/g, '');
  return bare.length === 10 ? `${bare.slice(0, 5)}-${bare.slice(5)}` : bare;
}
