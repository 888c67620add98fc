import type { LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { expect } from 'vitest';
import { build, type Service } from '../../src/service/app.js';
import { createAccount, createApiKey } from '../../src/service/auth.js';
import { openSqliteDatabase } from '../../src/service/store/database.js';

/** A service on an in-memory store with two accounts, for `inject` tests. */
export type TestService = Service & {
  accountA: { id: string; key: string };
  accountB: { id: string; key: string };
  /** Headers authenticating as account A (or B). */
  auth(account?: 'A' | 'B'): Record<string, string>;
  /** `app.inject` as account A (or B), with an optional JSON body. */
  request(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    payload?: unknown,
    account?: 'A' | 'B',
  ): Promise<LightMyRequestResponse>;
};

/** Builds a real service (real SQLite in memory, real routes) with two accounts. */
export async function testService(
  options: { leaseMs?: number; queueExpiryMs?: number } = {},
): Promise<TestService> {
  const db = await openSqliteDatabase(':memory:');
  const a = await createAccount(db, 'A');
  const b = await createAccount(db, 'B');
  const keyA = await createApiKey(db, a);
  const keyB = await createApiKey(db, b);
  const service = await build({ db, log: pino({ level: 'silent' }), ...options });
  const close = service.close;
  return {
    ...service,
    close: async () => {
      await close();
      await db.destroy();
    },
    accountA: { id: a, key: keyA },
    accountB: { id: b, key: keyB },
    auth: (account = 'A') => ({ authorization: `Bearer ${account === 'A' ? keyA : keyB}` }),
    request: (method, url, payload, account = 'A') =>
      service.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${account === 'A' ? keyA : keyB}` },
        ...(payload === undefined ? {} : { payload: payload as object }),
      }),
  };
}

/** A valid ICMP create body; override fields per test. */
export function icmpBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'ping loopback',
    request: { hostname: '127.0.0.1', ipFamily: 'IPv4', pingCount: 3, assertions: [] },
    heartbeat: {},
    script: '',
    ...overrides,
  };
}

/** Asserts a 400 with the spec's error body naming `field` (in `location`: body, querystring, params). */
export function expectBadField(
  res: { statusCode: number; json(): unknown },
  field: string,
  location = 'body',
): void {
  expect(res.statusCode).toBe(400);
  expect(res.json()).toMatchObject({
    statusCode: 400,
    error: 'Bad Request',
    attributes: { field, in: location },
  });
}
