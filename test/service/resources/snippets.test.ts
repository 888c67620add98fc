import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBadField, icmpBody, testService, type TestService } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

type Account = 'A' | 'B';
const req: TestService['request'] = (...args) => svc.request(...args);

async function createSnippet(over: Record<string, unknown> = {}, account: Account = 'A') {
  const res = await req('POST', '/v1/snippets', { name: 'login', script: 'await login()', ...over }, account);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function countSnippets(): Promise<number> {
  return (await svc.context.db.selectFrom('snippets').select('id').execute()).length;
}

describe('POST /v1/snippets', () => {
  it('creates a snippet and answers it whole', async () => {
    const res = await req('POST', '/v1/snippets', { name: 'login', script: 'await login()' });
    expect(res.statusCode).toBe(201);
    const snippet = res.json();
    expect(snippet).toEqual({
      id: expect.any(Number),
      name: 'login',
      script: 'await login()',
      created_at: expect.any(String),
      updated_at: null,
    });
    expect(new Date(snippet.created_at).toISOString()).toBe(snippet.created_at);
    expect((await req('GET', `/v1/snippets/${snippet.id}`)).json()).toEqual(snippet);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['missing name', { name: undefined }, 'name'],
    ['missing script', { script: undefined }, 'script'],
    ['empty name', { name: '' }, 'name'],
    ['name of 256', { name: 'n'.repeat(256) }, 'name'],
    ['script as number', { script: 1 }, 'script'],
    ['script of 131 073 characters', { script: 'x'.repeat(131_073) }, 'script'],
    ['script of 131 074 bytes in 65 537 characters', { script: 'é'.repeat(65_537) }, 'script'],
    ['unknown field', { language: 'js' }, 'language'],
  ];
  it.each(invalid)('rejects %s with 400 naming the field and writes nothing', async (_name, over, field) => {
    const before = await countSnippets();
    expectBadField(await req('POST', '/v1/snippets', { name: 'n', script: 's', ...over }), field);
    expect(await countSnippets()).toBe(before);
  });

  it('accepts name of 255 characters and a script of exactly 128 KiB', async () => {
    expect((await createSnippet({ name: 'n'.repeat(255) })).name).toHaveLength(255);
    expect((await createSnippet({ script: 'x'.repeat(131_072) })).script).toHaveLength(131_072);
    expect((await createSnippet({ script: 'é'.repeat(65_536) })).script).toHaveLength(65_536);
    expect((await createSnippet({ script: '' })).script).toBe('');
  });
});

describe('GET /v1/snippets', () => {
  it('lists by id with limit and page', async () => {
    const local = await testService();
    try {
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await local.app.inject({
          method: 'POST',
          url: '/v1/snippets',
          headers: local.auth(),
          payload: { name: `s${i}`, script: '' },
        });
        ids.push(res.json().id);
      }
      const list = (q: string) =>
        local.app.inject({ method: 'GET', url: `/v1/snippets${q}`, headers: local.auth() });
      expect((await list('')).json()).toEqual(
        ids.map((id, i) => ({
          id,
          name: `s${i}`,
          script: '',
          created_at: expect.any(String),
          updated_at: null,
        })),
      );
      expect((await list('?limit=2&page=2')).json().map((s: { id: number }) => s.id)).toEqual([ids[2]]);
      expectBadField(await list('?limit=0'), 'limit', 'querystring');
    } finally {
      await local.close();
    }
  });

  it('gives 404 for an unknown id and 400 for a non-integer id', async () => {
    expect((await req('GET', '/v1/snippets/2147483647')).statusCode).toBe(404);
    expectBadField(await req('GET', '/v1/snippets/one'), 'id', 'params');
    expectBadField(await req('DELETE', '/v1/snippets/1.5'), 'id', 'params');
  });
});

describe('PUT /v1/snippets/{id}', () => {
  it('replaces the given fields, keeps the rest and sets updated_at', async () => {
    const snippet = await createSnippet();
    const res = await req('PUT', `/v1/snippets/${snippet.id}`, { script: 'v2' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...snippet, script: 'v2', updated_at: expect.any(String) });
    expect((await req('GET', `/v1/snippets/${snippet.id}`)).json()).toEqual(res.json());
  });

  it('validates like create and gives 404 for unknown ids', async () => {
    const snippet = await createSnippet();
    expectBadField(await req('PUT', `/v1/snippets/${snippet.id}`, { name: '' }), 'name');
    expectBadField(await req('PUT', `/v1/snippets/${snippet.id}`, { script: 'é'.repeat(65_537) }), 'script');
    expect((await req('GET', `/v1/snippets/${snippet.id}`)).json()).toEqual(snippet);
    expect((await req('PUT', '/v1/snippets/2147483647', { name: 'x' })).statusCode).toBe(404);
  });
});

describe('DELETE /v1/snippets/{id}', () => {
  it('deletes (204), then answers 404', async () => {
    const snippet = await createSnippet();
    const res = await req('DELETE', `/v1/snippets/${snippet.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await req('GET', `/v1/snippets/${snippet.id}`)).statusCode).toBe(404);
    expect((await req('DELETE', `/v1/snippets/${snippet.id}`)).statusCode).toBe(404);
  });

  it('refuses with 409 while a check group or a check uses it', async () => {
    const snippet = await createSnippet();
    const group = (
      await req('POST', '/v1/check-groups', {
        name: 'g',
        activated: true,
        apiCheckDefaults: {},
        tearDownSnippetId: snippet.id,
      })
    ).json();
    const check = (
      await req('POST', '/v1/checks/icmp', icmpBody({ activated: false, setupSnippetId: snippet.id }))
    ).json();
    const res = await req('DELETE', `/v1/snippets/${snippet.id}`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: expect.stringContaining('still used by 1 check(s) and 1 check group(s)'),
      attributes: {
        id: String(snippet.id),
        checkIds: [check.id],
        groupIds: [group.id],
        code: 'OUTPOST_ERR_SNIPPET_IN_USE',
      },
    });
    await req('DELETE', `/v1/checks/${check.id}`);
    await req('PUT', `/v1/check-groups/${group.id}`, { tearDownSnippetId: null });
    expect((await req('DELETE', `/v1/snippets/${snippet.id}`)).statusCode).toBe(204);
  });
});

describe('two accounts', () => {
  it('never shows, changes or deletes another account’s snippet (404)', async () => {
    const snippet = await createSnippet({ name: 'a-only-snippet' });
    expect((await req('GET', `/v1/snippets/${snippet.id}`, undefined, 'B')).statusCode).toBe(404);
    expect((await req('GET', '/v1/snippets?limit=100', undefined, 'B')).body).not.toContain('a-only-snippet');
    expect((await req('PUT', `/v1/snippets/${snippet.id}`, { name: 'stolen' }, 'B')).statusCode).toBe(404);
    expect((await req('DELETE', `/v1/snippets/${snippet.id}`, undefined, 'B')).statusCode).toBe(404);
    expect((await req('GET', `/v1/snippets/${snippet.id}`)).json()).toEqual(snippet);
  });
});
