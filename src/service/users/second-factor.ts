import type { Kysely } from 'kysely';
import type { Database } from '../platform/store/database.js';
import { type UserRow, UserQueries } from './store.js';
import { newRecoveryCode, normalizeRecoveryCode, RECOVERY_CODE_COUNT, tokenHashOf } from './tokens.js';
import { totpMatches } from './two-factor.js';

/** The HMAC scope of person `userId`'s recovery codes. */
function recoveryScope(userId: string): string {
  return `recovery:${userId}`;
}

/**
 * Replaces person `user`'s recovery codes with RECOVERY_CODE_COUNT new ones (stored as HMACs only).
 * @returns the codes in clear, shown once.
 */
export async function newRecoveryCodes(
  db: Kysely<Database>,
  user: Pick<UserRow, 'id' | 'account_id'>,
  nowMs: number,
) {
  const queries = new UserQueries(db);
  await queries.deleteTokens(user.id, 'recovery');
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  for (const code of codes) {
    await queries.insertToken({
      token_hash: tokenHashOf(db, recoveryScope(user.id), code),
      kind: 'recovery',
      user_id: user.id,
      account_id: user.account_id,
      created_at: nowMs,
      expires_at: null,
      used_at: null,
    });
  }
  return codes;
}

/**
 * Whether `code` is person `user`'s second factor now: the TOTP of their seed (±1 step), or one of their
 * recovery codes not used yet, which this uses up (docs/teams.md, "Two-factor"). False when two-factor is
 * off.
 */
export async function secondFactorMatches(
  db: Kysely<Database>,
  user: Pick<UserRow, 'id' | 'totp_secret' | 'totp_enabled_at'>,
  code: string,
  nowMs: number,
): Promise<boolean> {
  if (user.totp_enabled_at === null || user.totp_secret === null) return false;
  const trimmed = code.replace(/\s/g, '');
  if (/^\d{6}$/.test(trimmed)) return totpMatches(db, user.id, user.totp_secret, trimmed, nowMs);
  const queries = new UserQueries(db);
  const tokenHash = tokenHashOf(db, recoveryScope(user.id), normalizeRecoveryCode(code));
  const row = await queries.token(tokenHash, 'recovery');
  if (!row || row.user_id !== user.id || row.used_at !== null) return false;
  return queries.useToken(tokenHash, nowMs);
}
