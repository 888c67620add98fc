import { SSO_STARTS_PER_CLIENT_PER_MINUTE } from '../../../src/service/sso/routes.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, type Service } from '../../../src/service/app.js';
import { createAccount, createApiKey } from '../../../src/service/platform/http/auth.js';
import type { Database } from '../../../src/service/platform/store/database.js';
import { sealStoredSecrets } from '../../../src/service/platform/store/secrets-at-rest.js';
import { hashPassword } from '../../../src/service/users/passwords.js';
import { startTestProvider, type TestProvider } from '../../helpers/oidc-provider.js';
import { expectNoSecret } from '../../helpers/secrets.js';
import { testStore } from '../../helpers/service.js';

/** A recognisable client secret: it must never leave the service in clear. */
const CLIENT_SECRET = 'oidc-client-secret-Zq81mXv40TtPa';

/** A free loopback port (the service's app URL must be known before it is built). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A cookie jar for one origin: names → values, from Set-Cookie (a cleared cookie is removed). */
class Jar {
  readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const cleared =
        value === '' ||
        attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /expires=thu, 01 jan 1970/i.test(a));
      if (cleared) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

const logLines: string[] = [];
const answers: string[] = [];
let store: { db: Kysely<Database>; drop(): Promise<void> };
let svc: Service;
let appUrl: string;
let provider: TestProvider;
let keyA: string;
let accountB: string;
let artifactsDir: string;

/** Every answer the tests saw is kept for the secret search: status, headers and body. */
async function keep(res: Response): Promise<string> {
  const body = await res.text();
  answers.push(`${res.status} ${JSON.stringify([...res.headers])} ${body}`);
  return body;
}

async function api(method: string, path: string, body?: unknown, key = keyA) {
  const res = await fetch(`${appUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await keep(res);
  return { status: res.status, json: text === '' ? null : JSON.parse(text) };
}

/** The settings of account A: groups mapped, one allowed domain. */
function settings(overrides: Record<string, unknown> = {}) {
  return {
    issuer: provider.issuer,
    clientId: provider.clientId,
    clientSecret: CLIENT_SECRET,
    defaultRole: 'READ_ONLY',
    groupsClaim: 'groups',
    groupRoles: { ops: 'ADMIN', dev: 'READ_WRITE' },
    allowedDomains: ['example.com'],
    ...overrides,
  };
}

/** Secrets of the flows, gathered for the final search: authorization codes, states, session ids. */
const flowSecrets: string[] = [];

/**
 * `POST /auth/sso/start`, then the provider's own login and consent pages over HTTP (manual redirects,
 * its cookie jar), signing in as `login`; stops at the redirect back to the service.
 * @returns the callback URL the provider sent, and the service's jar (holding `outpost_sso`).
 */
async function toCallback(
  email: string,
  login: string,
  tamper?: (authorizationUrl: URL) => void,
): Promise<{ callback: string; jar: Jar }> {
  const jar = new Jar();
  const started = await fetch(`${appUrl}/auth/sso/start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email }),
  });
  jar.take(started);
  const { redirectUrl } = JSON.parse(await keep(started)) as { redirectUrl: string };
  expect(redirectUrl.startsWith(`${provider.issuer}/`), redirectUrl).toBe(true);
  const authorization = new URL(redirectUrl);
  expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authorization.searchParams.get('state')).toBeTruthy();
  expect(authorization.searchParams.get('nonce')).toBeTruthy();
  flowSecrets.push(authorization.searchParams.get('state')!);
  tamper?.(authorization);
  const providerJar = new Jar();
  let url = authorization.href;
  for (let step = 0; step < 20; step++) {
    if (url.startsWith(`${appUrl}/`)) {
      const code = new URL(url).searchParams.get('code');
      if (code) flowSecrets.push(code);
      return { callback: url, jar };
    }
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: providerJar.header() } });
    providerJar.take(res);
    const location = res.headers.get('location');
    if (location !== null) {
      url = new URL(location, url).href;
      continue;
    }
    const html = await res.text();
    expect(res.status, html).toBe(200);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([a-z]+)"/.exec(html)?.[1];
    expect(action, html).toBeTruthy();
    const form = new URLSearchParams({ prompt: prompt! });
    if (prompt === 'login') {
      form.set('login', login);
      form.set('password', 'any');
    }
    const posted = await fetch(new URL(action!, url), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: providerJar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    providerJar.take(posted);
    expect(posted.status, await posted.text()).toBe(303);
    url = new URL(posted.headers.get('location')!, url).href;
  }
  throw new Error('the provider never sent the browser back');
}

