import { type Kysely, sql } from 'kysely';
import { Secret, TOTP } from 'otpauth';
import { inject } from 'vitest';
import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/service/platform/store/database.js';
import { openPostgresDatabase } from '../../../src/service/platform/store/postgres.js';
import { type SmtpPeer, startSmtpPeer } from '../../helpers/alert-peers.js';
import { createDatabase, dropDatabase } from '../../helpers/postgres.js';
import { TEMPLATE_DATABASE } from '../../helpers/postgres-setup.js';
import { expectNoSecret } from '../../helpers/secrets.js';
import { TEST_DATABASE, testStore } from '../../helpers/service.js';
import {
  addPerson,
  cookieOf,
  linkIn,
  PASSWORD,
  type PeopleService,
  peopleService,
  until,
} from './helpers.js';

// No secret of people (password, TOTP seed, recovery code, invitation, reset or challenge token, session
// id) is in an answer beyond the one that hands it over, in a log line, or in a table in clear; and the
// sign-in limits are shared by replicas of one PostgreSQL store.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** Every row of every table of the store, as JSON text. */
async function wholeStore(db: Kysely<Database>): Promise<string> {
  const tables =
    TEST_DATABASE === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)
      : await sql<{
          name: string;
        }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(
          db,
        );
  let text = '';
  for (const { name } of tables.rows) {
    const rows = await sql`select * from ${sql.table(name)}`.execute(db);
    text += `${name}: ${JSON.stringify(rows.rows)}\n`;
  }
  return text;
}

/** The session id inside a Cookie header (`outpost_session=<id>.<signature>`). */
function sessionIdOf(cookie: string): string {
  return decodeURIComponent(cookie.slice('outpost_session='.length))
    .replace(/^s:/, '')
    .replace(/\.[^.]*$/, '');
}

