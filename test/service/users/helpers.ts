import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { expect } from 'vitest';
import { providersFromEnv } from '../../../src/service/alerting/channels/index.js';
import { build, type Service } from '../../../src/service/app.js';
import { createAccount, createApiKey } from '../../../src/service/platform/http/auth.js';
import type { Role } from '../../../src/service/platform/http/permissions.js';
import type { Database } from '../../../src/service/platform/store/database.js';
import { Users } from '../../../src/service/users/index.js';
import { testStore } from '../../helpers/service.js';

/** A password long enough for the rules. */
export const PASSWORD = 'correct horse battery staple';

/** A service with two accounts, each with an OWNER person, its log lines captured. */
export type PeopleService = Service & {
  db: Kysely<Database>;
  /** Every log line written so far, as JSON text. */
  logs: string[];
  accountA: { id: string; key: string; ownerId: string; ownerEmail: string };
  accountB: { id: string; key: string; ownerId: string; ownerEmail: string };
  /** Every answer given through the helpers below, for the secret search. */
  answers: string[];
  /** A request with JSON, the optional session (cookie and CSRF token) or API key. */
  call(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    options?: {
      payload?: unknown;
      session?: SignedIn;
      key?: string;
      headers?: Record<string, string>;
      /** The client's address (default 127.0.0.1). */
      remoteAddress?: string;
    },
  ): Promise<LightMyRequestResponse>;
  /** Signs in by email and password; expects a session. */
  signIn(email: string, password?: string): Promise<SignedIn>;
};

/** A session: its Cookie header and CSRF token. */
export type SignedIn = { cookie: string; csrf: string; body: Record<string, unknown> };

/** The Cookie header a browser sends back after `res` set the session cookie. */
export function cookieOf(res: LightMyRequestResponse): string {
  const all = res.headers['set-cookie'];
  const list = Array.isArray(all) ? all : all === undefined ? [] : [all];
  const found = list.filter((c) => c.startsWith('outpost_session=') && !c.startsWith('outpost_session=;'));
  expect(found, JSON.stringify(list)).toHaveLength(1);
  return found[0]!.split(';')[0]!;
}

/** Creates a person directly in the store (ACTIVE with a password). */
export async function addPerson(
  db: Kysely<Database>,
  accountId: string,
  email: string,
  role: Role,
  password: string | null = PASSWORD,
): Promise<string> {
  const row = await new Users(db).create(
    accountId,
    { email, role, password: password ?? undefined },
    Date.now(),
  );
  return row.id;
}

/**
 * Builds a real service on the test store (SQLite, or PostgreSQL under the postgres project) with two
 * accounts, each with an API key and an OWNER person, mail through `smtpUrl` when given.
 */
export async function peopleService(
  options: {
    smtpUrl?: string;
    store?: { db: Kysely<Database>; drop(): Promise<void> };
    keepStore?: boolean;
  } = {},
): Promise<PeopleService> {
  const store = options.store ?? (await testStore());
  const db = store.db;
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const log = pino({ level: 'debug' }, sink);
  const artifactsDir = await mkdtemp(join(tmpdir(), 'outpost-test-people-'));
  const accounts = [];
  for (const name of ['A', 'B']) {
    const id = await createAccount(db, name);
    const key = await createApiKey(db, id);
    const ownerEmail = `owner-${name.toLowerCase()}-${id.slice(0, 8)}@example.test`;
    const ownerId = await addPerson(db, id, ownerEmail, 'OWNER');
    accounts.push({ id, key, ownerId, ownerEmail });
  }
  const service = await build({
    db,
    log,
    artifactsDir,
    retention: false,
    appUrl: 'http://outpost.test',
    alerting: {
      providers: {
        ...providersFromEnv({}),
        ...(options.smtpUrl ? { smtp: { url: options.smtpUrl, from: 'outpost@example.test' } } : {}),
      },
      delivery: { start: false },
    },
  });
  const answers: string[] = [];
  const call: PeopleService['call'] = async (method, url, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.payload !== undefined) headers['content-type'] = 'application/json';
    if (o.session) {
      headers.cookie = o.session.cookie;
      if (method !== 'GET') headers['x-csrf-token'] = o.session.csrf;
    }
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    const res = await service.app.inject({
      method,
      url,
      headers,
      ...(o.remoteAddress === undefined ? {} : { remoteAddress: o.remoteAddress }),
      ...(o.payload === undefined ? {} : { payload: JSON.stringify(o.payload) }),
    });
    answers.push(`${JSON.stringify(res.headers)}\n${res.body}`);
    return res;
  };
  const close = service.close;
  return {
    ...service,
    db,
    logs,
    answers,
    accountA: accounts[0]!,
    accountB: accounts[1]!,
    call,
    async signIn(email, password = PASSWORD) {
      const res = await call('POST', '/auth/session', { payload: { email, password } });
      expect(res.statusCode, res.body).toBe(200);
      return { cookie: cookieOf(res), csrf: res.json().csrfToken, body: res.json() };
    },
    close: async () => {
      await close();
      if (!options.keepStore) await store.drop();
      await rm(artifactsDir, { recursive: true, force: true });
    },
  };
}

/** The link in a mail's text that starts with `prefix`, and its token (after `#token=`). */
export function linkIn(text: string | null, prefix: string): { link: string; token: string } {
  const match = new RegExp(`${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}#token=([A-Za-z0-9_-]+)`).exec(
    text ?? '',
  );
  expect(match, text ?? '').not.toBeNull();
  return { link: match![0], token: match![1]! };
}

/** Waits until `check` is true (every 20 ms, at most `timeoutMs`). */
export async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
