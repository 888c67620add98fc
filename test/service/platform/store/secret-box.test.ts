import { mkdtempSync, chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasCode } from '../../../../src/common/errors.js';
import {
  KEY_FILE_NAME,
  loadOrCreateKeyFile,
  parseSecretKey,
  SecretBox,
} from '../../../../src/service/platform/store/secret-box.js';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('did not throw');
}

describe('SecretBox', () => {
  it('round-trips a value and never stores it in any encoding', () => {
    const box = SecretBox.ephemeral();
    const secret = 'p@ss"word\u00e9 <tag>';
    const sealed = box.seal(secret, 'variables:1:value');
    expect(sealed.startsWith('v1:')).toBe(true);
    for (const form of [
      secret,
      Buffer.from(secret).toString('base64'),
      Buffer.from(secret).toString('hex'),
    ]) {
      expect(sealed).not.toContain(form);
    }
    expect(box.open(sealed, 'variables:1:value')).toBe(secret);
  });

  it('uses a fresh nonce per value', () => {
    const box = SecretBox.ephemeral();
    expect(box.seal('same', 'a')).not.toBe(box.seal('same', 'a'));
  });

  it('refuses a value moved to another row or field, a wrong key and damaged data with a clear error', () => {
    const box = SecretBox.ephemeral();
    const sealed = box.seal('secret', 'variables:1:value');
    const other = SecretBox.ephemeral();
    const tampered = `v1:${Buffer.from(Buffer.from(sealed.slice(3), 'base64').map((b, i) => (i === 14 ? b ^ 1 : b))).toString('base64')}`;
    for (const [b, text, aad] of [
      [box, sealed, 'variables:2:value'],
      [box, sealed, 'variables:1:other'],
      [other, sealed, 'variables:1:value'],
      [box, tampered, 'variables:1:value'],
      [box, 'v1:AAAA', 'variables:1:value'],
      [box, 'plain', 'variables:1:value'],
    ] as const) {
      const err = thrown(() => b.open(text, aad));
      expect(hasCode(err, 'OUTPOST_ERR_ENCRYPTION_KEY')).toBe(true);
    }
    expect((thrown(() => other.open(sealed, 'variables:1:value')) as Error).message).toMatch(/wrong key/);
  });

  it('parses 32-byte keys as base64 or hex only', () => {
    const key = Buffer.alloc(32, 7);
    expect(parseSecretKey(key.toString('base64'))).toEqual(key);
    expect(parseSecretKey(key.toString('base64url'))).toEqual(key);
    expect(parseSecretKey(key.toString('hex'))).toEqual(key);
    expect(parseSecretKey(Buffer.alloc(16).toString('base64'))).toBeNull();
    expect(parseSecretKey(Buffer.alloc(31).toString('hex'))).toBeNull();
    expect(parseSecretKey('not a key')).toBeNull();
  });
});

describe('loadOrCreateKeyFile', () => {
  it('creates a 0600 key file once and reads the same key afterwards', () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-key-'));
    const first = loadOrCreateKeyFile(dir);
    expect(first.length).toBe(32);
    expect(statSync(join(dir, KEY_FILE_NAME)).mode & 0o777).toBe(0o600);
    expect(loadOrCreateKeyFile(dir)).toEqual(first);
    expect(parseSecretKey(readFileSync(join(dir, KEY_FILE_NAME), 'utf8'))).toEqual(first);
  });

  it('creates the file 0600 even under a permissive umask', () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-key-'));
    const old = process.umask(0);
    try {
      loadOrCreateKeyFile(dir);
    } finally {
      process.umask(old);
    }
    expect(statSync(join(dir, KEY_FILE_NAME)).mode & 0o777).toBe(0o600);
  });

  it.each([0o640, 0o604, 0o644, 0o660])('refuses a key file of mode %o with one line naming it', (mode) => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-key-'));
    loadOrCreateKeyFile(dir);
    chmodSync(join(dir, KEY_FILE_NAME), mode);
    const err = thrown(() => loadOrCreateKeyFile(dir)) as Error;
    expect(hasCode(err, 'OUTPOST_ERR_ENCRYPTION_KEY')).toBe(true);
    expect(err.message).toContain(join(dir, KEY_FILE_NAME));
    expect(err.message).not.toContain('\n');
  });

  it.each([
    ['short', Buffer.alloc(16).toString('base64')],
    ['empty', ''],
    ['raw bytes', Buffer.alloc(32, 1).toString('latin1')],
  ])('refuses a key file of the wrong size (%s)', (_name, content) => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-key-'));
    writeFileSync(join(dir, KEY_FILE_NAME), content, { mode: 0o600 });
    const err = thrown(() => loadOrCreateKeyFile(dir)) as Error;
    expect(hasCode(err, 'OUTPOST_ERR_ENCRYPTION_KEY')).toBe(true);
    expect(err.message).toMatch(/32-byte key/);
  });
});
