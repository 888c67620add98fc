import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE, type TestService, testService } from '../helpers/service.js';

/**
 * Property-based fuzzing of every route in the OpenAPI document with malformed
 * bodies, path parameters, query strings and headers: never a 5xx, every 4xx
 * carries the spec's error body, and a rejected request writes nothing.
 */
let svc: TestService;
let operations: { method: string; path: string }[];

/** The tables counted ({@link rowCounts}), found once. */
let tables: string[] = [];

async function tableNames(): Promise<string[]> {
  const found =
    TEST_DATABASE === 'postgres'
      ? await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables
          WHERE table_schema = 'public' AND table_name NOT LIKE 'kysely_%'
            AND table_name NOT IN (SELECT relname FROM pg_class WHERE relispartition)`.execute(svc.context.db)
      : await sql<{
          name: string;
        }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%'`.execute(
          svc.context.db,
        );
  // The rate limiters' counters (PostgreSQL) are the limiter's bookkeeping: a refused request is counted
  // there by design (failed authentications), which is no data written.
  return found.rows.map(({ name }) => name).filter((name) => name !== 'rate_limits');
}

/** The row count of every table, in one statement (one round trip, not one per table). */
async function rowCounts(): Promise<Record<string, number>> {
  const counts = sql.join(
    tables.map((name) => sql`SELECT ${name} AS name, count(*) AS n FROM ${sql.table(name)}`),
    sql` UNION ALL `,
  );
  const rows = await sql<{ name: string; n: number | string }>`${counts}`.execute(svc.context.db);
  return Object.fromEntries(rows.rows.map(({ name, n }) => [name, Number(n)]));
}

beforeAll(async () => {
  svc = await testService();
  tables = await tableNames();
  const doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
    paths: Record<string, Record<string, unknown>>;
  };
  operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
      .map((method) => ({ method: method.toUpperCase(), path })),
  );
});
afterAll(async () => svc.close());

const segment = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.integer().map(String),
  fc.uuid(),
  fc.constantFrom('0', '-1', '9999999999999999999999', '%00', '..', 'null', ' '),
);

const malformedBody = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => ({ json: JSON.stringify(v) })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 60 }).map((raw) => ({ json: `{${raw}` })) },
  { weight: 1, arbitrary: fc.constant({ json: '' }) },
);

const query = fc.dictionary(
  fc.constantFrom(
    'limit',
    'page',
    'nextId',
    'maxWaitSeconds',
    'autoAssignAlerts',
    'metrics',
    'from',
    'to',
    'probe',
    'x',
    'resultType',
    'hasFailures',
    'location',
  ),
  fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.integer().map(String),
    fc.constantFrom('-1', '0', '101', 'true', '1e309'),
  ),
  { maxKeys: 3 },
);

describe('fuzzing every route', () => {
  it('covers the routes of the document', () => {
    expect(operations.length).toBeGreaterThanOrEqual(10);
  });

  it('counts the rows of every table, a row written included', async () => {
    const before = await rowCounts();
    expect(Object.keys(before).sort()).toEqual([...tables].sort());
    expect(tables.length).toBeGreaterThanOrEqual(10);
    const created = await svc.app.inject({
      method: 'POST',
      url: '/v1/variables',
      headers: { ...svc.auth(), 'content-type': 'application/json' },
      payload: { key: 'COUNTED', value: 'x' },
    });
    expect(created.statusCode, created.body).toBeLessThan(300);
    await svc.settled();
    const after = await rowCounts();
    expect(after).not.toEqual(before);
    await svc.app.inject({ method: 'DELETE', url: '/v1/variables/COUNTED', headers: svc.auth() });
    await svc.settled();
  });

  it('answers malformed requests with 4xx and the spec error body, writing nothing', async () => {
    for (const op of operations) {
      if (op.path === '/openapi.json') continue;
      await fc.assert(
        fc.asyncProperty(
          segment,
          segment,
          malformedBody,
          query,
          fc.boolean(),
          async (a, b, body, q, authed) => {
            let first = true;
            const url = op.path.replace(/\{[^}]+\}/g, () => {
              const v = first ? a : b;
              first = false;
              return encodeURIComponent(v) || 'x';
            });
            const search = new URLSearchParams(q).toString();
            // The audit log's entries are written after the answer: the counts are taken once they are.
            await svc.settled();
            const before = await rowCounts();
            const res = await svc.app.inject({
              method: op.method as 'GET',
              url: search ? `${url}?${search}` : url,
              headers: {
                ...(authed ? svc.auth() : { authorization: `Bearer ${a}` }),
                ...(op.method === 'GET' || op.method === 'DELETE'
                  ? {}
                  : { 'content-type': 'application/json' }),
                'x-agent-id': b,
              },
              ...(op.method === 'GET' || op.method === 'DELETE' ? {} : { payload: body.json }),
            });
            expect(res.statusCode, `${op.method} ${url} → ${res.body}`).toBeLessThan(500);
            if (res.statusCode >= 400) {
              const err = res.json();
              expect(err).toMatchObject({
                statusCode: res.statusCode,
                error: expect.any(String),
                message: expect.any(String),
              });
              expect(typeof err.attributes).toBe('object');
              await svc.settled();
              expect(await rowCounts()).toEqual(before);
            }
          },
        ),
        { numRuns: 25, seed: 20261121 },
      );
    }
    // Every route × 25 requests, each with two counts of all tables in one statement: 15 s on PostgreSQL on a quiet 2-core machine.
  }, 180_000);
});