/** `GET` the callback with the jar: the redirect's location and the jar after it. */
async function callback(url: string, jar: Jar): Promise<{ status: number; location: string; jar: Jar }> {
  const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
  jar.take(res);
  await keep(res);
  const session = jar.cookies.get('outpost_session');
  if (session) flowSecrets.push(decodeURIComponent(session).split('.')[0]!);
  return { status: res.status, location: res.headers.get('location') ?? '', jar };
}

async function signIn(email: string, login: string) {
  const { callback: url, jar } = await toCallback(email, login);
  return callback(url, jar);
}

/** `GET /auth/session` with the jar's session cookie. */
async function sessionOf(jar: Jar) {
  const res = await fetch(`${appUrl}/auth/session`, { headers: { cookie: jar.header() } });
  const text = await keep(res);
  return { status: res.status, json: JSON.parse(text) };
}

beforeAll(async () => {
  store = await testStore();
  const a = await createAccount(store.db, 'Acme');
  accountB = await createAccount(store.db, 'Other');
  keyA = await createApiKey(store.db, a);
  const port = await freePort();
  appUrl = `http://127.0.0.1:${port}`;
  provider = await startTestProvider({
    redirectUris: [`${appUrl}/auth/sso/callback`],
    clientSecret: CLIENT_SECRET,
  });
  artifactsDir = await mkdtemp(join(tmpdir(), 'outpost-sso-'));
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  svc = await build({
    db: store.db,
    log: pino({ level: 'trace' }, sink),
    appUrl,
    artifactsDir,
    retention: false,
    // The provider listens on loopback, which the outbound policy refuses unless allowed.
    outbound: { allow: ['127.0.0.1/32'] },
  });
  await svc.app.listen({ port, host: '127.0.0.1' });
});

afterAll(async () => {
  await svc?.close();
  await provider?.close();
  await store?.drop();
  if (artifactsDir) await rm(artifactsDir, { recursive: true, force: true });
});