describe('secrets of people', () => {
  it('appear only in the one answer that hands each over: not in other answers, logs or tables', async () => {
    const smtp: SmtpPeer = await startSmtpPeer();
    const svc: PeopleService = await peopleService({ smtpUrl: smtp.url, store: await testStore() });
    cleanups.push(
      () => smtp.close(),
      () => svc.close(),
    );
    const handedOver = new Set<string>();
    const secrets: Record<string, string> = { password: PASSWORD };
    const mark = () => handedOver.add(svc.answers.at(-1)!);

    const owner = await svc.signIn(svc.accountA.ownerEmail);
    mark();
    secrets.ownerSession = sessionIdOf(owner.cookie);
    const setup = await svc.call('POST', '/v1/users/me/two-factor', { session: owner });
    mark();
    const seed = setup.json().secret as string;
    secrets.seed = seed;
    const totp = new TOTP({
      secret: Secret.fromBase32(seed),
      algorithm: 'SHA1',
      digits: 6,
      period: 30,
    });
    const confirmed = await svc.call('POST', '/v1/users/me/two-factor/confirm', {
      session: owner,
      payload: { code: totp.generate() },
    });
    mark();
    const codes = confirmed.json().recoveryCodes as string[];
    codes.forEach((code, i) => {
      secrets[`recovery${i}`] = code;
    });
    const first = await svc.call('POST', '/auth/session', {
      payload: { email: svc.accountA.ownerEmail, password: PASSWORD },
    });
    mark();
    secrets.challenge = first.json().challenge;
    const second = await svc.call('POST', '/auth/session/two-factor', {
      payload: { challenge: secrets.challenge, code: codes[0] },
    });
    mark();
    secrets.twoFactorSession = sessionIdOf(cookieOf(second));

    await svc.call('POST', '/v1/users/invitations', {
      session: owner,
      payload: { email: 'invitee@example.test', role: 'READ_WRITE' },
    });
    await until(() => smtp.mails.length === 1);
    secrets.invitation = linkIn(smtp.mails[0]!.text, 'http://outpost.test/accept-invitation').token;
    await svc.call('GET', `/auth/invitations/${secrets.invitation}`);
    secrets.inviteePassword = 'the invitee’s own long password';
    const accepted = await svc.call('POST', '/auth/invitations/accept', {
      payload: { token: secrets.invitation, name: 'Invitee', password: secrets.inviteePassword },
    });
    mark();
    expect(accepted.statusCode, accepted.body).toBe(200);

    await addPerson(svc.db, svc.accountA.id, 'resetter@example.test', 'READ_ONLY');
    await svc.call('POST', '/auth/password-reset', { payload: { email: 'resetter@example.test' } });
    await until(() => smtp.mails.length === 2);
    secrets.reset = linkIn(smtp.mails[1]!.text, 'http://outpost.test/reset-password').token;
    secrets.resetPassword = 'a password chosen after reset';
    await svc.call('POST', '/auth/password-reset/confirm', {
      payload: { token: secrets.reset, password: secrets.resetPassword },
    });
    secrets.newPassword = 'the owner’s second password';
    await svc.call('PUT', '/v1/users/me/password', {
      session: owner,
      payload: { currentPassword: PASSWORD, newPassword: secrets.newPassword },
    });
    // Wrong attempts carry secrets too: a near miss of a password is never echoed.
    secrets.wrongPassword = 'a wrong guess of a password';
    await svc.call('POST', '/auth/session', {
      payload: { email: svc.accountA.ownerEmail, password: secrets.wrongPassword },
    });
    // Reading everything a person can read afterwards.
    for (const url of ['/v1/users', '/v1/users/me', '/v1/users/me/sessions', '/v1/api-keys']) {
      expect((await svc.call('GET', url, { session: owner })).statusCode).toBe(200);
    }
    await svc.call('GET', '/auth/session', { session: owner });

    const answers = svc.answers.filter((a) => !handedOver.has(a)).join('\n');
    const store = await wholeStore(svc.db);
    expect(store).toContain('invitee@example.test');
    const logs = svc.logs.join('');
    expect(logs).toContain('invitation accepted');
    for (const [name, secret] of Object.entries(secrets)) {
      for (const [where, haystack] of [
        ['answers', answers],
        ['logs', logs],
        ['store', store],
      ] as const) {
        try {
          expectNoSecret(haystack, secret);
        } catch (err) {
          throw new Error(`${name} found in ${where}: ${(err as Error).message}`);
        }
      }
    }
  });
});

describe('limits shared by replicas', () => {
  it.skipIf(TEST_DATABASE === 'sqlite')(
    'two services on one PostgreSQL store count the failed sign-ins of one email together',
    async () => {
      const admin = inject('postgresAdminUrl')!;
      const url = await createDatabase(admin, TEMPLATE_DATABASE);
      const dbs = [
        await openPostgresDatabase(url, { poolSize: 2 }),
        await openPostgresDatabase(url, { poolSize: 2 }),
      ];
      cleanups.push(async () => {
        for (const db of dbs) await db.destroy();
        await dropDatabase(admin, url);
      });
      const one = await peopleService({ store: { db: dbs[0]!, drop: async () => {} } });
      cleanups.push(() => one.close());
      const two = await peopleService({ store: { db: dbs[1]!, drop: async () => {} } });
      cleanups.push(() => two.close());
      const email = one.accountA.ownerEmail;
      for (let i = 0; i < 10; i++) {
        const replica = i % 2 === 0 ? one : two;
        const res = await replica.call('POST', '/auth/session', {
          payload: { email, password: `wrong guess ${i}` },
          remoteAddress: `192.0.2.${i + 1}`,
        });
        expect(res.statusCode).toBe(401);
      }
      for (const replica of [one, two]) {
        const over = await replica.call('POST', '/auth/session', {
          payload: { email, password: 'one more wrong guess' },
          remoteAddress: '198.51.100.1',
        });
        expect(over.statusCode).toBe(429);
        expect(over.json().attributes.scope).toBe('target');
      }
    },
  );
});
