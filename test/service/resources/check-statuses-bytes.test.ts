import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CheckQueries } from '../../../src/service/checks/store.js';
import { createCheck, icmpBody, type TestService, testService } from '../../helpers/service.js';

// The whole list of `GET /v1/check-statuses` (no query) keeps its bytes: a fixed store at a fixed time answers
// the body whose SHA-256 is pinned below (taken from the answer before the route kept its serialized answers),
// the same again from the kept answer, and again after a change and back. Both stores (in-process and
// postgres projects).

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** The fixed time of the test: 2026-03-04T05:06:07.089Z. */
const NOW = Date.UTC(2026, 2, 4, 5, 6, 7, 89);
const CHECKS = 40;
/** SHA-256 (hex) of the whole list of the store {@link fill} leaves, at NOW. */
const WHOLE_LIST_SHA256 = '8cc2c0e57f53632ea7f8289d4c47adff32f41ab71f7d45266853405d3bcb39e9';

let svc: TestService;
afterEach(async () => {
  vi.useRealTimers();
  await svc?.close();
});

const idOf = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/**
 * Fills account A with CHECKS checks of fixed ids, names (some equal, some of other case) and creation
 * times; most with a latest result and hourly rows from two locations (fractional response times), some
 * without, one with a check session, two with certificates (one expired).
 */
async function fill(): Promise<void> {
  const db = svc.context.db;
  const accountId = svc.accountA.id;
  const templateId = await createCheck(svc, 'icmp', icmpBody({ name: 'template', activated: false }));
  const checks = new CheckQueries(db);
  const template = await checks.get(accountId, templateId);
  await checks.delete(accountId, templateId);
  const firstHour = NOW - (NOW % HOUR) - 23 * HOUR;
  for (let i = 0; i < CHECKS; i++) {
    const createdMs = NOW - 30 * DAY + i * 7_777;
    const name = i % 7 === 3 ? 'Same name' : i % 5 === 0 ? `check ${CHECKS - i}` : `Check ${i}`;
    await checks.insert(
      accountId,
      { ...structuredClone(template), id: idOf(i), name, created_at: new Date(createdMs).toISOString() },
      createdMs,
    );
    if (i % 4 === 1) {
      await db
        .updateTable('checks')
        .set({ updated_at: createdMs + DAY })
        .where('id', '=', idOf(i))
        .execute();
    }
    if (i % 6 === 5) continue;
    await db
      .insertInto('check_last_results')
      .values({
        check_id: idOf(i),
        account_id: accountId,
        result_id: `result-${i}`,
        check_session_id: i % 9 === 0 ? `session-${i}` : null,
        run_location: i % 2 ? 'eu-west-1' : 'us-east-1',
        status: i % 3 === 0 ? 'FAILED' : i % 5 === 0 ? 'DEGRADED' : 'PASSED',
        has_failures: i % 3 === 0 ? 1 : 0,
        has_errors: i % 11 === 0 ? 1 : 0,
        is_degraded: i % 5 === 0 ? 1 : 0,
        response_time: 100 + i * 3.25,
        started_at: NOW - 60_000 - i * 1_000,
        stopped_at: NOW - 59_000 - i * 1_000,
      })
      .execute();
    await db
      .insertInto('check_stats_hourly')
      .values(
        Array.from({ length: 26 }, (_, h) => h)
          .filter((h) => (h + i) % 5 !== 0)
          .flatMap((h) =>
            ['eu-west-1', 'us-east-1'].slice(0, 1 + (i % 2)).map((location, l) => ({
              check_id: idOf(i),
              // Two hours before the 24 asked: left out.
              hour_start: firstHour + (h - 2) * HOUR,
              run_location: location,
              account_id: accountId,
              runs: 1 + ((h + l) % 4),
              failures: (h + i) % 7 === 0 ? 1 : 0,
              degraded: 0,
              response_time_sum: (1 + ((h + l) % 4)) * (50 + h * 1.5 + i / 3),
              response_time_max: 400,
            })),
          ),
      )
      .execute();
  }
  await db
    .insertInto('ssl_certificates')
    .values([
      {
        account_id: accountId,
        domain: 'a.example.test',
        fingerprint: 'aa',
        valid_to: NOW + 40 * DAY + HOUR,
        check_id: idOf(2),
        result_id: null,
        seen_at: NOW - DAY,
      },
      {
        account_id: accountId,
        domain: 'b.example.test',
        fingerprint: 'bb',
        valid_to: NOW - 3 * DAY + HOUR,
        check_id: idOf(7),
        result_id: null,
        seen_at: NOW - DAY,
      },
    ])
    .execute();
}

async function wholeList(): Promise<{ etag: string; body: string }> {
  const res = await svc.request('GET', '/v1/check-statuses');
  expect(res.statusCode, res.body).toBe(200);
  return { etag: String(res.headers.etag), body: res.body };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('GET /v1/check-statuses, the whole list', () => {
  it('answers the same bytes as before for a fixed store, again when kept, and after a change and back', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW);
    svc = await testService();
    await fill();
    const first = await wholeList();
    const entries = JSON.parse(first.body) as { checkId: string }[];
    expect(entries).toHaveLength(CHECKS);
    expect(sha256(first.body)).toBe(WHOLE_LIST_SHA256);
    expect(await wholeList()).toEqual(first);

    // A rename changes the answer; renaming back gives the first entries again, but for `updated_at` (a
    // second later each: the version sums the checks' `updated_at`).
    const rename = (name: string) =>
      svc.request('PUT', `/v1/checks/${idOf(4)}`, { ...icmpBody({ activated: false }), name });
    vi.setSystemTime(NOW + 1_000);
    expect((await rename('Renamed')).statusCode).toBe(200);
    const renamed = await wholeList();
    expect(renamed.body).not.toBe(first.body);
    expect(renamed.etag).not.toBe(first.etag);
    expect(renamed.body).toContain('"name":"Renamed"');
    vi.setSystemTime(NOW + 2_000);
    expect((await rename('Check 4')).statusCode).toBe(200);
    const back = await wholeList();
    expect(back.etag).not.toBe(renamed.etag);
    expect(JSON.parse(back.body).map((e: { updated_at: string }) => ({ ...e, updated_at: null }))).toEqual(
      entries.map((e) => ({ ...e, updated_at: null })),
    );
  });
});
