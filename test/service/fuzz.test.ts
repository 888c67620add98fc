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

async function rowCounts(): Promise<Record<string, number>> {
  const tables =
    TEST_DATABASE === 'postgres'
      ? await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables
          WHERE table_schema = 'public' AND table_name NOT LIKE 'kysely_%'
            AND table_name NOT IN (SELECT relname FROM pg_class WHERE relispartition)`.execute(svc.context.db)
      : await sql<{
          name: string;
        }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%'`.execute(
          svc.context.db,
        );
  const counts: Record<string, number> = {};
  for (const { name } of tables.rows) {
    // The rate limiters' counters (PostgreSQL) are the limiter's bookkeeping: a refused request is counted
    // there by design (failed authentications), which is no data written.
    if (name === 'rate_limits') continue;
    const row = await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(name)}`.execute(
      svc.context.db,
    );
    counts[name] = Number(row.rows[0]?.n ?? 0);
  }
  return counts;
}

beforeAll(async () => {
  svc = await testService();
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
    // Every route × 25 requests, each with two counts of every table: 30 s on PostgreSQL on a quiet 2-core machine.
  }, 180_000);
});
