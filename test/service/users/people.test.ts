import { Secret, TOTP } from 'otpauth';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { retentionTasks } from '../../../src/service/modules.js';
import { RetentionWorker } from '../../../src/service/platform/store/retention.js';
import { type SmtpPeer, startSmtpPeer } from '../../helpers/alert-peers.js';
import { testStore } from '../../helpers/service.js';
import { addPerson, linkIn, PASSWORD, type PeopleService, peopleService, until } from './helpers.js';

// People of an account (docs/teams.md): sign-in by password, invitations, roles, the person's own account,
// two-factor, password resets and a person's API keys, on a real store with real mail.

let svc: PeopleService;
let smtp: SmtpPeer;
beforeEach(async () => {
  smtp = await startSmtpPeer();
  svc = await peopleService({ smtpUrl: smtp.url, store: await testStore() });
});
afterEach(async () => {
  await svc.close();
  await smtp.close();
});

/** The current TOTP of a base32 seed (as an authenticator app shows it). */
function codeOf(secret: string, timestamp = Date.now()): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp,
  });
}

describe('sign-in by email and password', () => {
  it('opens a session for the right password, acting with the person’s role', async () => {
    const session = await svc.signIn(svc.accountA.ownerEmail.toUpperCase());
    expect(session.body).toMatchObject({
      accountId: svc.accountA.id,
      accountName: 'A',
      keyPrefix: null,
      role: 'OWNER',
      user: { id: svc.accountA.ownerId, email: svc.accountA.ownerEmail },
    });
    const me = await svc.call('GET', '/v1/users/me', { session });
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json()).toMatchObject({ id: svc.accountA.ownerId, status: 'ACTIVE', twoFactorEnabled: false });
    expect(me.json().lastSignInAt).not.toBeNull();
    expect(me.body).not.toContain('argon2');
  });

  it('answers one 401 for a wrong password, an unknown email and a person not signed up yet', async () => {
    await addPerson(svc.db, svc.accountA.id, 'invited@example.test', 'READ_ONLY', null);
    const bodies = [];
    for (const [email, password] of [
      [svc.accountA.ownerEmail, 'wrong password here'],
      ['nobody@example.test', PASSWORD],
      ['invited@example.test', PASSWORD],
    ] as const) {
      const res = await svc.call('POST', '/auth/session', { payload: { email, password } });
      expect(res.statusCode).toBe(401);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.headers['cache-control']).toBe('no-store');
      bodies.push(res.body);
    }
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0]!)).toMatchObject({
      message: 'wrong email or password',
      attributes: { code: 'OUTPOST_ERR_UNAUTHORIZED' },
    });
  });

  it('takes as long for an unknown email as for a known one (a dummy hash is verified)', async () => {
    const time = async (email: string) => {
      const started = process.hrtime.bigint();
      const res = await svc.call('POST', '/auth/session', {
        payload: { email, password: 'not the password' },
      });
      expect(res.statusCode).toBe(401);
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    await time('warm-up@example.test');
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 6; i++) {
      known.push(await time(svc.accountA.ownerEmail));
      unknown.push(await time(`unknown-${i}@example.test`));
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    // Argon2id takes some 20–60 ms here; a skipped hash would answer in about 1 ms, 20–60 times sooner. The
    // bounds leave room for a machine running other test files at once (a factor of 2 failed there once).
    expect(median(unknown)).toBeGreaterThan(median(known) / 3);
    expect(median(unknown)).toBeLessThan(median(known) * 3);
  });

  it('refuses a foreign origin and a body that is not JSON', async () => {
    const foreign = await svc.call('POST', '/auth/session', {
      payload: { email: svc.accountA.ownerEmail, password: PASSWORD },
      headers: { origin: 'https://evil.example' },
    });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().attributes.code).toBe('OUTPOST_ERR_CSRF');
    const form = await svc.app.inject({
      method: 'POST',
      url: '/auth/session',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `email=${svc.accountA.ownerEmail}&password=${PASSWORD}`,
    });
    expect(form.statusCode).toBe(415);
  });

  it('limits failed sign-ins per email: 429 with retry-after past 10, for unknown emails too', async () => {
    for (const [email, remoteAddress] of [
      [svc.accountA.ownerEmail, '192.0.2.1'],
      ['ghost@example.test', '2001:db8::1'],
    ] as const) {
      for (let i = 0; i < 10; i++) {
        const res = await svc.call('POST', '/auth/session', {
          payload: { email, password: `wrong ${i} password` },
          remoteAddress,
        });
        expect(res.statusCode).toBe(401);
      }
      // From another address of the same /64, or another address altogether: the email's limit holds.
      const over = await svc.call('POST', '/auth/session', {
        payload: { email, password: 'wrong again password' },
        remoteAddress: remoteAddress.includes(':') ? '2001:db8::2' : '198.51.100.7',
      });
      expect(over.statusCode).toBe(429);
      expect(over.json().attributes).toMatchObject({
        code: 'OUTPOST_ERR_AUTH_RATE_LIMITED',
        scope: 'target',
      });
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    }
    // The right password from an address under its limit still signs in.
    await svc.signIn(svc.accountA.ownerEmail);
  });

  it('limits failed sign-ins per client address (an IPv6 client per /64): 429 past 20', async () => {
    for (let i = 0; i < 20; i++) {
      const res = await svc.call('POST', '/auth/session', {
        payload: { email: `x${i}@example.test`, password: 'wrong password here' },
        remoteAddress: `2001:db8:0:1::${i + 1}`,
      });
      expect(res.statusCode).toBe(401);
    }
    const over = await svc.call('POST', '/auth/session', {
      payload: { email: svc.accountA.ownerEmail, password: PASSWORD },
      remoteAddress: '2001:db8:0:1:ffff::1',
    });
    expect(over.statusCode).toBe(429);
    expect(over.json().attributes.scope).toBe('client');
    const elsewhere = await svc.call('POST', '/auth/session', {
      payload: { email: svc.accountA.ownerEmail, password: PASSWORD },
      remoteAddress: '2001:db8:0:2::1',
    });
    expect(elsewhere.statusCode).toBe(200);
  });
});

