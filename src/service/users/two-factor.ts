import { Secret, TOTP } from 'otpauth';
import type { Kysely } from 'kysely';
import type { Database } from '../platform/store/database.js';
import { secretBoxOf } from '../platform/store/secret-box.js';

/** The issuer shown by authenticator apps next to the person's email. */
export const TOTP_ISSUER = 'Outpost';
/** Steps either side of now a code may be from (RFC 6238 §5.2: ±1 step of 30 s for clock drift). */
export const TOTP_WINDOW_STEPS = 1;

/** Where a person's sealed TOTP seed sits (the SecretBox AAD): `users:<id>:totp_secret`. */
export function totpAad(userId: string): string {
  return `users:${userId}:totp_secret`;
}

/** A TOTP of the seed `base32` (RFC 6238: SHA-1, 6 digits, 30 s) labelled with `email`. */
function totpOf(base32: string, email: string): TOTP {
  return new TOTP({
    issuer: TOTP_ISSUER,
    label: email,
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
    secret: Secret.fromBase32(base32),
  });
}

/**
 * A new TOTP seed (20 random bytes, RFC 4226's recommended length) for person `userId`: the seed in base32
 * (shown once, to type into an app), its `otpauth://` URL (for the QR code), and the seed sealed by the
 * store's SecretBox for `users.totp_secret`.
 */
export function newTotpSeed(
  db: Kysely<Database>,
  userId: string,
  email: string,
): { secret: string; otpauthUrl: string; sealed: string } {
  const secret = new Secret({ size: 20 }).base32;
  return {
    secret,
    otpauthUrl: totpOf(secret, email).toString(),
    sealed: secretBoxOf(db).seal(secret, totpAad(userId)),
  };
}

/**
 * Whether `code` (6 digits) is the TOTP of person `userId`'s sealed seed `sealed` now (`nowMs`, epoch ms),
 * one step either side allowed.
 * @throws OutpostError OUTPOST_ERR_ENCRYPTION_KEY when the seed cannot be opened (another key).
 */
export function totpMatches(
  db: Kysely<Database>,
  userId: string,
  sealed: string,
  code: string,
  nowMs: number,
): boolean {
  if (!/^\d{6}$/.test(code)) return false;
  const secret = secretBoxOf(db).open(sealed, totpAad(userId));
  return totpOf(secret, '').validate({ token: code, timestamp: nowMs, window: TOTP_WINDOW_STEPS }) !== null;
}
