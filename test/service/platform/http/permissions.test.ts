import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../../../src/service/platform/http/auth.js';
import {
  holds,
  PERMISSIONS,
  type Permission,
  type Principal,
  requirePermissions,
  ROLES,
  type Role,
} from '../../../../src/service/platform/http/permissions.js';
import { Users } from '../../../../src/service/users/index.js';
import { PrivateLocations } from '../../../../src/service/resources/private-locations/private-locations.js';
import { type TestService, testService } from '../../../helpers/service.js';

/**
 * Roles against routes (docs/teams.md, "Permissions"): every operation of the OpenAPI document is called with
 * a key of each role, a web session of each role and a private location's key, and each answer is checked
 * against the permission the route declares. A route whose check is missing or wrong fails here.
 */

type Operation = { method: string; path: string; url: string; permission: Permission };

let svc: TestService;
let operations: Operation[];
/** An account-A key of each role. */
const keys = {} as Record<Role, string>;
let locationKey: string;

/** A value for a path parameter that matches its schema and names nothing. */
function placeholder(name: string): string {
  if (/^(id|checkId|groupId|incidentId|incidentUpdateId|subscriberId|keyId|dashboardId)$/.test(name))
    return '00000000-0000-4000-8000-000000000000';
  if (name === 'type') return 'icmp';
  return 'none';
}

beforeAll(async () => {
  svc = await testService();
  for (const role of ROLES)
    keys[role] = await createApiKey(svc.context.db, svc.accountA.id, undefined, role, role);
  locationKey = await new PrivateLocations(svc.context.db).ensureEmbedded(
    svc.accountA.id,
    'roles-test',
    Date.now(),
  );
  const doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  operations = [];
  for (const [path, item] of Object.entries(
    doc.paths as Record<string, Record<string, Record<string, unknown>>>,
  )) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => placeholder(name));
      operations.push({
        method: method.toUpperCase(),
        path,
        url,
        permission: op['x-outpost-permission'] as Permission,
      });
    }
  }
});
afterAll(async () => svc?.close());

/** Calls `op` with `headers`; a body `{}` for the methods that take one (most then fail validation: fine). */
function call(op: Operation, headers: Record<string, string>) {
  const withBody = op.method !== 'GET' && op.method !== 'DELETE';
  return svc.app.inject({
    method: op.method as 'GET',
    url: op.url,
    headers: { ...headers, ...(withBody ? { 'content-type': 'application/json' } : {}) },
    ...(withBody ? { payload: '{}' } : {}),
  });
}