describe('invitations', () => {
  it('mails a single-use link; accepting it signs the person in as ACTIVE', async () => {
    const owner = await svc.signIn(svc.accountA.ownerEmail);
    const invited = await svc.call('POST', '/v1/users/invitations', {
      session: owner,
      payload: { email: 'New.Person@Example.test', role: 'READ_WRITE' },
    });
    expect(invited.statusCode, invited.body).toBe(201);
    expect(invited.json()).toMatchObject({
      email: 'new.person@example.test',
      role: 'READ_WRITE',
      status: 'INVITED',
    });
    expect(invited.json().invitationUrl).toBeUndefined();
    await until(() => smtp.mails.length === 1);
    expect(smtp.mails[0]!.to).toEqual(['new.person@example.test']);
    const { token } = linkIn(smtp.mails[0]!.text, 'http://outpost.test/accept-invitation');

    const looked = await svc.call('GET', `/auth/invitations/${token}`);
    expect(looked.statusCode, looked.body).toBe(200);
    expect(looked.json()).toEqual({ email: 'new.person@example.test', accountName: 'A' });

    const short = await svc.call('POST', '/auth/invitations/accept', {
      payload: { token, name: 'New Person', password: 'too short' },
    });
    expect(short.statusCode).toBe(400);
    expect(short.json().attributes.field).toBe('password');

    const accepted = await svc.call('POST', '/auth/invitations/accept', {
      payload: { token, name: 'New Person', password: PASSWORD },
    });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json()).toMatchObject({ role: 'READ_WRITE', user: { name: 'New Person' } });
    const again = await svc.call('POST', '/auth/invitations/accept', {
      payload: { token, name: 'Someone Else', password: PASSWORD },
    });
    expect(again.statusCode).toBe(400);
    expect(again.json().attributes.field).toBe('token');
    expect((await svc.call('GET', `/auth/invitations/${token}`)).statusCode).toBe(404);
    await svc.signIn('new.person@example.test');
    const list = await svc.call('GET', '/v1/users', { session: owner });
    expect(list.json().map((u: { email: string; status: string }) => [u.email, u.status])).toEqual([
      [svc.accountA.ownerEmail, 'ACTIVE'],
      ['new.person@example.test', 'ACTIVE'],
    ]);
  });

  it('refuses a taken email (of any account, without naming it), a role above the caller’s, and an expired link', async () => {
    const owner = await svc.signIn(svc.accountA.ownerEmail);
    const taken = await svc.call('POST', '/v1/users/invitations', {
      session: owner,
      payload: { email: svc.accountB.ownerEmail, role: 'READ_ONLY' },
    });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().attributes.code).toBe('OUTPOST_ERR_EMAIL_TAKEN');
    expect(taken.body).not.toContain('"B"');
    expect(taken.body).not.toContain(svc.accountB.id);

    await addPerson(svc.db, svc.accountA.id, 'admin@example.test', 'ADMIN');
    const admin = await svc.signIn('admin@example.test');
    const above = await svc.call('POST', '/v1/users/invitations', {
      session: admin,
      payload: { email: 'boss@example.test', role: 'OWNER' },
    });
    expect(above.statusCode).toBe(400);
    expect(above.json().attributes.field).toBe('role');

    await addPerson(svc.db, svc.accountA.id, 'reader@example.test', 'READ_ONLY');
    const reader = await svc.signIn('reader@example.test');
    const refused = await svc.call('POST', '/v1/users/invitations', {
      session: reader,
      payload: { email: 'x@example.test', role: 'READ_ONLY' },
    });
    expect(refused.statusCode).toBe(403);

    const ok = await svc.call('POST', '/v1/users/invitations', {
      session: admin,
      payload: { email: 'late@example.test', role: 'READ_ONLY' },
    });
    expect(ok.statusCode).toBe(201);
    await until(() => smtp.mails.length === 1);
    const { token } = linkIn(smtp.mails[0]!.text, 'http://outpost.test/accept-invitation');
    await svc.db
      .updateTable('user_tokens')
      .set({ expires_at: Date.now() - 1 })
      .where('kind', '=', 'invitation')
      .execute();
    expect((await svc.call('GET', `/auth/invitations/${token}`)).statusCode).toBe(404);
    const late = await svc.call('POST', '/auth/invitations/accept', {
      payload: { token, name: 'Late', password: PASSWORD },
    });
    expect(late.statusCode).toBe(400);
    expect(late.json().attributes.field).toBe('token');
  });
});

