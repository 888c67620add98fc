import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/service/platform/store/schema.js';
import { StatusCache } from '../../../src/service/resources/check-statuses/status-cache.js';
import {
  HOUR_MS,
  STATUS_HOURS,
  readCheckStatuses,
  readCheckStatusesJson,
  recordFinalResult,
} from '../../../src/service/resources/check-statuses/store.js';
import { createCheck, icmpBody, type TestService, testService } from '../../helpers/service.js';

// GET /v1/check-statuses keeps each check's hourly sums and its entry's JSON between reads (StatusCache), under
// versions read from the store. Whatever changes between two reads, the second must answer what a read with
// nothing kept answers: a new result, a late result of an earlier hour, a rename, a deleted check, a new
// certificate, the hour moving on. Runs on SQLite and on PostgreSQL (the postgres project).

let svc: TestService;
let db: Kysely<Database>;
let accountId: string;
let checks: string[];
const NOW = Date.UTC(2026, 10, 29, 12, 30);

/** A handle on the same store with nothing kept: the cache is kept per Kysely instance. */
const uncached = () =>
  db.withPlugin({ transformQuery: (a) => a.node, transformResult: async (a) => a.result });

async function result(checkId: string, startedAt: number, failed = false, responseTime = 100): Promise<void> {
  await recordFinalResult(db, {
    accountId,
    checkId,
    resultId: randomUUID(),
    checkSessionId: null,
    runLocation: 'eu-west-1',
    status: failed ? 'FAILED' : 'PASSED',
    hasFailures: failed,
    hasErrors: false,
    isDegraded: false,
    responseTime,
    startedAt,
    stoppedAt: startedAt + responseTime,
  });
}

/**
 * A handle on the store (a cache of its own) that records, as JSON of their query nodes, the selects whose
 * query names `word` (a table or a column).
 */
function recordingSelects(word: string): { reads: string[]; handle: Kysely<Database> } {
  const reads: string[] = [];
  const handle = db.withPlugin({
    transformQuery(args) {
      const node = JSON.stringify(args.node);
      if (args.node.kind === 'SelectQueryNode' && node.includes(word)) reads.push(node);
      return args.node;
    },
    transformResult: async (args) => args.result,
  });
  return { reads, handle };
}

/** The cached read's JSON beside a read with nothing kept, at `nowMs`; also the parsed list. */
async function expectFreshAt(nowMs: number): Promise<unknown[]> {
  const cached = await readCheckStatusesJson(db, accountId, nowMs);
  const fresh = JSON.stringify(await readCheckStatuses(uncached(), accountId, nowMs));
  expect(cached).toBe(fresh);
  return JSON.parse(cached) as unknown[];
}

beforeEach(async () => {
  svc = await testService();
  db = svc.context.db;
  accountId = svc.accountA.id;
  checks = [];
  for (const name of ['alpha', 'bravo', 'charlie', 'delta']) {
    checks.push(await createCheck(svc, 'icmp', icmpBody({ name, activated: false })));
  }
  for (let h = 0; h < 30; h++) {
    for (const [i, checkId] of checks.slice(0, 3).entries()) {
      await result(checkId, NOW - h * HOUR_MS - i * 60_000, h % 7 === i, 50 + h + i);
    }
  }
});
afterEach(async () => svc?.close());

