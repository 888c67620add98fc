import { describe, expect, it } from 'vitest';
import { redactDatabaseUrl } from '../../../../src/service/platform/store/postgres.js';

describe('redactDatabaseUrl', () => {
  it('hides the password of the user part and of the query string, whatever its encoding', () => {
    const secret = 'p@ss w/rd:8841';
    const urls = [
      `postgres://outpost:${encodeURIComponent(secret)}@db:5432/outpost`,
      `postgres://outpost@db/outpost?sslmode=require&password=${encodeURIComponent(secret)}`,
      `postgresql://outpost@db/outpost?PASSWORD=${encodeURIComponent(secret)}`,
    ];
    for (const url of urls) {
      const shown = redactDatabaseUrl(url);
      expect(shown).toContain('***');
      for (const form of [secret, encodeURIComponent(secret), secret.replace(/ /g, '+'), 'w/rd', 'rd:8841']) {
        expect(shown).not.toContain(form);
      }
      expect(shown).toContain('db');
    }
    expect(redactDatabaseUrl('not a url')).toBe('(not a URL)');
  });
});