describe('roles and removal', () => {
  it('only an OWNER changes an OWNER; the last OWNER stays; removal ends sessions and keys', async () => {
    const owner = await svc.signIn(svc.accountA.ownerEmail);
    const adminId = await addPerson(svc.db, svc.accountA.id, 'admin@example.test', 'ADMIN');
    const admin = await svc.signIn('admin@example.test');

    const demoteOwner = await svc.call('PUT', `/v1/users/${svc.accountA.ownerId}`, {
      session: admin,
      payload: { role: 'READ_ONLY' },
    });
    expect(demoteOwner.statusCode).toBe(403);
    const last = await svc.call('PUT', `/v1/users/${svc.accountA.ownerId}`, {
      session: owner,
      payload: { role: 'ADMIN' },
    });
    expect(last.statusCode).toBe(409);
    expect(last.json().attributes.code).toBe('OUTPOST_ERR_LAST_OWNER');
    expect(
      (await svc.call('DELETE', `/v1/users/${svc.accountA.ownerId}`, { session: owner })).statusCode,
    ).toBe(409);

    const renamed = await svc.call('PUT', `/v1/users/${adminId}`, {
      session: owner,
      payload: { role: 'READ_WRITE', name: 'Ada' },
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ role: 'READ_WRITE', name: 'Ada' });
    // The changed role applies to the live session at once.
    const keyAsWriter = await svc.call('POST', '/v1/api-keys', { session: admin, payload: { name: 'x' } });
    expect(keyAsWriter.statusCode).toBe(403);

    // Another account's person is not found.
    expect(
      (await svc.call('PUT', `/v1/users/${svc.accountB.ownerId}`, { session: owner, payload: { name: 'x' } }))
        .statusCode,
    ).toBe(404);

    const removed = await svc.call('DELETE', `/v1/users/${adminId}`, { session: owner });
    expect(removed.statusCode).toBe(204);
    expect((await svc.call('GET', '/v1/users/me', { session: admin })).statusCode).toBe(401);
  });

  it('ends every session of a person on request', async () => {
    const owner = await svc.signIn(svc.accountA.ownerEmail);
    const id = await addPerson(svc.db, svc.accountA.id, 'w@example.test', 'READ_WRITE');
    const one = await svc.signIn('w@example.test');
    const two = await svc.signIn('w@example.test');
    expect((await svc.call('POST', `/v1/users/${id}/sessions/revoke`, { session: owner })).statusCode).toBe(
      204,
    );
    for (const s of [one, two])
      expect((await svc.call('GET', '/v1/users/me', { session: s })).statusCode).toBe(401);
    expect((await svc.call('GET', '/v1/users/me', { session: owner })).statusCode).toBe(200);
  });
});

