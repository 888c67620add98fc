import { hash, verify } from '@node-rs/argon2';

/** `Algorithm.Argon2id` of `@node-rs/argon2` (a `const enum`, which this build's module syntax cannot import). */
const ARGON2ID = 2;
import { badField } from '../platform/http/errors.js';

/** Shortest password, characters (docs/teams.md, "Passwords"; NIST SP 800-63B asks at least 8, we ask 12). */
export const PASSWORD_MIN_CHARS = 12;
/** Longest password, characters: long enough for any passphrase, short enough to bound the hashing. */
export const PASSWORD_MAX_CHARS = 128;

/**
 * The Argon2id parameters: OWASP's Password Storage Cheat Sheet's first configuration (m = 19 456 KiB,
 * t = 2, p = 1), not a library's defaults. Chosen because a sign-in costs about
 * 20 MiB and one thread for some 30 ms here, so a burst of sign-ins on a small machine (2 cores) neither
 * exhausts memory nor starves the checks, while staying at the strength OWASP recommends. The hashing
 * runs in libuv's thread pool (`@node-rs/argon2`, the reference implementation's Rust port behind N-API, whose
 * prebuilt binaries come from the npm registry with no install script), never on the event loop.
 */
export const ARGON2_OPTIONS = {
  algorithm: ARGON2ID,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

/**
 * Checks the length of a password a person chose (12–128 characters, counted in code points).
 * @throws HttpError 400 naming `field` when it is shorter or longer.
 */
export function checkPassword(password: string, field: string): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN_CHARS || length > PASSWORD_MAX_CHARS) {
    throw badField(
      field,
      `must be ${PASSWORD_MIN_CHARS} to ${PASSWORD_MAX_CHARS} characters long, was ${length}`,
      'passwordLength',
    );
  }
}

/** The Argon2id PHC string of `password` (a random 16-byte salt each time). */
export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_OPTIONS);
}

let dummyHash: Promise<string> | undefined;

/**
 * Whether `password` is the one `hash` was made of. With `hash` null (no such person, or one who has no
 * password yet) it verifies against a hash of a random password made once, so the answer takes as long
 * as for a person who has one, and is false (docs/teams.md, "Signing in": no enumeration by timing).
 */
export async function verifyPassword(hash: string | null, password: string): Promise<boolean> {
  if (hash === null) {
    dummyHash ??= hashPassword(`dummy-${Math.random()}-${Date.now()}`);
    await verify(await dummyHash, password);
    return false;
  }
  try {
    return await verify(hash, password);
  } catch {
    return false;
  }
}