describe('the statuses a service keeps between reads', () => {
  it('answers what a read with nothing kept answers after every kind of change', async () => {
    const first = (await expectFreshAt(NOW)) as { name: string; availability24h: number | null }[];
    expect(first.map((s) => s.name)).toEqual(['alpha', 'bravo', 'charlie', 'delta']);
    expect(first[3]!.availability24h).toBeNull();
    // Read again with nothing changed, then after each change.
    await expectFreshAt(NOW);
    await result(checks[1]!, NOW + 60_000, true, 900);
    const afterNew = (await expectFreshAt(NOW + 120_000)) as { hasFailures: boolean }[];
    expect(afterNew[1]!.hasFailures).toBe(true);
    // A late result of an earlier hour: the last result stays, the sums move.
    const before = (await expectFreshAt(NOW + 120_000)) as { responseTimes24h: (number | null)[] }[];
    await result(checks[0]!, NOW - 5 * HOUR_MS + 1000, false, 10_000);
    const late = (await expectFreshAt(NOW + 120_000)) as { responseTimes24h: (number | null)[] }[];
    expect(late[0]!.responseTimes24h[STATUS_HOURS - 6]).not.toBe(
      before[0]!.responseTimes24h[STATUS_HOURS - 6],
    );
    // The first result of a check that had none.
    await result(checks[3]!, NOW + 1000);
    await expectFreshAt(NOW + 120_000);
    // A rename (the list is by name) and a certificate.
    await db
      .updateTable('checks')
      .set({ name: 'zulu', updated_at: NOW + 130_000 })
      .where('id', '=', checks[0]!)
      .execute();
    await db
      .insertInto('ssl_certificates')
      .values({
        account_id: accountId,
        domain: 'example.test',
        fingerprint: 'AA:BB',
        valid_to: NOW + 10 * 86_400_000,
        check_id: checks[2]!,
        result_id: null,
        seen_at: NOW,
      })
      .execute();
    const renamed = (await expectFreshAt(NOW + 140_000)) as {
      name: string;
      sslDaysRemaining: number | null;
    }[];
    expect(renamed.map((s) => s.name)).toEqual(['bravo', 'charlie', 'delta', 'zulu']);
    expect(renamed[1]!.sslDaysRemaining).toBe(9);
    // A deleted check leaves the list and what was kept of it.
    const deleted = await svc.request('DELETE', `/v1/checks/${checks[1]}`);
    expect(deleted.statusCode, deleted.body).toBeLessThan(300);
    expect(((await expectFreshAt(NOW + 150_000)) as unknown[]).length).toBe(3);
    // The hour moves on: the kept sums shift, and a day later nothing of them is left.
    for (const later of [HOUR_MS, 2 * HOUR_MS + 1, 23 * HOUR_MS, 30 * HOUR_MS]) {
      await expectFreshAt(NOW + later);
    }
    const dayLater = (await expectFreshAt(NOW + 30 * HOUR_MS)) as { availability24h: number | null }[];
    expect(dayLater.every((s) => s.availability24h === null)).toBe(true);
  });

  it('answers pages and named checks as a read with nothing kept does', async () => {
    await readCheckStatusesJson(db, accountId, NOW);
    await result(checks[2]!, NOW + 5000, true);
    for (const page of [
      { limit: 2, offset: 0 },
      { limit: 2, offset: 2 },
    ]) {
      expect(await readCheckStatusesJson(db, accountId, NOW + 6000, undefined, page)).toBe(
        JSON.stringify(await readCheckStatuses(uncached(), accountId, NOW + 6000, undefined, page)),
      );
    }
    const named = [checks[2]!, checks[0]!];
    expect(await readCheckStatusesJson(db, accountId, NOW + 6000, named)).toBe(
      JSON.stringify(await readCheckStatuses(uncached(), accountId, NOW + 6000, named)),
    );
  });

  it('reads the rollups again only of the checks whose results moved', async () => {
    const { reads: hourlyReads, handle: counting } = recordingSelects('check_stats_hourly');
    await readCheckStatusesJson(counting, accountId, NOW);
    expect(hourlyReads.length).toBe(1);
    hourlyReads.length = 0;
    await readCheckStatusesJson(counting, accountId, NOW);
    expect(hourlyReads).toEqual([]);
    await result(checks[1]!, NOW + 1000);
    await readCheckStatusesJson(counting, accountId, NOW + 2000);
    expect(hourlyReads.length).toBe(1);
    expect(hourlyReads[0]).toContain(checks[1]!);
    expect(hourlyReads[0]).not.toContain(checks[0]!);
  });
});

describe('the rows a read of kept statuses reads', () => {
  it('reads the latest results in full again only of the checks whose entries moved', async () => {
    // The reads of checks ⨝ check_last_results with every column of the result (not only its versions).
    const { reads: fullReads, handle: counting } = recordingSelects('check_session_id');
    await readCheckStatusesJson(counting, accountId, NOW);
    expect(fullReads.length).toBe(1);
    fullReads.length = 0;
    await readCheckStatusesJson(counting, accountId, NOW);
    expect(fullReads).toEqual([]);

    await result(checks[2]!, NOW + 1000);
    const list = JSON.parse(await readCheckStatusesJson(counting, accountId, NOW + 2000)) as {
      checkId: string;
    }[];
    expect(fullReads.length).toBe(1);
    expect(fullReads[0]).toContain(checks[2]!);
    for (const other of [checks[0]!, checks[1]!, checks[3]!]) expect(fullReads[0]).not.toContain(other);
    // The check without a result (delta) is answered from its version row alone, every time.
    expect(list.map((entry) => entry.checkId).sort()).toEqual([...checks].sort());
  });
});

