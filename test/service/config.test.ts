import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OutpostError } from '../../src/common/errors.js';
import { parseServiceConfig } from '../../src/service/config.js';

function configError(env: NodeJS.ProcessEnv): OutpostError {
  try {
    parseServiceConfig(env);
  } catch (err) {
    if (err instanceof OutpostError) return err;
    throw err;
  }
  throw new Error('parseServiceConfig accepted a bad environment');
}

describe('parseServiceConfig', () => {
  it('reads OUTPOST_API_CREDENTIALS in any case and refuses another value, naming what it takes', () => {
    expect(parseServiceConfig({ OUTPOST_API_CREDENTIALS: 'Clear' }).apiCredentials).toBe('clear');
    expect(parseServiceConfig({}).apiCredentials).toBe('masked');
    expect(configError({ OUTPOST_API_CREDENTIALS: 'plain' }).message).toMatch(
      /OUTPOST_API_CREDENTIALS.*masked or clear/,
    );
  });

  it('applies every default on an empty environment, empty variables counting as unset', () => {
    const expected = {
      port: 3000,
      host: '127.0.0.1',
      dataDir: resolve('./data'),
      databaseFile: resolve('./data', 'outpost.db'),
      databaseUrl: undefined,
      databaseNotify: true,
      databasePreparedStatements: true,
      leaseMs: 300_000,
      queueExpiryMs: 360_000,
      resultRetentionDays: 90,
      artifactRetentionDays: 30,
      agentRetentionDays: 30,
      passingDetailHours: 24,
      appUrl: 'http://localhost:3000',
      logLevel: 'INFO',
      accountId: undefined,
      apiKey: undefined,
      adminEmail: 'admin@localhost',
      encryptionKey: undefined,
      statusPageDomains: [],
      dnsServers: undefined,
      outboundAllow: [],
      outboundPrivate: 'allow',
      apiCredentials: 'masked',
      artifactStore: 'files',
    };
    const config = parseServiceConfig({});
    expect(config).toEqual(expected);
    expect(Object.isFrozen(config)).toBe(true);
    expect(parseServiceConfig({ PORT: '', HOST: '', OUTPOST_API_KEY: '', OUTPOST_APP_URL: '' })).toEqual(
      expected,
    );
  });

  it('reads every variable', () => {
    const key = randomBytes(32);
    expect(
      parseServiceConfig({
        PORT: '8080',
        HOST: '0.0.0.0',
        OUTPOST_DATA_DIR: ':memory:',
        OUTPOST_LEASE_SECONDS: '3',
        OUTPOST_QUEUE_EXPIRY_SECONDS: '4',
        LOG_LEVEL: 'debug',
        OUTPOST_ACCOUNT_ID: 'acct_1',
        OUTPOST_API_KEY: 'k'.repeat(20),
        OUTPOST_ENCRYPTION_KEY: key.toString('hex'),
        OUTPOST_STATUS_PAGE_DOMAINS: ' .Status.Example.com, status.example.org., ,',
        OUTPOST_DNS_SERVERS: '192.0.2.53, 192.0.2.54:5353,2001:db8::53,[2001:db8::54]:53',
      }),
    ).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseFile: ':memory:',
      leaseMs: 3000,
      queueExpiryMs: 4000,
      appUrl: 'http://localhost:8080',
      logLevel: 'DEBUG',
      accountId: 'acct_1',
      apiKey: 'k'.repeat(20),
      encryptionKey: key,
      statusPageDomains: ['.status.example.com', 'status.example.org'],
      dnsServers: ['192.0.2.53', '192.0.2.54:5353', '2001:db8::53', '[2001:db8::54]:53'],
    });
  });

  it('reads OUTPOST_DATABASE_URL, needs OUTPOST_ENCRYPTION_KEY with it, and never echoes its password', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const url = 'postgres://outpost:s3cret-pass@db.internal:5432/outpost?sslmode=require';
    expect(
      parseServiceConfig({
        OUTPOST_DATABASE_URL: url,
        OUTPOST_ENCRYPTION_KEY: key,
        OUTPOST_DATABASE_NOTIFY: 'OFF',
        OUTPOST_DATABASE_PREPARED_STATEMENTS: 'Off',
      }),
    ).toMatchObject({
      databaseUrl: url,
      databaseNotify: false,
      databasePreparedStatements: false,
      artifactStore: 'database',
    });
    // Artifacts go to the database with it, unless told otherwise (any case); a wrong word is refused.
    expect(
      parseServiceConfig({
        OUTPOST_DATABASE_URL: url,
        OUTPOST_ENCRYPTION_KEY: key,
        OUTPOST_ARTIFACT_STORE: ' Files ',
      }),
    ).toMatchObject({ artifactStore: 'files' });
    expect(parseServiceConfig({ OUTPOST_ARTIFACT_STORE: 'database' })).toMatchObject({
      artifactStore: 'database',
    });
    expect(() => parseServiceConfig({ OUTPOST_ARTIFACT_STORE: 's3' })).toThrow(
      /OUTPOST_ARTIFACT_STORE must be files or database/,
    );
    const without = (() => {
      try {
        parseServiceConfig({ OUTPOST_DATABASE_URL: url });
      } catch (err) {
        return err as Error;
      }
      throw new Error('accepted a database URL without an encryption key');
    })();
    expect(without.message).toContain('OUTPOST_ENCRYPTION_KEY must be set with OUTPOST_DATABASE_URL');
    const bad = (() => {
      try {
        parseServiceConfig({
          OUTPOST_DATABASE_URL: 'mysql://outpost:s3cret-pass@db/outpost',
          OUTPOST_ENCRYPTION_KEY: key,
        });
      } catch (err) {
        return err as Error;
      }
      throw new Error('accepted a mysql:// URL');
    })();
    expect(bad.message).toContain('OUTPOST_DATABASE_URL must be a postgres:// or postgresql:// URL');
    expect(`${without.message}${bad.message}`).not.toContain('s3cret-pass');
  });

  it('reads OUTPOST_PASSING_DETAIL_HOURS, an integer number of hours of at least 1', () => {
    expect(parseServiceConfig({ OUTPOST_PASSING_DETAIL_HOURS: '1' }).passingDetailHours).toBe(1);
    expect(parseServiceConfig({ OUTPOST_PASSING_DETAIL_HOURS: '2160' }).passingDetailHours).toBe(2160);
    for (const bad of ['0', '1.5', 'a day', '876001']) {
      const err = configError({ OUTPOST_PASSING_DETAIL_HOURS: bad });
      expect(err.message).toContain(
        'OUTPOST_PASSING_DETAIL_HOURS must be an integer number of hours from 1 to 876000',
      );
      expect(err.message).toContain(`it was ${JSON.stringify(bad)}`);
    }
  });

  it('lists every bad variable at once, with what it must be, never echoing a key', () => {
    const err = configError({
      PORT: 'x',
      OUTPOST_LEASE_SECONDS: '0',
      LOG_LEVEL: 'LOUD',
      OUTPOST_API_KEY: 'secret key',
      OUTPOST_APP_URL: 'not a url',
      OUTPOST_STATUS_PAGE_DOMAINS: '.example.com,https://status.example.org',
      OUTPOST_DNS_SERVERS: 'dns.example.com',
    });
    expect(err.code).toBe('OUTPOST_ERR_CONFIG');
    const lines = err.message.split('\n').filter((l) => l.startsWith('- '));
    expect(lines.map((l) => l.split(' ')[1])).toEqual([
      'PORT',
      'OUTPOST_LEASE_SECONDS',
      'LOG_LEVEL',
      'OUTPOST_API_KEY',
      'OUTPOST_APP_URL',
      'OUTPOST_STATUS_PAGE_DOMAINS',
      'OUTPOST_DNS_SERVERS',
    ]);
    expect(err.message).toContain('PORT must be an integer from 0 to 65535');
    expect(err.message).toContain('it was "LOUD"');
    expect(err.message).toContain('OUTPOST_API_KEY must be 20 to 200 characters');
    expect(err.message).not.toContain('secret key');
  });

  it('checks HOST and the alert providers at start: a typo stops the start, naming the variable', () => {
    const err = configError({
      HOST: 'not a host!',
      OUTPOST_SMTP_URL: 'smpt://user:hunter2@mail.example.com:587',
      OUTPOST_SMTP_FROM: 'alerts at example.com',
      OUTPOST_PAGERDUTY_URL: 'events.pagerduty.example',
      OUTPOST_TWILIO_ACCOUNT_SID: 'AC123',
    });
    const lines = err.message.split('\n').filter((l) => l.startsWith('- '));
    expect(lines.map((l) => l.split(' ')[1])).toEqual([
      'HOST',
      'OUTPOST_SMTP_URL',
      'OUTPOST_SMTP_FROM',
      'OUTPOST_PAGERDUTY_URL',
      'OUTPOST_TWILIO_AUTH_TOKEN',
    ]);
    expect(err.message).toContain(
      'OUTPOST_TWILIO_AUTH_TOKEN and OUTPOST_TWILIO_FROM must be set with OUTPOST_TWILIO_ACCOUNT_SID',
    );
    // The SMTP URL may carry a password: never echoed.
    expect(err.message).not.toContain('hunter2');

    const half = configError({ OUTPOST_SMTP_URL: 'smtp://mail.example.com:587' });
    expect(half.message).toContain('OUTPOST_SMTP_FROM must be set with OUTPOST_SMTP_URL');

    for (const host of ['0.0.0.0', '::', '[::1]', 'localhost', 'outpost.internal']) {
      expect(parseServiceConfig({ HOST: host }).host).toBe(host);
    }
    expect(
      parseServiceConfig({
        OUTPOST_SMTP_URL: 'smtps://user:pass@mail.example.com',
        OUTPOST_SMTP_FROM: 'Outpost <alerts@example.com>',
      }).port,
    ).toBe(3000);
  });
});