describe('every operation of the OpenAPI document', () => {
  it('declares a permission the service knows', () => {
    expect(operations.length).toBeGreaterThan(100);
    const undeclared = operations.filter((op) => !Object.hasOwn(PERMISSIONS, op.permission ?? ''));
    expect(undeclared.map((op) => `${op.method} ${op.path}`)).toEqual([]);
    // The agent protocol, and only it, needs `agent`.
    for (const op of operations)
      expect(op.permission === 'agent', op.path).toBe(op.path.startsWith('/v1/agent/'));
    // Changes need more than `read` (one's own sign-in: `self`), except the reads sent as POST.
    const readsByPost = new Set(['POST /v1/analytics/checks']);
    for (const op of operations.filter(
      (o) => o.method !== 'GET' && !readsByPost.has(`${o.method} ${o.path}`),
    ))
      expect(op.permission, `${op.method} ${op.path}`).not.toBe('read');
    // Reads are reads: no GET needs more than `read`, except the pages of who may use the account (admin).
    const adminReads = ['/v1/api-keys', '/v1/audit-log', '/v1/sso'];
    for (const op of operations.filter(
      (o) => o.method === 'GET' && !adminReads.some((p) => o.path.startsWith(p)),
    ))
      expect(op.permission, `${op.method} ${op.path}`).toBe('read');
  });

  it.each(ROLES)('answers a %s key as its declared permission says', async (role) => {
    const wrong: string[] = [];
    for (const op of operations) {
      const res = await call(op, { authorization: `Bearer ${keys[role]}` });
      const principal: Principal = { kind: 'api-key', id: 'k', name: null, role, viaWebSession: false };
      const allowed = holds(principal, op.permission);
      const refused = res.statusCode === 403 && res.json().attributes?.code === 'OUTPOST_ERR_FORBIDDEN';
      if (allowed === refused || res.statusCode === 401) {
        wrong.push(`${op.method} ${op.path} (${op.permission}): ${res.statusCode} ${res.body.slice(0, 120)}`);
      }
      if (refused) {
        expect(res.json().attributes).toEqual({
          code: 'OUTPOST_ERR_FORBIDDEN',
          permission: op.permission,
          role: op.permission === 'agent' ? null : PERMISSIONS[op.permission].role,
        });
      }
    }
    expect(wrong).toEqual([]);
  });

  it.each(ROLES)(
    'answers a web session of a %s key as its declared permission says, never on the agent protocol',
    async (role) => {
      const signIn = await svc.app.inject({
        method: 'POST',
        url: '/auth/session',
        headers: { 'content-type': 'application/json' },
        payload: { apiKey: keys[role] },
      });
      expect(signIn.statusCode, signIn.body).toBe(200);
      expect(signIn.json().role).toBe(role);
      const cookie = signIn.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
      const headers = { cookie, 'x-csrf-token': signIn.json().csrfToken as string };
      const wrong: string[] = [];
      for (const op of operations) {
        const res = await call(op, headers);
        if (op.permission === 'agent') {
          if (res.statusCode !== 401) wrong.push(`${op.method} ${op.path}: ${res.statusCode}`);
          continue;
        }
        const allowed = holds(
          { kind: 'api-key', id: 'k', name: null, role, viaWebSession: true },
          op.permission,
        );
        const refused = res.statusCode === 403 && res.json().attributes?.code === 'OUTPOST_ERR_FORBIDDEN';
        if (allowed === refused || res.statusCode === 401) {
          wrong.push(
            `${op.method} ${op.path} (${op.permission}): ${res.statusCode} ${res.body.slice(0, 120)}`,
          );
        }
      }
      expect(wrong).toEqual([]);
    },
  );

  it.each(ROLES)(
    'answers a %s person, signed in with a password, as its declared permission says',
    async (role) => {
      const email = `${role.toLowerCase().replace('_', '-')}@roles.example`;
      const password = `the ${role} person's password`;
      await new Users(svc.context.db).create(svc.accountA.id, { email, role, password }, Date.now());
      const signIn = await svc.app.inject({
        method: 'POST',
        url: '/auth/session',
        headers: { 'content-type': 'application/json' },
        payload: { email, password },
      });
      expect(signIn.statusCode, signIn.body).toBe(200);
      expect(signIn.json()).toMatchObject({ role, user: { email }, keyPrefix: null });
      const cookie = signIn.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
      const headers = { cookie, 'x-csrf-token': signIn.json().csrfToken as string };
      const wrong: string[] = [];
      for (const op of operations) {
        // Not the calls that would end this session or change this person's sign-in under the walk.
        if (op.path.startsWith('/v1/users/me') && op.method !== 'GET') continue;
        const res = await call(op, headers);
        if (op.permission === 'agent') {
          if (res.statusCode !== 401) wrong.push(`${op.method} ${op.path}: ${res.statusCode}`);
          continue;
        }
        const allowed = holds({ kind: 'user', id: 'u', name: email, role }, op.permission);
        const refused = res.statusCode === 403 && res.json().attributes?.code === 'OUTPOST_ERR_FORBIDDEN';
        if (allowed === refused || res.statusCode === 401) {
          wrong.push(
            `${op.method} ${op.path} (${op.permission}): ${res.statusCode} ${res.body.slice(0, 120)}`,
          );
        }
      }
      expect(wrong).toEqual([]);
    },
  );

  it("lets a private location's key call the agent protocol only (401 elsewhere, as before roles)", async () => {
    const wrong: string[] = [];
    for (const op of operations) {
      const res = await call(op, {
        authorization: `Bearer ${locationKey}`,
        'x-agent-id': 'roles-test-agent',
      });
      const ok =
        op.permission === 'agent' ? res.statusCode !== 401 && res.statusCode !== 403 : res.statusCode === 401;
      if (!ok)
        wrong.push(`${op.method} ${op.path} (${op.permission}): ${res.statusCode} ${res.body.slice(0, 120)}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('a READ_ONLY key', () => {
  it('reads, and changes nothing: the refused create leaves no check behind', async () => {
    const readOnly = { authorization: `Bearer ${keys.READ_ONLY}` };
    const before = await svc.app.inject({ method: 'GET', url: '/v1/checks', headers: readOnly });
    expect(before.statusCode).toBe(200);
    const res = await svc.app.inject({
      method: 'POST',
      url: '/v1/checks/icmp',
      headers: readOnly,
      payload: { name: 'not allowed', hostname: '127.0.0.1' },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toMatch(/READ_ONLY.*READ_WRITE or above/);
    const after = await svc.app.inject({ method: 'GET', url: '/v1/checks', headers: readOnly });
    expect(after.json()).toEqual(before.json());
  });
});

describe('API keys and roles', () => {
  it('makes no key stronger than its maker, and lets no key revoke a stronger one', async () => {
    const admin = { authorization: `Bearer ${keys.ADMIN}` };
    const owner = await svc.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: admin,
      payload: { name: 'up', role: 'OWNER' },
    });
    expect(owner.statusCode).toBe(400);
    expect(owner.json().attributes).toMatchObject({ field: 'role' });
    const made = await svc.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: admin,
      payload: { name: 'ci', role: 'READ_ONLY' },
    });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json().role).toBe('READ_ONLY');
    const list = (await svc.app.inject({ method: 'GET', url: '/v1/api-keys', headers: admin })).json() as {
      id: string;
      role: Role;
      keyPrefix: string;
    }[];
    const ownerKey = list.find((k) => k.keyPrefix === keys.OWNER.slice(0, 7))!;
    const revoke = await svc.app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${ownerKey.id}`,
      headers: admin,
    });
    expect(revoke.statusCode).toBe(403);
    const stillWorks = await svc.app.inject({
      method: 'GET',
      url: '/v1/checks',
      headers: { authorization: `Bearer ${keys.OWNER}` },
    });
    expect(stillWorks.statusCode).toBe(200);
  });

  it('ends a key at its expiresAt, and refuses an expiry in the past', async () => {
    const owner = { authorization: `Bearer ${keys.OWNER}` };
    const past = await svc.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: owner,
      payload: { name: 'old', expiresAt: new Date(Date.now() - 1000).toISOString() },
    });
    expect(past.statusCode).toBe(400);
    expect(past.json().attributes).toMatchObject({ field: 'expiresAt' });
    const soon = await svc.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: owner,
      payload: { name: 'soon', role: 'READ_ONLY', expiresAt: new Date(Date.now() + 1500).toISOString() },
    });
    expect(soon.statusCode, soon.body).toBe(201);
    const { rawKey } = soon.json() as { rawKey: string };
    const use = () =>
      svc.app.inject({ method: 'GET', url: '/v1/checks', headers: { authorization: `Bearer ${rawKey}` } });
    expect((await use()).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 1600));
    expect((await use()).statusCode).toBe(401);
  });
});

describe('a route without a permission', () => {
  it('stops the service from building, naming the route', async () => {
    const app = Fastify();
    app.addHook('onRoute', requirePermissions);
    expect(() => app.get('/v1/forgotten', async () => 'x')).toThrow(
      /route GET \/v1\/forgotten declares no permission/,
    );
    expect(() =>
      app.get('/v1/typo', { config: { permission: 'reed' as Permission } }, async () => 'x'),
    ).toThrow(/declares no permission/);
    app.get('/v1/declared', { config: { permission: 'read' } }, async () => 'x');
    await app.close();
  });
});
