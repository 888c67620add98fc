import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { OutpostError } from '../../../common/errors.js';

/** Length of the AES-256 key in bytes. */
export const SECRET_KEY_BYTES = 32;
/** Prefix of every value sealed by a SecretBox (format version 1: AES-256-GCM). */
export const SEALED_PREFIX = 'v1:';
/** Name of the key file created in the data directory when `OUTPOST_ENCRYPTION_KEY` is unset. */
export const KEY_FILE_NAME = 'encryption.key';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Parses a 32-byte key written as base64 (44 characters, standard or URL alphabet) or hex (64 characters).
 * @returns the key, or null when `text` is neither.
 */
export function parseSecretKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) {
    const key = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length === SECRET_KEY_BYTES) return key;
  }
  return null;
}

/**
 * Seals and opens secret values at rest with AES-256-GCM (node:crypto): a random 96-bit nonce per value,
 * the stored text `v1:<base64 of nonce | ciphertext | 16-byte tag>`, and the value's place (`table:rowId:field`)
 * as additional authenticated data, so a sealed value copied into another row or field does not open.
 */
export class SecretBox {
  readonly #key: Buffer;
  /** Where the key came from, for error messages (`OUTPOST_ENCRYPTION_KEY`, a key file path, or `ephemeral`). */
  readonly source: string;

  /** @throws OutpostError OUTPOST_ERR_ENCRYPTION_KEY when `key` is not 32 bytes. */
  constructor(key: Buffer, source: string) {
    if (key.length !== SECRET_KEY_BYTES) {
      throw new OutpostError(
        'OUTPOST_ERR_ENCRYPTION_KEY',
        `encryption key from ${source} must be ${SECRET_KEY_BYTES} bytes, got ${key.length}`,
      );
    }
    this.#key = Buffer.from(key);
    this.source = source;
  }

  /** A box with a random key that lives as long as the process (in-memory stores and tests only). */
  static ephemeral(): SecretBox {
    return new SecretBox(randomBytes(SECRET_KEY_BYTES), 'ephemeral');
  }

  /** True when `stored` is a sealed value (starts with `v1:`). */
  static isSealed(stored: unknown): stored is string {
    return typeof stored === 'string' && stored.startsWith(SEALED_PREFIX);
  }

  /**
   * Seals `plaintext` for the place `aad` (e.g. `variables:<id>:value`).
   * @returns `v1:<base64>`.
   */
  seal(plaintext: string, aad: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return SEALED_PREFIX + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64');
  }

  /**
   * Opens a value sealed for the place `aad`.
   * @throws OutpostError OUTPOST_ERR_ENCRYPTION_KEY when `stored` is not sealed, is damaged, was sealed for
   *   another place, or was sealed with another key: never returns garbage.
   */
  open(stored: string, aad: string): string {
    if (!SecretBox.isSealed(stored)) {
      throw new OutpostError(
        'OUTPOST_ERR_ENCRYPTION_KEY',
        `stored secret ${aad} is not sealed (${SEALED_PREFIX}…)`,
      );
    }
    const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64');
    try {
      if (raw.length < NONCE_BYTES + TAG_BYTES) throw new Error('too short');
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, NONCE_BYTES), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      const body = raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch (cause) {
      throw new OutpostError(
        'OUTPOST_ERR_ENCRYPTION_KEY',
        `stored secret ${aad} cannot be opened with the key from ${this.source}: wrong key (set the OUTPOST_ENCRYPTION_KEY the store was written with) or damaged data`,
        { cause },
      );
    }
  }

  /** Seals `value` unless it is sealed already (so sealing the store at start-up is idempotent). */
  sealOnce(value: string, aad: string): string {
    return SecretBox.isSealed(value) ? value : this.seal(value, aad);
  }