describe('single sign-on with a real OpenID provider', () => {
  it('saves the settings after discovering the issuer; the secret is answered only as configured', async () => {
    const put = await api('PUT', '/v1/sso', settings());
    expect(put.status, JSON.stringify(put.json)).toBe(200);
    expect(put.json).toMatchObject({
      enabled: true,
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecretConfigured: true,
      defaultRole: 'READ_ONLY',
      allowedDomains: ['example.com'],
      ssoOnly: false,
      redirectUri: `${appUrl}/auth/sso/callback`,
    });
    expect(put.json).not.toHaveProperty('clientSecret');
    const got = await api('GET', '/v1/sso');
    expect(got.json).toEqual(put.json);
    const row = await store.db.selectFrom('sso_settings').selectAll().executeTakeFirstOrThrow();
    expect(row.client_secret.startsWith('v1:')).toBe(true);
  });

  it('the start-up check opens the sealed client secret, and seals one found in clear', async () => {
    const sealed = await store.db.selectFrom('sso_settings').selectAll().executeTakeFirstOrThrow();
    const first = await sealStoredSecrets(store.db, []);
    expect(first.sealed).toBe(0);
    expect(first.verified).toBeGreaterThanOrEqual(1);
    await store.db.updateTable('sso_settings').set({ client_secret: CLIENT_SECRET }).execute();
    expect((await sealStoredSecrets(store.db, [])).sealed).toBe(1);
    const resealed = await store.db.selectFrom('sso_settings').selectAll().executeTakeFirstOrThrow();
    expect(resealed.client_secret.startsWith('v1:')).toBe(true);
    expect(resealed.client_secret).not.toBe(sealed.client_secret);
    // The service still opens it: the settings save again without a new secret.
    expect((await api('PUT', '/v1/sso', settings({ clientSecret: undefined }))).status).toBe(200);
  });

  it('refuses an issuer that is no provider, naming issuer', async () => {
    const res = await api('PUT', '/v1/sso', settings({ issuer: `${appUrl}/nowhere` }));
    expect(res.status).toBe(400);
    expect(res.json.attributes).toMatchObject({ code: 'OUTPOST_ERR_VALIDATION', field: 'issuer' });
    const plain = await api('PUT', '/v1/sso', settings({ issuer: 'http://idp.example.com' }));
    expect(plain.json.attributes).toMatchObject({ field: 'issuer' });
    expect(plain.json.message).toBe('body.issuer must be an https URL');
  });

  it('a first sign-in creates the person with the highest mapped role; the next one finds them', async () => {
    provider.people.set('alice', {
      email: 'Alice@Example.com',
      email_verified: true,
      name: 'Alice Liddell',
      groups: ['dev', 'ops', 'unmapped'],
    });
    const first = await signIn('alice@example.com', 'alice');
    expect(first.status).toBe(303);
    expect(first.location).toBe('/');
    expect(first.jar.cookies.has('outpost_sso')).toBe(false);
    const session = await sessionOf(first.jar);
    expect(session.status).toBe(200);
    expect(session.json).toMatchObject({
      accountName: 'Acme',
      keyPrefix: null,
      role: 'ADMIN',
      user: { name: 'Alice Liddell', email: 'alice@example.com' },
    });
    const row = await store.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', 'alice@example.com')
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      sso_subject: `${provider.issuer} alice`,
      role: 'ADMIN',
      password_hash: null,
    });

    // The role is read from the groups at each sign-in.
    provider.people.set('alice', { ...provider.people.get('alice')!, groups: ['dev'] });
    const second = await signIn('alice@example.com', 'alice');
    expect(second.location).toBe('/');
    const again = await sessionOf(second.jar);
    expect(again.json).toMatchObject({ role: 'READ_WRITE', user: { id: row.id } });
    const count = await store.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    expect(Number(count!.n)).toBe(1);
  });

  it('no mapped group gives the default role', async () => {
    provider.people.set('dora', { email: 'dora@example.com', email_verified: false, groups: ['guests'] });
    const done = await signIn('dora@example.com', 'dora');
    expect(done.location).toBe('/');
    expect((await sessionOf(done.jar)).json.role).toBe('READ_ONLY');
  });

  it('refuses a replayed code, a wrong state, another browser and a wrong nonce', async () => {
    provider.people.set('eve', { email: 'eve@example.com', email_verified: true, groups: [] });
    const { callback: url, jar } = await toCallback('eve@example.com', 'eve');
    const fresh = new Jar();
    for (const [k, v] of jar.cookies) fresh.cookies.set(k, v);

    // Wrong state: unknown to the store (the real sign-in is left as it was).
    const wrongState = new URL(url);
    wrongState.searchParams.set('state', 'not-the-state');
    expect((await callback(wrongState.href, jar)).location).toBe('/sign-in?error=sso_failed');

    // Another browser (no outpost_sso cookie) cannot finish it, and its attempt uses it up.
    const stranger = await callback(url, new Jar());
    expect(stranger.location).toBe('/sign-in?error=sso_failed');
    expect(stranger.jar.cookies.has('outpost_session')).toBe(false);
    expect((await callback(url, fresh)).location).toBe('/sign-in?error=sso_failed');

    // Replayed: the first use signs in, the second is refused.
    const ok = await toCallback('eve@example.com', 'eve');
    const copy = new Jar();
    for (const [k, v] of ok.jar.cookies) copy.cookies.set(k, v);
    expect((await callback(ok.callback, ok.jar)).location).toBe('/');
    const replay = await callback(ok.callback, copy);
    expect(replay.location).toBe('/sign-in?error=sso_failed');
    expect(replay.jar.cookies.has('outpost_session')).toBe(false);

    // A nonce changed on the way to the provider: the ID token carries another nonce than the stored one.
    const tampered = await toCallback('eve@example.com', 'eve', (u) =>
      u.searchParams.set('nonce', 'forged-nonce'),
    );
    const refused = await callback(tampered.callback, tampered.jar);
    expect(refused.location).toBe('/sign-in?error=sso_failed');
    expect(refused.jar.cookies.has('outpost_session')).toBe(false);
    expect(logLines.join('')).toContain('nonce');
  });

  it('links an existing person only when the provider says the email is verified', async () => {
    const now = Date.now();
    const [accountA] = await store.db
      .selectFrom('accounts')
      .select('id')
      .where('name', '=', 'Acme')
      .execute();
    await store.db
      .insertInto('users')
      .values({
        id: 'carol-id',
        account_id: accountA!.id,
        email: 'carol@example.com',
        name: 'Carol',
        role: 'OWNER',
        password_hash: null,
        totp_secret: null,
        totp_enabled_at: null,
        sso_subject: null,
        created_at: now,
        updated_at: now,
        last_sign_in_at: null,
      })
      .execute();
    provider.people.set('carol', { email: 'carol@example.com', email_verified: false, groups: ['dev'] });
    expect((await signIn('carol@example.com', 'carol')).location).toBe('/sign-in?error=sso_unverified');
    provider.people.set('carol', { email: 'carol@example.com', email_verified: true, groups: ['dev'] });
    const linked = await signIn('carol@example.com', 'carol');
    expect(linked.location).toBe('/');
    expect((await sessionOf(linked.jar)).json).toMatchObject({
      user: { id: 'carol-id' },
      role: 'READ_WRITE',
    });
  });

  it('refuses a person of another account and an email outside the allowed domains', async () => {
    const now = Date.now();
    await store.db
      .insertInto('users')
      .values({
        id: 'bob-id',
        account_id: accountB,
        email: 'bob@example.com',
        name: 'Bob',
        role: 'OWNER',
        password_hash: null,
        totp_secret: null,
        totp_enabled_at: null,
        sso_subject: null,
        created_at: now,
        updated_at: now,
        last_sign_in_at: null,
      })
      .execute();
    provider.people.set('bob', { email: 'bob@example.com', email_verified: true });
    expect((await signIn('bob@example.com', 'bob')).location).toBe('/sign-in?error=sso_account');
    const bob = await store.db.selectFrom('users').selectAll().where('id', '=', 'bob-id').executeTakeFirst();
    expect(bob).toMatchObject({ account_id: accountB, sso_subject: null });

    provider.people.set('mallory', { email: 'mallory@elsewhere.org', email_verified: true });
    expect((await signIn('alice@example.com', 'mallory')).location).toBe('/sign-in?error=sso_domain');
  });

  it('an email no single sign-on covers gets the same answer shape, naming no account', async () => {
    for (const email of ['nobody@elsewhere.org', 'bob@example.org']) {
      const res = await fetch(`${appUrl}/auth/sso/start`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.getSetCookie()).toEqual([]);
      expect(JSON.parse(await keep(res))).toEqual({ redirectUrl: '/sign-in?sso=unavailable' });
    }
  });

  it('"SSO only" refuses API-key and password sign-in to the web app; the key keeps working on /v1', async () => {
    const password = 'carols-password-long-enough';
    await store.db
      .updateTable('users')
      .set({ password_hash: await hashPassword(password) })
      .where('id', '=', 'carol-id')
      .execute();
    const byPassword = async (given: string) => {
      const res = await fetch(`${appUrl}/auth/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'carol@example.com', password: given }),
      });
      const body = JSON.parse(await keep(res));
      return { status: res.status, body, cookies: res.headers.getSetCookie() };
    };
    expect((await byPassword(password)).status).toBe(200);
    expect((await api('PUT', '/v1/sso', settings({ clientSecret: undefined, ssoOnly: true }))).status).toBe(
      200,
    );
    const refused = await byPassword(password);
    expect(refused.status).toBe(403);
    expect(refused.body.attributes.code).toBe('OUTPOST_ERR_SSO_REQUIRED');
    expect(refused.cookies).toEqual([]);
    // A wrong password learns nothing of the rule: the same 401 as ever.
    expect((await byPassword('not-carols-password')).status).toBe(401);
    // Nor does an invitation open a session around it (every person's session passes one check).
    const invited = await api('POST', '/v1/users/invitations', {
      email: 'dave@example.com',
      role: 'READ_ONLY',
    });
    expect(invited.status).toBe(201);
    const token = new URL((invited.json as { invitationUrl: string }).invitationUrl).hash.replace(
      '#token=',
      '',
    );
    const accepted = await fetch(`${appUrl}/auth/invitations/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, name: 'Dave', password: 'daves-password-long-enough' }),
    });
    const acceptedBody = JSON.parse(await keep(accepted));
    expect(accepted.status).toBe(403);
    expect(acceptedBody.attributes.code).toBe('OUTPOST_ERR_SSO_REQUIRED');
    expect(accepted.headers.getSetCookie()).toEqual([]);
    const res = await fetch(`${appUrl}/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiKey: keyA }),
    });
    const body = JSON.parse(await keep(res));
    expect(res.status).toBe(403);
    expect(body.attributes.code).toBe('OUTPOST_ERR_SSO_REQUIRED');
    expect(body.message).toContain('single sign-on');
    expect(res.headers.getSetCookie()).toEqual([]);
    expect((await api('GET', '/v1/checks')).status).toBe(200);
    // Single sign-on itself still signs in.
    expect((await signIn('alice@example.com', 'alice')).location).toBe('/');
    expect((await api('PUT', '/v1/sso', settings({ ssoOnly: false }))).status).toBe(200);
    const back = await fetch(`${appUrl}/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiKey: keyA }),
    });
    await keep(back);
    expect(back.status).toBe(200);
  });

  it('never lets the client secret, codes, states or session ids out: answers, logs, every table', async () => {
    expect(flowSecrets.length).toBeGreaterThan(10);
    const tables = await store.db.introspection.getTables();
    const rows: string[] = [];
    for (const table of tables) {
      const all = await (store.db as unknown as Kysely<Record<string, Record<string, unknown>>>)
        .selectFrom(table.name)
        .selectAll()
        .execute();
      rows.push(JSON.stringify(all));
    }
    const logs = logLines.join('\n');
    expect(logs).toContain('single sign-on refused');
    const tablesText = rows.join('\n');
    for (const haystack of [answers.join('\n'), logs, tablesText]) expectNoSecret(haystack, CLIENT_SECRET);
    for (const secret of flowSecrets) {
      expectNoSecret(logs, secret);
      expectNoSecret(tablesText, secret);
    }
  });

  it('DELETE /v1/sso turns it off: the start answers unavailable', async () => {
    expect((await api('DELETE', '/v1/sso')).status).toBe(204);
    expect((await api('GET', '/v1/sso')).json).toMatchObject({
      enabled: false,
      clientSecretConfigured: false,
    });
    const res = await fetch(`${appUrl}/auth/sso/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'alice@example.com' }),
    });
    expect(JSON.parse(await keep(res))).toEqual({ redirectUrl: '/sign-in?sso=unavailable' });
  });
});

describe('single sign-on and the outbound address policy', () => {
  it('refuses a provider on a loopback address without OUTPOST_OUTBOUND_ALLOW', async () => {
    const other = await testStore();
    const account = await createAccount(other.db, 'Strict');
    const key = await createApiKey(other.db, account);
    const strict = await build({
      db: other.db,
      log: pino({ level: 'silent' }),
      retention: false,
      artifactsDir,
    });
    try {
      const res = await strict.app.inject({
        method: 'PUT',
        url: '/v1/sso',
        headers: { authorization: `Bearer ${key}` },
        payload: settings(),
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().attributes).toMatchObject({ field: 'issuer' });
      expect(res.json().message).toMatch(
        /refused: 127\.0\.0\.1 is a loopback address; allow it with OUTPOST_OUTBOUND_ALLOW/,
      );
      expectNoSecret(res.body, CLIENT_SECRET);
      expect(await other.db.selectFrom('sso_settings').selectAll().execute()).toEqual([]);
    } finally {
      await strict.close();
      await other.drop();
    }
  });
  // Last: it uses up this client's starts for the minute.
  it('limits the sign-ins one client may start a minute (429 with retry-after), so no one fills the table', async () => {
    let answered = 0;
    let limited: Response | undefined;
    for (let i = 0; i <= SSO_STARTS_PER_CLIENT_PER_MINUTE && !limited; i++) {
      const res = await fetch(`${appUrl}/auth/sso/start`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'nobody@elsewhere.org' }),
      });
      if (res.status === 429) limited = res;
      else answered += 1;
      await keep(res);
    }
    expect(limited, `${answered} starts answered`).toBeDefined();
    expect(answered).toBeLessThanOrEqual(SSO_STARTS_PER_CLIENT_PER_MINUTE);
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});
