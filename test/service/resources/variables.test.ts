import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { accountVariables } from '../../../src/service/resources/variables/variables.js';
import { type TestService, testService } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());
beforeEach(async () => {
  await svc.context.db.deleteFrom('variables').execute();
});

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
const call = (method: Method, url: string, payload?: unknown, account: 'A' | 'B' = 'A') =>
  svc.app.inject({
    method,
    url,
    headers: svc.auth(account),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
const create = (body: Record<string, unknown>, account: 'A' | 'B' = 'A') =>
  call('POST', '/v1/variables', body, account);

async function count(): Promise<number> {
  const row = await svc.context.db
    .selectFrom('variables')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('POST /v1/variables', () => {
  it('creates a variable with the spec defaults and returns its full shape', async () => {
    const res = await create({ key: 'BASE_URL', value: 'https://example.com' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual([
      'created_at',
      'key',
      'locked',
      'secret',
      'updated_at',
      'value',
    ]);
    expect(body).toMatchObject({
      key: 'BASE_URL',
      value: 'https://example.com',
      locked: false,
      secret: false,
      updated_at: null,
    });
    expect(body.created_at).toMatch(ISO);
  });

  it('accepts the limits at their edges: 128-character key, 131 072-character value, empty value', async () => {
    const key = `K${'x'.repeat(127)}`;
    expect((await create({ key, value: 'v'.repeat(131_072) })).statusCode).toBe(201);
    expect((await create({ key: '_', value: '' })).statusCode).toBe(201);
    expect((await create({ key: 'a1_B', value: 'v', locked: true })).json()).toMatchObject({
      locked: true,
      secret: false,
    });
  });

  const invalid: [string, Record<string, unknown>, string, string][] = [
    ['missing key', { value: 'v' }, 'key', 'required'],
    ['missing value', { key: 'K' }, 'value', 'required'],
    ['key of 129 characters', { key: `K${'x'.repeat(128)}`, value: 'v' }, 'key', 'maxLength'],
    ['empty key', { key: '', value: 'v' }, 'key', 'minLength'],
    ['key starting with a digit', { key: '1ABC', value: 'v' }, 'key', 'pattern'],
    ['key with a hyphen', { key: 'A-B', value: 'v' }, 'key', 'pattern'],
    ['value of 131 073 characters', { key: 'K', value: 'v'.repeat(131_073) }, 'value', 'maxLength'],
    ['value not a string', { key: 'K', value: 5 }, 'value', 'type'],
    ['locked not a boolean', { key: 'K', value: 'v', locked: 'true' }, 'locked', 'type'],
    ['secret not a boolean', { key: 'K', value: 'v', secret: 1 }, 'secret', 'type'],
    ['unknown field', { key: 'K', value: 'v', scope: 'x' }, 'scope', 'additionalProperties'],
  ];
  it.each(invalid)(
    'rejects %s with 400 naming the field and writes nothing',
    async (_name, body, field, rule) => {
      const res = await create(body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({
        statusCode: 400,
        error: 'Bad Request',
        attributes: { field, in: 'body', rule },
      });
      expect(await count()).toBe(0);
    },
  );

  it('answers 409 naming key for a key the account already has, and keeps the first value', async () => {
    expect((await create({ key: 'DUP', value: 'first' })).statusCode).toBe(201);
    const res = await create({ key: 'DUP', value: 'second' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: expect.stringContaining('DUP'),
      attributes: { code: 'OUTPOST_ERR_VARIABLE_EXISTS', field: 'key', in: 'body', rule: 'unique' },
    });
    expect((await call('GET', '/v1/variables/DUP')).json().value).toBe('first');
  });

  it('lets two accounts use the same key', async () => {
    expect((await create({ key: 'SHARED', value: 'a' })).statusCode).toBe(201);
    expect((await create({ key: 'SHARED', value: 'b' }, 'B')).statusCode).toBe(201);
    expect((await call('GET', '/v1/variables/SHARED', undefined, 'B')).json().value).toBe('b');
  });
});

describe('GET /v1/variables', () => {
  it('lists by key, 10 per page by default, with limit and page', async () => {
    for (let i = 0; i < 12; i++) await create({ key: `V${String(i).padStart(2, '0')}`, value: String(i) });
    const first = await call('GET', '/v1/variables');
    expect(first.statusCode).toBe(200);
    expect(first.json().map((v: { key: string }) => v.key)).toEqual(
      Array.from({ length: 10 }, (_, i) => `V0${i}`.slice(-3)),
    );
    expect((await call('GET', '/v1/variables?page=2')).json().map((v: { key: string }) => v.key)).toEqual([
      'V10',
      'V11',
    ]);
    expect(
      (await call('GET', '/v1/variables?limit=1&page=12')).json().map((v: { key: string }) => v.key),
    ).toEqual(['V11']);
    expect((await call('GET', '/v1/variables?limit=100')).json()).toHaveLength(12);
    expect((await call('GET', '/v1/variables?page=3')).json()).toEqual([]);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['page=0', 'page'],
    ['other=1', 'other'],
  ])('rejects %s with 400 naming %s', async (query, field) => {
    const res = await call('GET', `/v1/variables?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().attributes).toMatchObject({ field, in: 'querystring' });
  });
});

describe('GET, PUT, DELETE /v1/variables/{key}', () => {
  it('reads one variable', async () => {
    await create({ key: 'ONE', value: '1', locked: true });
    const res = await call('GET', '/v1/variables/ONE');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      key: 'ONE',
      value: '1',
      locked: true,
      secret: false,
      updated_at: null,
    });
  });

  it('answers 404 for an unknown key and 400 for a malformed one', async () => {
    expect((await call('GET', '/v1/variables/NOPE')).statusCode).toBe(404);
    expect((await call('PUT', '/v1/variables/NOPE', { value: 'v' })).statusCode).toBe(404);
    expect((await call('DELETE', '/v1/variables/NOPE')).statusCode).toBe(404);
    const bad = await call('GET', '/v1/variables/not-a-key');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().attributes).toMatchObject({ field: 'key', in: 'params', rule: 'pattern' });
  });

  it('replaces value and flags, keeps omitted flags, and sets updated_at', async () => {
    await create({ key: 'UP', value: 'old', locked: true });
    const res = await call('PUT', '/v1/variables/UP', { value: 'new' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ key: 'UP', value: 'new', locked: true, secret: false });
    expect(res.json().updated_at).toMatch(ISO);
    const again = await call('PUT', '/v1/variables/UP', { key: 'UP', value: 'newer', locked: false });
    expect(again.json()).toMatchObject({ value: 'newer', locked: false });
    expect((await call('GET', '/v1/variables/UP')).json()).toMatchObject({ value: 'newer', locked: false });
  });

  it('refuses to change the key (400 naming key) and changes nothing', async () => {
    await create({ key: 'FIXED', value: 'v' });
    const res = await call('PUT', '/v1/variables/FIXED', { key: 'OTHER', value: 'w' });
    expect(res.statusCode).toBe(400);
    expect(res.json().attributes).toEqual({
      code: 'OUTPOST_ERR_VALIDATION',
      field: 'key',
      in: 'body',
      rule: 'const',
    });
    expect((await call('GET', '/v1/variables/FIXED')).json()).toMatchObject({ value: 'v', updated_at: null });
    expect((await call('GET', '/v1/variables/OTHER')).statusCode).toBe(404);
  });

  it.each([
    ['missing value', { locked: true }, 'value'],
    ['value of 131 073 characters', { value: 'v'.repeat(131_073) }, 'value'],
    ['malformed key', { key: '9x', value: 'v' }, 'key'],
    ['unknown field', { value: 'v', extra: 1 }, 'extra'],
  ])('rejects an update with %s (400 naming %s)', async (_name, body, field) => {
    await create({ key: 'BAD', value: 'v' });
    const res = await call('PUT', '/v1/variables/BAD', body);
    expect(res.statusCode).toBe(400);
    expect(res.json().attributes).toMatchObject({ field, in: 'body' });
    expect((await call('GET', '/v1/variables/BAD')).json()).toMatchObject({ value: 'v', updated_at: null });
  });

  it('deletes with 204, then the key is gone', async () => {
    await create({ key: 'GONE', value: 'v' });
    const res = await call('DELETE', '/v1/variables/GONE');
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await call('GET', '/v1/variables/GONE')).statusCode).toBe(404);
    expect(await count()).toBe(0);
  });
});

describe('secret variables', () => {
  const planted = 'pl4nted-S3CRET-value';

  it('never show a secret value again, in any response of any route', async () => {
    const bodies: string[] = [];
    const created = await create({ key: 'TOKEN', value: planted, secret: true });
    bodies.push(created.body);
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ key: 'TOKEN', value: '*****', secret: true });
    bodies.push((await create({ key: 'TOKEN', value: planted })).body); // 409
    bodies.push((await call('GET', '/v1/variables')).body);
    bodies.push((await call('GET', '/v1/variables?limit=100')).body);
    bodies.push((await call('GET', '/v1/variables/TOKEN')).body);
    const updated = await call('PUT', '/v1/variables/TOKEN', { value: `${planted}-2`, locked: true });
    bodies.push(updated.body);
    expect(updated.json()).toMatchObject({ value: '*****', secret: true, locked: true });
    bodies.push((await call('PUT', '/v1/variables/TOKEN', { value: planted, secret: false })).body); // 400
    bodies.push((await call('PUT', '/v1/variables/TOKEN', { key: 'X', value: planted })).body); // 400
    bodies.push((await call('GET', '/v1/variables/TOKEN', undefined, 'B')).body); // 404
    bodies.push((await call('DELETE', '/v1/variables/TOKEN')).body);
    for (const body of bodies) expect(body).not.toContain(planted);
    expect(bodies.join('\n')).toContain('*****');
  });

  it('cannot be turned back into plain variables (400 naming secret), but plain ones can become secret', async () => {
    await create({ key: 'S', value: planted, secret: true });
    const res = await call('PUT', '/v1/variables/S', { value: 'x', secret: false });
    expect(res.statusCode).toBe(400);
    expect(res.json().attributes).toEqual({
      code: 'OUTPOST_ERR_VALIDATION',
      field: 'secret',
      in: 'body',
      rule: 'const',
    });
    expect(await accountVariables(svc.context.db, svc.accountA.id)).toEqual([
      { key: 'S', value: planted, secret: true },
    ]);

    await create({ key: 'P', value: 'plain' });
    const promoted = await call('PUT', '/v1/variables/P', { value: 'now-hidden', secret: true });
    expect(promoted.json()).toMatchObject({ value: '*****', secret: true });
    expect((await call('PUT', '/v1/variables/P', { value: 'still-hidden', secret: true })).statusCode).toBe(
      200,
    );
  });

  it('reach the job builder in clear through accountVariables, per account, ordered by key', async () => {
    await create({ key: 'Z_PLAIN', value: 'z' });
    await create({ key: 'A_SECRET', value: planted, secret: true });
    await create({ key: 'B_ONLY', value: 'b' }, 'B');
    expect(await accountVariables(svc.context.db, svc.accountA.id)).toEqual([
      { key: 'A_SECRET', value: planted, secret: true },
      { key: 'Z_PLAIN', value: 'z', secret: false },
    ]);
    expect(await accountVariables(svc.context.db, svc.accountB.id)).toEqual([
      { key: 'B_ONLY', value: 'b', secret: false },
    ]);
  });
});

describe('two accounts', () => {
  it("B can neither read, list, change nor delete A's variables", async () => {
    await create({ key: 'MINE', value: 'a-value' });
    expect((await call('GET', '/v1/variables/MINE', undefined, 'B')).statusCode).toBe(404);
    expect((await call('GET', '/v1/variables', undefined, 'B')).json()).toEqual([]);
    expect((await call('PUT', '/v1/variables/MINE', { value: 'b-value' }, 'B')).statusCode).toBe(404);
    expect((await call('DELETE', '/v1/variables/MINE', undefined, 'B')).statusCode).toBe(404);
    expect((await call('GET', '/v1/variables/MINE')).json()).toMatchObject({
      value: 'a-value',
      updated_at: null,
    });
  });

  it('rejects requests without a valid key (401)', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/v1/variables' });
    expect(res.statusCode).toBe(401);
  });
});