describe('a person’s API keys', () => {
  it('act with the weaker of their role and the person’s current one, and end with the person', async () => {
    const owner = await svc.signIn(svc.accountA.ownerEmail);
    const adminId = await addPerson(svc.db, svc.accountA.id, 'keys@example.test', 'ADMIN');
    const admin = await svc.signIn('keys@example.test');
    const made = await svc.call('POST', '/v1/api-keys', { session: admin, payload: { name: 'ci' } });
    expect(made.statusCode, made.body).toBe(201);
    const key = made.json().rawKey as string;
    const row = await svc.db
      .selectFrom('api_keys')
      .select(['user_id', 'role'])
      .where('id', '=', made.json().id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ user_id: adminId, role: 'ADMIN' });
    expect((await svc.call('GET', '/v1/api-keys', { key })).statusCode).toBe(200);
    expect((await svc.call('GET', '/v1/users/me', { key })).json().id).toBe(adminId);

    await svc.call('PUT', `/v1/users/${adminId}`, { session: owner, payload: { role: 'READ_ONLY' } });
    const capped = await svc.call('GET', '/v1/api-keys', { key });
    expect(capped.statusCode).toBe(403);
    expect((await svc.call('GET', '/v1/users', { key })).statusCode).toBe(200);

    await svc.call('DELETE', `/v1/users/${adminId}`, { session: owner });
    expect((await svc.call('GET', '/v1/users', { key })).statusCode).toBe(401);
  });

  it('an account key is no person: /v1/users/me answers 409', async () => {
    const res = await svc.call('GET', '/v1/users/me', { key: svc.accountA.key });
    expect(res.statusCode).toBe(409);
    expect(res.json().attributes.code).toBe('OUTPOST_ERR_NOT_A_USER');
  });
});

