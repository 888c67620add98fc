import { describe, expect, it } from 'vitest';
import {
  AUDIT_DOCUMENT_MAX_BYTES,
  AUDIT_PARSE_MAX_BYTES,
  auditDocument,
  isSecretFieldName,
} from '../../src/service/audit-log/masking.js';
import { resourceOf } from '../../src/service/audit-log/resources.js';
import { LIMIT_MS } from '../helpers/event-loop.js';
import { expectNoSecret } from '../helpers/secrets.js';

// What the audit log keeps of a document (audit-log/masking.ts): the one-time secrets of features that answer
// them (people, two-factor, invitations, keys) dropped by name, secrets found by value, documents capped.

const S = 'Planted-Secret-7f3a9c1e2b';

describe('auditDocument', () => {
  it('drops the one-time secrets of people, two-factor, invitations and keys, keeping what names them', () => {
    const kept = auditDocument('user', {
      id: 'u-1',
      email: 'ann@example.com',
      role: 'ADMIN',
      recoveryCodes: [`${S}-1`, `${S}-2`],
      secret: `${S}-3`,
      otpauthUrl: `otpauth://totp/Outpost:ann?secret=${S}4`,
      invitationUrl: `https://outpost.example/invite?token=${S}-5`,
      rawKey: `op_${'a'.repeat(64)}`,
      token: `${S}-6`,
      password: `${S}-7`,
      apiKeyId: 'k-1',
      totpEnabledAt: '2026-01-01T00:00:00Z',
      nested: { clientSecret: `${S}-8`, items: [{ key: 'Authorization', value: `${S}-9` }] },
      note: `a key op_${'b'.repeat(64)} pasted in a note`,
      webhook: `https://user:${S}-10@hooks.example.test/x?sig=${S}-11&page=2`,
    })!;
    for (const n of ['-1', '-2', '-3', '4', '-5', '-6', '-7', '-8', '-9', '-10', '-11'])
      expectNoSecret(kept, `${S}${n}`);
    expect(kept).not.toContain('a'.repeat(64));
    expect(kept).not.toContain('b'.repeat(64));
    const doc = JSON.parse(kept);
    expect(doc).toMatchObject({
      id: 'u-1',
      email: 'ann@example.com',
      role: 'ADMIN',
      apiKeyId: 'k-1',
      totpEnabledAt: '2026-01-01T00:00:00Z',
      recoveryCodes: '*****',
      nested: { items: [{ key: 'Authorization', value: '*****' }] },
    });
    expect(doc.webhook).toBe('https://user:*****@hooks.example.test/x?sig=*****&page=2');
  });

  it('keeps a secret variable masked, a plain one readable, and a secret flag', () => {
    const doc = JSON.parse(
      auditDocument('variable', [
        { key: 'A', value: `${S}-v`, secret: true },
        { key: 'B', value: 'plain', secret: false },
      ])!,
    );
    expect(doc).toEqual([
      { key: 'A', value: '*****', secret: true },
      { key: 'B', value: 'plain', secret: false },
    ]);
  });

  it('masks an alert channel’s integration secrets by its type’s layout, whatever their field is named', () => {
    const doc = JSON.parse(
      auditDocument('alert-channel', {
        type: 'APPRISE',
        config: { name: 'ops', urls: `tgram://${S}/42` },
      })!,
    );
    expect(doc.config).toEqual({ name: 'ops', urls: '*****' });
  });

  it('keeps a document over 64 KiB as a marker', () => {
    const kept = auditDocument('snippet', { script: 'x'.repeat(AUDIT_DOCUMENT_MAX_BYTES) })!;
    const bytes = JSON.stringify({ script: 'x'.repeat(AUDIT_DOCUMENT_MAX_BYTES) }).length;
    expect(JSON.parse(kept)).toEqual({ truncated: true, bytes });
  });

  it('an answer as large as is parsed (256 KiB of small fields) is parsed and masked within the loop limit', () => {
    const items = Array.from({ length: 4_200 }, (_, i) => ({
      key: `H${i}`,
      value: `v${i}`,
      token: `t${i}`,
      n: i,
    }));
    const text = JSON.stringify({ id: 'x', request: { url: 'https://a.test/?token=1', headers: items } });
    expect(Buffer.byteLength(text)).toBeGreaterThan(AUDIT_PARSE_MAX_BYTES * 0.8);
    expect(Buffer.byteLength(text)).toBeLessThan(AUDIT_PARSE_MAX_BYTES);
    let worstMs = 0;
    for (let run = 0; run < 3; run++) {
      const started = performance.now();
      const kept = auditDocument('check', JSON.parse(text));
      worstMs = run === 0 ? worstMs : Math.max(worstMs, performance.now() - started);
      expect(JSON.parse(kept!)).toMatchObject({ truncated: true });
    }
    expect(worstMs).toBeLessThan(LIMIT_MS);
  });

  it('names: words that may carry a secret, but not the ids and times named after them', () => {
    for (const name of [
      'key',
      'rawKey',
      'apiKey',
      'client_secret',
      'x-auth-token',
      'recoveryCodes',
      'otpauthUrl',
      'passphrase',
    ])
      expect(isSecretFieldName(name), name).toBe(true);
    for (const name of ['name', 'apiKeyId', 'keyCount', 'tokenExpiresAt', 'url', 'email', 'secretType'])
      expect(isSecretFieldName(name), name).toBe(false);
  });
});

describe('resourceOf', () => {
  it('types, ids and actions from the route, for routes known and routes added later', () => {
    expect(resourceOf('PUT', '/v1/checks/api/:id', { id: 'c1' }, null)).toMatchObject({
      action: 'check.update',
      resourceId: 'c1',
    });
    expect(resourceOf('POST', '/v1/private-locations/:id/keys', { id: 'l1' }, { id: 'k1' })).toMatchObject({
      action: 'private-location-key.create',
      resourceId: 'k1',
    });
    expect(resourceOf('POST', '/v1/alert-channels/:id/test', { id: 7 }, {})).toMatchObject({
      action: 'alert-channel.test',
      resourceId: '7',
      changesDocument: false,
    });
    expect(resourceOf('PUT', '/v1/alert-settings', {}, {})).toMatchObject({
      action: 'alert-settings.update',
      resourceId: null,
    });
    expect(resourceOf('DELETE', '/v1/widgets/:id', { id: 'w' }, null)).toMatchObject({
      action: 'widget.delete',
      resourceType: 'widget',
      resourceId: 'w',
    });
  });
});