  /**
   * A 32-byte key for one purpose, derived from this box's key with HKDF-SHA256 (RFC 5869; empty salt, the
   * box key being random already; `info` = `purpose`). The same box key and purpose always give the same
   * key, so what it signs survives restarts; another purpose gives an unrelated key, and the box key cannot
   * be recovered from it. Purposes in use: `web-session-cookie`, `web-csrf` (src/service/platform/web/sessions.ts).
   * @throws RangeError when `purpose` is empty.
   */
  deriveKey(purpose: string): Buffer {
    if (purpose === '') throw new RangeError('deriveKey needs a purpose');
    return Buffer.from(hkdfSync('sha256', this.#key, Buffer.alloc(0), purpose, SECRET_KEY_BYTES));
  }
}

/**
 * Reads the key file `<dataDir>/encryption.key`, creating it on first start: 32 random bytes as base64,
 * mode 0600, published atomically (written to a temporary file opened with O_EXCL, then hard-linked into
 * place, which fails if another process got there first, in which case its key is used).
 * @throws OutpostError OUTPOST_ERR_ENCRYPTION_KEY with a one-line message naming the file when it is
 *   readable or writable by group or others, or does not hold a 32-byte base64/hex key.
 */
export function loadOrCreateKeyFile(dataDir: string): Buffer {
  const path = join(dataDir, KEY_FILE_NAME);
  let exists = true;
  try {
    statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    exists = false;
  }
  if (!exists) {
    const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      // The mode given to open() is reduced by the umask only; make it exactly 0600 regardless.
      fchmodSync(fd, 0o600);
      writeSync(fd, `${randomBytes(SECRET_KEY_BYTES).toString('base64')}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSync(tmp);
    }
  }
  return readKeyFile(path);
}

function readKeyFile(path: string): Buffer {
  const st = statSync(path);
  if (!st.isFile()) {
    throw new OutpostError('OUTPOST_ERR_ENCRYPTION_KEY', `encryption key file ${path} is not a regular file`);
  }
  if ((st.mode & 0o077) !== 0) {
    throw new OutpostError(
      'OUTPOST_ERR_ENCRYPTION_KEY',
      `encryption key file ${path} has mode 0${(st.mode & 0o777).toString(8)}: it must be readable by its owner only (chmod 600 ${path})`,
    );
  }
  const key = parseSecretKey(readFileSync(path, 'utf8'));
  if (!key) {
    throw new OutpostError(
      'OUTPOST_ERR_ENCRYPTION_KEY',
      `encryption key file ${path} must hold a ${SECRET_KEY_BYTES}-byte key as base64 or hex (${st.size} bytes found)`,
    );
  }
  return key;
}

/**
 * The box a service uses: the key from `OUTPOST_ENCRYPTION_KEY` (parsed by the config) when set, else the
 * key file in `dataDir` (see loadOrCreateKeyFile), else, for an in-memory store, an ephemeral key.
 */
export function openSecretBox(options: {
  encryptionKey: Buffer | undefined;
  dataDir: string;
  inMemory: boolean;
}): SecretBox {
  if (options.encryptionKey) return new SecretBox(options.encryptionKey, 'OUTPOST_ENCRYPTION_KEY');
  if (options.inMemory) return SecretBox.ephemeral();
  return new SecretBox(loadOrCreateKeyFile(options.dataDir), join(options.dataDir, KEY_FILE_NAME));
}

const boxes = new WeakMap<object, SecretBox>();
let processBox: SecretBox | undefined;

/**
 * What identifies one store across its transactions: a Kysely handle and every transaction opened from it
 * share their dialect adapter object.
 */
function storeKey(db: object): object {
  const executor = (db as { getExecutor?: () => { adapter?: object } }).getExecutor?.();
  return executor?.adapter ?? db;
}

/** Ties `box` to a store handle (and its transactions), so every reader and writer of that store uses it. */
export function attachSecretBox(db: object, box: SecretBox): void {
  boxes.set(storeKey(db), box);
}

/**
 * The box tied to a store handle or one of its transactions. A store with none (opened by a test without
 * `startService`) gets the process's ephemeral box: its secrets are readable while the process lives.
 */
export function secretBoxOf(db: object): SecretBox {
  const box = boxes.get(storeKey(db));
  if (box) return box;
  processBox ??= SecretBox.ephemeral();
  return processBox;
}