describe('the person’s own account', () => {
  it('changes the password, ending the other sessions', async () => {
    const here = await svc.signIn(svc.accountA.ownerEmail);
    const there = await svc.signIn(svc.accountA.ownerEmail);
    const wrong = await svc.call('PUT', '/v1/users/me/password', {
      session: here,
      payload: { currentPassword: 'not my password', newPassword: 'a brand new password' },
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().attributes.field).toBe('currentPassword');
    const short = await svc.call('PUT', '/v1/users/me/password', {
      session: here,
      payload: { currentPassword: PASSWORD, newPassword: 'short' },
    });
    expect(short.json().attributes.field).toBe('newPassword');
    const ok = await svc.call('PUT', '/v1/users/me/password', {
      session: here,
      payload: { currentPassword: PASSWORD, newPassword: 'a brand new password' },
    });
    expect(ok.statusCode).toBe(204);
    expect((await svc.call('GET', '/v1/users/me', { session: here })).statusCode).toBe(200);
    expect((await svc.call('GET', '/v1/users/me', { session: there })).statusCode).toBe(401);
    await svc.signIn(svc.accountA.ownerEmail, 'a brand new password');
  });

  it('lists its sessions by public ids and ends one', async () => {
    const here = await svc.signIn(svc.accountA.ownerEmail);
    const there = await svc.signIn(svc.accountA.ownerEmail);
    const list = await svc.call('GET', '/v1/users/me/sessions', { session: here });
    expect(list.statusCode).toBe(200);
    const sessions = list.json() as { id: string; current: boolean }[];
    expect(sessions).toHaveLength(2);
    expect(sessions.filter((s) => s.current)).toHaveLength(1);
    const hashes = (await svc.db.selectFrom('web_sessions').select('id_hash').execute()).map(
      (r) => r.id_hash,
    );
    for (const s of sessions) {
      expect(s.id).toMatch(/^[0-9a-f]{16}$/);
      expect(hashes.some((h) => h.includes(s.id))).toBe(false);
      expect(here.cookie.includes(s.id) || there.cookie.includes(s.id)).toBe(false);
    }
    const other = sessions.find((s) => !s.current)!;
    expect(
      (await svc.call('DELETE', `/v1/users/me/sessions/${other.id}`, { session: here })).statusCode,
    ).toBe(204);
    expect((await svc.call('GET', '/v1/users/me', { session: there })).statusCode).toBe(401);
    expect(
      (await svc.call('DELETE', `/v1/users/me/sessions/${other.id}`, { session: here })).statusCode,
    ).toBe(404);
  });
});

describe('two-factor', () => {
  // Each TOTP code is accepted once (per 30 s step): the tests give codes of the previous, current and next
  // steps, so none starts in the last 5 s of a step (each takes about 1 s).
  beforeEach(async () => {
    const intoStep = Date.now() % 30_000;
    if (intoStep > 25_000) await new Promise((r) => setTimeout(r, 30_000 - intoStep + 50));
  });

  /** Turns two-factor on for the signed-in `session`; answers the seed and the recovery codes. */
  async function enrol(session: Awaited<ReturnType<PeopleService['signIn']>>) {
    const setup = await svc.call('POST', '/v1/users/me/two-factor', { session });
    expect(setup.statusCode, setup.body).toBe(200);
    const { secret, otpauthUrl } = setup.json() as { secret: string; otpauthUrl: string };
    expect(otpauthUrl).toMatch(/^otpauth:\/\/totp\/Outpost:/);
    const stored = await svc.db
      .selectFrom('users')
      .select('totp_secret')
      .where('id', '=', svc.accountA.ownerId)
      .executeTakeFirstOrThrow();
    expect(stored.totp_secret).toMatch(/^v1:/);
    const wrong = await svc.call('POST', '/v1/users/me/two-factor/confirm', {
      session,
      payload: { code: '000000' },
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().attributes.field).toBe('code');
    const confirmed = await svc.call('POST', '/v1/users/me/two-factor/confirm', {
      session,
      payload: { code: codeOf(secret, Date.now() + 30_000) },
    });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    const recoveryCodes = confirmed.json().recoveryCodes as string[];
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    return { secret, recoveryCodes };
  }

  /** The challenge of a sign-in with two-factor. */
  async function challenge(): Promise<string> {
    const res = await svc.call('POST', '/auth/session', {
      payload: { email: svc.accountA.ownerEmail, password: PASSWORD },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.json().twoFactorRequired).toBe(true);
    return res.json().challenge;
  }

  it('asks for a real TOTP code after the password; a challenge is single-use', async () => {
    const { secret } = await enrol(await svc.signIn(svc.accountA.ownerEmail));
    const c = await challenge();
    const wrong = await svc.call('POST', '/auth/session/two-factor', {
      payload: { challenge: c, code: '123456' },
    });
    expect(wrong.statusCode).toBe(401);
    // One step of drift is accepted.
    const ok = await svc.call('POST', '/auth/session/two-factor', {
      payload: { challenge: c, code: codeOf(secret, Date.now() - 30_000) },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().user.id).toBe(svc.accountA.ownerId);
    const reused = await svc.call('POST', '/auth/session/two-factor', {
      payload: { challenge: c, code: codeOf(secret) },
    });
    expect(reused.statusCode).toBe(401);
    // A code accepted once is not accepted again, with a new challenge either (RFC 6238 §5.2).
    const code = codeOf(secret);
    const fresh = await svc.call('POST', '/auth/session/two-factor', {
      payload: { challenge: await challenge(), code },
    });
    expect(fresh.statusCode, fresh.body).toBe(200);
    const replayed = await svc.call('POST', '/auth/session/two-factor', {
      payload: { challenge: await challenge(), code },
    });
    expect(replayed.statusCode).toBe(401);
  });

  it('takes a recovery code once, and five tries per challenge', async () => {
    const { secret, recoveryCodes } = await enrol(await svc.signIn(svc.accountA.ownerEmail));
    const first = await svc.call('POST', '/auth/session/two-factor', {
      payload: { challenge: await challenge(), code: recoveryCodes[0]!.toUpperCase() },
    });
    expect(first.statusCode, first.body).toBe(200);
    const second = await svc.call('POST', '/auth/session/two-factor', {
      payload: { challenge: await challenge(), code: recoveryCodes[0] },
    });
    expect(second.statusCode).toBe(401);

    const c = await challenge();
    for (let i = 0; i < 5; i++) {
      const res = await svc.call('POST', '/auth/session/two-factor', {
        payload: { challenge: c, code: '000000' },
      });
      expect(res.statusCode).toBe(401);
    }
    const sixth = await svc.call('POST', '/auth/session/two-factor', {
      payload: { challenge: c, code: codeOf(secret) },
    });
    expect(sixth.statusCode).toBe(401);
  });

  it('is turned off by the person with password and code, or by an OWNER', async () => {
    const session = await svc.signIn(svc.accountA.ownerEmail);
    const { secret } = await enrol(session);
    const noCode = await svc.call('DELETE', '/v1/users/me/two-factor', {
      session,
      payload: { password: PASSWORD, code: '000000' },
    });
    expect(noCode.statusCode).toBe(400);
    expect(noCode.json().attributes.field).toBe('code');
    const off = await svc.call('DELETE', '/v1/users/me/two-factor', {
      session,
      payload: { password: PASSWORD, code: codeOf(secret) },
    });
    expect(off.statusCode, off.body).toBe(204);
    expect((await svc.call('GET', '/v1/users/me', { session })).json().twoFactorEnabled).toBe(false);

    await enrol(session);
    const adminId = await addPerson(svc.db, svc.accountA.id, 'admin@example.test', 'ADMIN');
    const admin = await svc.signIn('admin@example.test');
    expect(
      (await svc.call('DELETE', `/v1/users/${svc.accountA.ownerId}/two-factor`, { session: admin }))
        .statusCode,
    ).toBe(403);
    expect(
      (await svc.call('DELETE', `/v1/users/${svc.accountA.ownerId}/two-factor`, { session })).statusCode,
    ).toBe(204);
    expect(adminId).toBeTruthy();
    await svc.signIn(svc.accountA.ownerEmail);
    const codes = await svc.db
      .selectFrom('user_tokens')
      .select('kind')
      .where('kind', '=', 'recovery')
      .execute();
    expect(codes).toHaveLength(0);
  });
});

describe('password resets', () => {
  it('answers 202 {} whatever the email; mails a single-use link to a person who exists', async () => {
    const sessionBefore = await svc.signIn(svc.accountA.ownerEmail);
    const unknown = await svc.call('POST', '/auth/password-reset', {
      payload: { email: 'nobody@example.test' },
    });
    const known = await svc.call('POST', '/auth/password-reset', {
      payload: { email: svc.accountA.ownerEmail },
    });
    for (const res of [unknown, known]) {
      expect(res.statusCode).toBe(202);
      expect(res.body).toBe('{}');
    }
    await until(() => smtp.mails.length === 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(smtp.mails).toHaveLength(1);
    expect(smtp.mails[0]!.to).toEqual([svc.accountA.ownerEmail]);
    const { token } = linkIn(smtp.mails[0]!.text, 'http://outpost.test/reset-password');

    const bad = await svc.call('POST', '/auth/password-reset/confirm', {
      payload: { token: `${token.slice(0, -2)}AA`, password: 'my new long password' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().attributes.field).toBe('token');
    const ok = await svc.call('POST', '/auth/password-reset/confirm', {
      payload: { token, password: 'my new long password' },
    });
    expect(ok.statusCode, ok.body).toBe(204);
    expect((await svc.call('GET', '/v1/users/me', { session: sessionBefore })).statusCode).toBe(401);
    const reused = await svc.call('POST', '/auth/password-reset/confirm', {
      payload: { token, password: 'yet another password' },
    });
    expect(reused.statusCode).toBe(400);
    await svc.signIn(svc.accountA.ownerEmail, 'my new long password');
  });

  it('refuses an expired link', async () => {
    await svc.call('POST', '/auth/password-reset', { payload: { email: svc.accountA.ownerEmail } });
    await until(() => smtp.mails.length === 1);
    const { token } = linkIn(smtp.mails[0]!.text, 'http://outpost.test/reset-password');
    await svc.db
      .updateTable('user_tokens')
      .set({ expires_at: Date.now() - 1 })
      .where('kind', '=', 'reset')
      .execute();
    const late = await svc.call('POST', '/auth/password-reset/confirm', {
      payload: { token, password: 'my new long password' },
    });
    expect(late.statusCode).toBe(400);
    expect(late.json().attributes.field).toBe('token');
  });

  it('limits reset requests per email: 429 past 3 an hour', async () => {
    for (let i = 0; i < 3; i++) {
      expect(
        (await svc.call('POST', '/auth/password-reset', { payload: { email: 'who@example.test' } }))
          .statusCode,
      ).toBe(202);
    }
    const over = await svc.call('POST', '/auth/password-reset', { payload: { email: 'who@example.test' } });
    expect(over.statusCode).toBe(429);
    expect(over.headers['retry-after']).toBeDefined();
  });
});

describe('without SMTP', () => {
  it('answers the invitation link to the admin', async () => {
    const bare = await peopleService();
    try {
      const owner = await bare.signIn(bare.accountA.ownerEmail);
      const res = await bare.call('POST', '/v1/users/invitations', {
        session: owner,
        payload: { email: 'handed@example.test', role: 'READ_ONLY', name: 'Handed Over' },
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().invitationUrl).toMatch(
        /^http:\/\/outpost\.test\/accept-invitation#token=[A-Za-z0-9_-]{43}$/,
      );
      expect(res.json().name).toBe('Handed Over');
    } finally {
      await bare.close();
    }
  });
});

describe('retention', () => {
  it('deletes expired tokens and those used over a day ago, and keeps recovery codes', async () => {
    const session = await svc.signIn(svc.accountA.ownerEmail);
    const setup = await svc.call('POST', '/v1/users/me/two-factor', { session });
    await svc.call('POST', '/v1/users/me/two-factor/confirm', {
      session,
      payload: { code: codeOf(setup.json().secret) },
    });
    await svc.call('POST', '/auth/password-reset', { payload: { email: svc.accountA.ownerEmail } });
    await until(() => smtp.mails.length === 1);
    const kinds = async () =>
      (await svc.db.selectFrom('user_tokens').select('kind').execute()).map((r) => r.kind).sort();
    expect(new Set(await kinds())).toEqual(new Set(['recovery', 'reset', 'totp-step']));
    await new RetentionWorker(svc.db, retentionTasks({ artifacts: svc.context.artifacts }), {
      resultDays: 90,
      artifactDays: 30,
      agentDays: 30,
      log: pino({ level: 'silent' }),
    }).runOnce(Date.now() + 2 * 86_400_000);
    expect(new Set(await kinds())).toEqual(new Set(['recovery']));
    expect(await kinds()).toHaveLength(10);
  });
});