describe('a read that misses more entries than it reads by name', () => {
  it('reads the whole list again and answers what a read with nothing kept answers', async () => {
    // Past 500 checks without a kept entry, the read reads every check's row again instead of naming them.
    const more: string[] = [];
    for (let batch = 0; batch < 26; batch++) {
      more.push(
        ...(await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            createCheck(svc, 'icmp', icmpBody({ name: `bulk ${batch * 20 + i}`, activated: false })),
          ),
        )),
      );
    }
    for (const [i, checkId] of more.entries()) await result(checkId, NOW - (i % 50) * 60_000, i % 9 === 0);
    expect((await expectFreshAt(NOW)).length).toBe(checks.length + more.length);
    // A few moved: they are read by name, beside the kept rest.
    for (const checkId of more.slice(0, 5)) await result(checkId, NOW + 500, true);
    await expectFreshAt(NOW + 1000);
    // The hour turned: every entry's key moved, the kept sums are shifted, the whole list is read again.
    await expectFreshAt(NOW + HOUR_MS);
    await result(more[7]!, NOW + HOUR_MS + 1000);
    await expectFreshAt(NOW + HOUR_MS + 2000);
  });
});

describe('StatusCache', () => {
  const sums = (first: number) => Float64Array.from({ length: 3 * STATUS_HOURS }, (_, i) => first + i);

  it('serves sums kept from an earlier hour shifted, never those of a later hour or another version', () => {
    const cache = new StatusCache();
    const from = Date.UTC(2026, 0, 1);
    cache.keep('a', 'c1', 'v1', from, sums(0));
    expect(cache.read('a', 'c1', 'v2', from)).toBeUndefined();
    expect(cache.read('a', 'c1', 'v1', from - HOUR_MS)).toBeUndefined();
    const shifted = cache.read('a', 'c1', 'v1', from + 2 * HOUR_MS)!;
    expect([...shifted.subarray(0, 3)]).toEqual([6, 7, 8]);
    expect([...shifted.subarray(3 * (STATUS_HOURS - 2))]).toEqual([0, 0, 0, 0, 0, 0]);
    expect(cache.read('a', 'c1', 'v1', from + 30 * HOUR_MS)!.every((v) => v === 0)).toBe(true);
  });

  it('keeps JSON only beside kept sums, under its key, and drops it when the hour moves', () => {
    const cache = new StatusCache();
    cache.keepJson('a', 'c1', 'k', '{}');
    expect(cache.json('a', 'c1', 'k')).toBeUndefined();
    cache.keep('a', 'c1', 'v1', 0, sums(0));
    cache.keepJson('a', 'c1', 'k', '{"x":1}');
    expect(cache.json('a', 'c1', 'k')).toBe('{"x":1}');
    expect(cache.json('a', 'c1', 'other')).toBeUndefined();
    cache.read('a', 'c1', 'v1', HOUR_MS);
    expect(cache.json('a', 'c1', 'k')).toBeUndefined();
  });

  it('holds at most its bound of checks, dropping the accounts read longest ago, and forgets deleted checks', () => {
    const cache = new StatusCache(3);
    cache.keep('a', 'c1', 'v', 0, sums(0));
    cache.keep('a', 'c2', 'v', 0, sums(0));
    cache.keep('b', 'c3', 'v', 0, sums(0));
    expect(cache.size).toBe(3);
    cache.keep('b', 'c4', 'v', 0, sums(0));
    expect(cache.size).toBe(2);
    expect(cache.read('a', 'c1', 'v', 0)).toBeUndefined();
    expect(cache.read('b', 'c3', 'v', 0)).toBeDefined();
    cache.retainOnly('b', new Set(['c4']));
    expect(cache.size).toBe(1);
    expect(cache.read('b', 'c3', 'v', 0)).toBeUndefined();
    // One account with more checks than the bound: no more are kept, and a kept one can still move on.
    const one = new StatusCache(2);
    for (const checkId of ['x1', 'x2', 'x3']) one.keep('x', checkId, 'v', 0, sums(0));
    expect(one.size).toBe(2);
    expect(one.read('x', 'x3', 'v', 0)).toBeUndefined();
    one.keep('x', 'x1', 'v2', 0, sums(1));
    expect(one.size).toBe(2);
    expect(one.read('x', 'x1', 'v2', 0)?.[0]).toBe(1);
  });
});
