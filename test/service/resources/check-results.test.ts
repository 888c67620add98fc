import { createHash } from 'node:crypto';
import { CompiledQuery } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult, Job } from '../../../src/protocol/index.js';
import { bodyAjv } from '../../../src/service/platform/http/validation.js';
import { CheckResultResponseSchema } from '../../../src/service/resources/check-results/schema.js';
import { Scheduler } from '../../../src/service/runs/scheduler/scheduler.js';
import {
  TEST_DATABASE,
  apiBody,
  claimJobs,
  createCheck,
  expectBadField,
  icmpBody,
  resultFor,
  type TestService,
  testService,
  triggerCheck,
} from '../../helpers/service.js';

const validResult = bodyAjv.compile(CheckResultResponseSchema);
const expectValid = (doc: unknown) => expect(validResult(doc) ? [] : validResult.errors).toEqual([]);

const icmpPart = {
  hostname: '127.0.0.1',
  resolvedIp: '127.0.0.1',
  ipFamily: 'IPv4',
  pingCount: 2,
  packetSize: 56,
  packetsSent: 2,
  packetsReceived: 2,
  packetLoss: 0,
  latency: { min: 0.03, avg: 0.04, max: 0.05, stdDev: 0.01 },
  dnsResolutionTime: 0,
  socketType: 'datagram' as const,
  pingResults: [
    { sequence: 1, success: true, rtt: 0.03, ttl: 64 },
    { sequence: 2, success: true, rtt: 0.05, ttl: 64 },
  ],
};
const dnsPart = {
  returnCode: 'NOERROR',
  answer: 'example.test. 60 IN A 192.0.2.1',
  json: {
    Status: 0,
    TC: false,
    RD: true,
    RA: true,
    AD: false,
    CD: false,
    Question: [{ name: 'example.test.', type: 1 }],
    Answer: [{ name: 'example.test.', type: 1, TTL: 60, data: '192.0.2.1' }],
  },
  responseTime: 1.2,
  nameServerInfo: { host: '127.0.0.1', port: 53, protocol: 'UDP' as const },
  truncatedRetriedOverTcp: false,
};
const tcpPart = {
  hostname: '127.0.0.1',
  port: 9,
  resolvedIp: '127.0.0.1',
  ipFamily: 'IPv4' as const,
  resolver: 'dns' as const,
  connected: false,
  errorCode: 'ECONNREFUSED',
  timings: { dns: 0, connect: 0.2, firstByte: null, total: 0.3 },
  bytesSent: 0,
  bytesReceived: 0,
  responseData: '',
  responseTruncated: false,
};
const httpPart = (body: string) => ({
  request: { method: 'GET', url: 'http://127.0.0.1:8080/health', headers: { accept: '*/*' }, body: 'ping' },
  response: {
    statusCode: 200,
    statusText: 'OK',
    url: 'http://127.0.0.1:8080/health',
    headers: { 'content-type': 'text/plain' },
    bodySizeBytes: body.length,
    bodyTruncated: false,
    body,
  },
  timings: { socket: 0.1, lookup: 0.1, connect: 0.2, secureConnect: null, response: 1, end: 1.2 },
  timingPhases: { wait: 0.1, dns: 0, tcp: 0.1, tls: null, firstByte: 0.8, download: 0.2, total: 1.2 },
  redirects: [],
  certificate: null,
  resolvedIp: '127.0.0.1',
  connection: { protocol: 'tcp' as const, family: 4 as const, remoteAddress: '127.0.0.1', remotePort: 8080 },
  resolver: 'dns' as const,
  errorCode: null,
});

let svc: TestService;
const agentId = '00000000-0000-4000-8000-0000000000c1';
const checks: Record<string, string> = {};

/** Claims the one queued job of `checkId` and posts `result(job)` as the agent would. */
async function postResultFor(checkId: string, result: (job: Job) => CheckResult): Promise<Job> {
  const jobs = await claimJobs(svc, agentId);
  const job = jobs.find((j) => j.check.id === checkId);
  expect(job, `a job of ${checkId}`).toBeDefined();
  const res = await svc.app.inject({
    method: 'POST',
    url: `/v1/agent/jobs/${job!.jobId}/result`,
    headers: { ...svc.auth(), 'x-agent-id': agentId },
    payload: result(job!),
  });
  expect(res.statusCode, res.body).toBe(200);
  return job!;
}

/** A triggered run of `checkId` whose result started at `startedAtMs`. */
async function runAt(
  checkId: string,
  startedAtMs: number,
  extra: Partial<CheckResult> = {},
  status: 'PASSED' | 'FAILED' = 'PASSED',
): Promise<Job> {
  await triggerCheck(svc, checkId);
  return postResultFor(checkId, (job) =>
    resultFor(job, status, {
      startedAt: new Date(startedAtMs).toISOString(),
      stoppedAt: new Date(startedAtMs + 5).toISOString(),
      ...extra,
    }),
  );
}

const list = async (checkId: string, query = '', account: 'A' | 'B' = 'A') => {
  const res = await svc.request('GET', `/v1/check-results/${checkId}${query}`, undefined, account);
  return res;
};

const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);

beforeAll(async () => {
  svc = await testService();
  checks.icmp = await createCheck(svc, 'icmp', icmpBody({ name: 'ping', activated: false }));
  checks.dns = await createCheck(svc, 'dns', {
    name: 'dns',
    activated: false,
    request: { recordType: 'A', query: 'example.test' },
  });
  checks.tcp = await createCheck(svc, 'tcp', {
    name: 'tcp',
    activated: false,
    request: { hostname: '127.0.0.1', port: 9 },
  });
  checks.url = await createCheck(svc, 'url', {
    name: 'url',
    activated: false,
    request: { url: 'http://127.0.0.1:8080/health' },
  });
  checks.api = await createCheck(svc, 'api', apiBody({ name: 'api', activated: false }));
  checks.browser = await createCheck(svc, 'browser', { name: 'browser', activated: false, script: 'x' });
  checks.paged = await createCheck(svc, 'icmp', icmpBody({ name: 'paged', activated: false }));
});
afterAll(async () => svc.close());

describe('GET /v1/check-results/{checkId}: each check type’s result part', () => {
  it('ICMP: icmpCheckResult as posted, other parts null, schema-valid', async () => {
    await runAt(checks.icmp!, T0, { icmpCheckResult: icmpPart });
    const res = await list(checks.icmp!);
    expect(res.statusCode).toBe(200);
    const [item] = res.json();
    expectValid(item);
    expect(item).toMatchObject({
      checkId: checks.icmp,
      checkType: 'ICMP',
      name: 'ping',
      hasFailures: false,
      hasErrors: false,
      isDegraded: false,
      overMaxResponseTime: false,
      runLocation: 'us-east-1',
      startedAt: new Date(T0).toISOString(),
      stoppedAt: new Date(T0 + 5).toISOString(),
      responseTime: 1.5,
      attempts: 1,
      resultType: 'FINAL',
      icmpCheckResult: icmpPart,
      dnsCheckResult: null,
      tcpCheckResult: null,
      httpCheckResult: null,
      apiCheckResult: null,
      browserCheckResult: null,
      multiStepCheckResult: null,
    });
    expect(item.logs).toBeUndefined();
  });

  it('DNS and TCP: their parts as posted', async () => {
    await runAt(checks.dns!, T0, { dnsCheckResult: dnsPart });
    await runAt(checks.tcp!, T0, { tcpCheckResult: tcpPart }, 'FAILED');
    const [dns] = (await list(checks.dns!)).json();
    expectValid(dns);
    expect(dns).toMatchObject({ checkType: 'DNS', dnsCheckResult: dnsPart, icmpCheckResult: null });
    const [tcp] = (await list(checks.tcp!)).json();
    expectValid(tcp);
    expect(tcp).toMatchObject({
      checkType: 'TCP',
      hasFailures: true,
      status: 'FAILED',
      tcpCheckResult: tcpPart,
    });
  });

  it('URL: httpCheckResult; API: httpCheckResult and apiCheckResult; bodies only in the single result', async () => {
    await runAt(checks.url!, T0, { httpCheckResult: httpPart('ok') });
    await runAt(checks.api!, T0, {
      httpCheckResult: httpPart('{"status":"up"}'),
      logs: [{ time: new Date(T0).toISOString(), level: 'INFO', msg: 'setup ran' }],
    });
    const [url] = (await list(checks.url!)).json();
    expectValid(url);
    expect(url.httpCheckResult.response.statusCode).toBe(200);
    expect(url.httpCheckResult.response.body).toBeUndefined();
    expect(url.apiCheckResult).toBeNull();

    const [apiItem] = (await list(checks.api!)).json();
    expectValid(apiItem);
    expect(apiItem.apiCheckResult.response.body).toBeUndefined();
    expect(apiItem.apiCheckResult.request.body).toBeUndefined();
    const one = await svc.request('GET', `/v1/check-results/${checks.api}/${apiItem.id}`);
    expect(one.statusCode).toBe(200);
    expectValid(one.json());
    expect(one.json()).toMatchObject({
      id: apiItem.id,
      checkType: 'API',
      httpCheckResult: httpPart('{"status":"up"}'),
      apiCheckResult: httpPart('{"status":"up"}'),
      logs: [{ level: 'INFO', msg: 'setup ran' }],
    });
  });

  it('a check type without a part yet (browser) lists its results with every part null', async () => {
    await runAt(checks.browser!, T0).catch(() => undefined);
    const res = await list(checks.browser!);
    expect(res.statusCode).toBe(200);
    for (const item of res.json()) {
      expectValid(item);
      expect(item.browserCheckResult).toBeNull();
    }
  });
});

describe('scheduled runs (no check session)', () => {
  it('are listed and readable, with checkSessionId null and their run ids', async () => {
    const id = await createCheck(svc, 'icmp', icmpBody({ name: 'scheduled', activated: true, frequency: 1 }));
    const scheduler = new Scheduler(svc.context.db, svc.queue, { log: pino({ level: 'silent' }) });
    expect(await scheduler.tick(Date.now())).toBeGreaterThanOrEqual(1);
    const job = await postResultFor(id, (j) => resultFor(j, 'PASSED', { icmpCheckResult: icmpPart }));
    const res = await list(id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toHaveLength(1);
    const [item] = res.json();
    expect(item).toMatchObject({ checkSessionId: null, sequenceId: job.jobId });
    // checkRunId is a number, as the hosted API answers it (the Go SDK reads it into an int64): the first 52
    // bits of the SHA-256 of the run's id.
    expect(Number.isSafeInteger(item.checkRunId)).toBe(true);
    expect(item.checkRunId).toBe(
      Number.parseInt(createHash('sha256').update(job.jobId).digest('hex').slice(0, 13), 16),
    );
    expect(JSON.parse(res.body)[0].checkRunId).toBeTypeOf('number');
    const one = await svc.request('GET', `/v1/check-results/${id}/${item.id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ id: item.id, icmpCheckResult: icmpPart, logs: [] });
    await svc.request('PUT', `/v1/checks/${id}`, { activated: false });
  });
});

describe('paging, ordering and filters', () => {
  // 25 runs one minute apart: every 3rd FAILED, odd ones in eu-west-1 (by startedAt), plus ATTEMPTs.
  const times = Array.from({ length: 25 }, (_, i) => T0 + i * 60_000);
  beforeAll(async () => {
    for (const [i, t] of times.entries()) {
      await runAt(
        checks.paged!,
        t,
        { runLocation: i % 2 === 1 ? 'eu-west-1' : 'us-east-1', icmpCheckResult: icmpPart },
        i % 3 === 0 ? 'FAILED' : 'PASSED',
      );
    }
    // Stored run locations come from the job, so set the odd ones' location in the store directly.
    const rows = await svc.context.db
      .selectFrom('check_results')
      .select(['id', 'started_at'])
      .where('check_id', '=', checks.paged!)
      .execute();
    for (const row of rows) {
      const i = times.indexOf(Number(row.started_at));
      await svc.context.db
        .updateTable('check_results')
        .set({
          run_location: i % 2 === 1 ? 'eu-west-1' : 'us-east-1',
          result_type: i >= 20 ? 'ATTEMPT' : 'FINAL',
        })
        .where('id', '=', row.id)
        .execute();
    }
  });
  const startedOf = (items: { startedAt: string }[]) => items.map((r) => Date.parse(r.startedAt));
  const finals = times.filter((_, i) => i < 20);

  it('defaults: FINAL only, 10 newest first', async () => {
    const res = await list(checks.paged!);
    expect(res.statusCode).toBe(200);
    expect(startedOf(res.json())).toEqual(finals.slice(-10).reverse());
  });

  it('pages with limit and page, without overlap, to an empty page', async () => {
    const pages = [];
    for (let page = 1; page <= 3; page++) {
      pages.push(startedOf((await list(checks.paged!, `?limit=7&page=${page}`)).json()));
    }
    expect(pages.map((p) => p.length)).toEqual([7, 7, 6]);
    expect(pages.flat()).toEqual([...finals].reverse());
    expect((await list(checks.paged!, '?limit=7&page=4')).json()).toEqual([]);
    expect((await list(checks.paged!, '?limit=100')).json()).toHaveLength(20);
  });

  it('resultType ATTEMPT and ALL', async () => {
    expect(startedOf((await list(checks.paged!, '?resultType=ATTEMPT')).json())).toEqual(
      times.slice(20).reverse(),
    );
    const all = (await list(checks.paged!, '?resultType=ALL&limit=100')).json();
    expect(startedOf(all)).toEqual([...times].reverse());
    expect(new Set(all.map((r: { resultType: string }) => r.resultType))).toEqual(
      new Set(['FINAL', 'ATTEMPT']),
    );
  });

  it('hasFailures true and false', async () => {
    const failed = (await list(checks.paged!, '?hasFailures=true&resultType=ALL&limit=100')).json();
    expect(startedOf(failed)).toEqual(times.filter((_, i) => i % 3 === 0).reverse());
    expect(failed.every((r: { hasFailures: boolean }) => r.hasFailures)).toBe(true);
    const passed = (await list(checks.paged!, '?hasFailures=false&resultType=ALL&limit=100')).json();
    expect(startedOf(passed)).toEqual(times.filter((_, i) => i % 3 !== 0).reverse());
  });

  it('location', async () => {
    const eu = (await list(checks.paged!, '?location=eu-west-1&resultType=ALL&limit=100')).json();
    expect(startedOf(eu)).toEqual(times.filter((_, i) => i % 2 === 1).reverse());
    expect(eu.every((r: { runLocation: string }) => r.runLocation === 'eu-west-1')).toBe(true);
    expect((await list(checks.paged!, '?location=nowhere')).json()).toEqual([]);
  });

  it('from (inclusive) and to (exclusive), as unix seconds or ISO dates, combined with other filters', async () => {
    const from = times[5]!;
    const to = times[12]!;
    const bySeconds = (await list(checks.paged!, `?from=${from / 1000}&to=${to / 1000}&limit=100`)).json();
    expect(startedOf(bySeconds)).toEqual(times.slice(5, 12).reverse());
    const byIso = (
      await list(
        checks.paged!,
        `?from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}&limit=100`,
      )
    ).json();
    expect(startedOf(byIso)).toEqual(times.slice(5, 12).reverse());
    const combined = (
      await list(checks.paged!, `?from=${from / 1000}&to=${to / 1000}&hasFailures=true&location=us-east-1`)
    ).json();
    expect(startedOf(combined)).toEqual([times[6]!]);
    expect((await list(checks.paged!, `?to=${times[0]! / 1000}`)).json()).toEqual([]);
  });

  // SQLite's plans (EXPLAIN QUERY PLAN); PostgreSQL's planner picks by its statistics.
  it.runIf(TEST_DATABASE === 'sqlite')(
    'lists from an index, without a table scan or a sort, for every filter combination',
    async () => {
      const queries = [
        '',
        '?resultType=ALL',
        '?resultType=ATTEMPT&hasFailures=true',
        '?location=eu-west-1&from=1700000000&to=1800000000',
        '?page=3&limit=100',
      ];
      const executor = svc.context.db.getExecutor();
      const execute = executor.executeQuery.bind(executor);
      for (const query of queries) {
        // The statement the real route runs, captured on its way to SQLite, then asked for its plan.
        const seen: CompiledQuery[] = [];
        executor.executeQuery = ((compiled: CompiledQuery) => {
          if (compiled.sql.includes('from "check_results"')) seen.push(compiled);
          return execute(compiled);
        }) as typeof executor.executeQuery;
        try {
          expect((await list(checks.paged!, query)).statusCode).toBe(200);
        } finally {
          executor.executeQuery = execute;
        }
        expect(seen).toHaveLength(1);
        const plan = await svc.context.db.executeQuery<{ detail: string }>(
          CompiledQuery.raw(`EXPLAIN QUERY PLAN ${seen[0]!.sql}`, [...seen[0]!.parameters]),
        );
        const detail = plan.rows.map((r) => r.detail).join('\n');
        expect(detail, query).toMatch(/USING (COVERING )?INDEX check_results_/);
        // Rows come in startedAt order from the index; only ties on startedAt are sorted by id
        // ("TEMP B-TREE FOR LAST TERM OF ORDER BY"), never the whole match.
        expect(detail, query).not.toMatch(/SCAN check_results|TEMP B-TREE FOR ORDER BY/);
      }
    },
  );
});

describe('errors', () => {
  it('400 naming the field for bad queries', async () => {
    expectBadField(await list(checks.paged!, '?limit=0'), 'limit', 'querystring');
    expectBadField(await list(checks.paged!, '?limit=101'), 'limit', 'querystring');
    expectBadField(await list(checks.paged!, '?page=0'), 'page', 'querystring');
    expectBadField(await list(checks.paged!, '?resultType=SOME'), 'resultType', 'querystring');
    expectBadField(await list(checks.paged!, '?hasFailures=maybe'), 'hasFailures', 'querystring');
    expectBadField(await list(checks.paged!, '?from=yesterday'), 'from', 'querystring');
    expectBadField(await list(checks.paged!, '?to=2026-13-45'), 'to', 'querystring');
    expectBadField(await list(checks.paged!, '?from=1700000100&to=1700000000'), 'from', 'querystring');
    expectBadField(await list(checks.paged!, '?unknown=1'), 'unknown', 'querystring');
  });

  it('404 for another account’s check and result, and for unknown ids', async () => {
    const [item] = (await list(checks.icmp!)).json();
    const other = await list(checks.icmp!, '', 'B');
    expect(other.statusCode).toBe(404);
    expect(other.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
    expect(other.body).not.toContain('ping');
    const otherOne = await svc.request('GET', `/v1/check-results/${checks.icmp}/${item.id}`, undefined, 'B');
    expect(otherOne.statusCode).toBe(404);
    expect((await list('00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    const wrongCheck = await svc.request('GET', `/v1/check-results/${checks.dns}/${item.id}`);
    expect(wrongCheck.statusCode).toBe(404);
    expect((await svc.request('GET', `/v1/check-results/${checks.icmp}/nope`)).statusCode).toBe(404);
  });
});

describe('artifacts', () => {
  it('are listed with their download path, which the artifact route serves', async () => {
    await triggerCheck(svc, checks.url!);
    const [job] = (await claimJobs(svc, agentId)).filter((j) => j.check.id === checks.url);
    const bytes = Buffer.from('{"hops":[]}');
    const put = await svc.app.inject({
      method: 'PUT',
      url: `/v1/agent/jobs/${job!.jobId}/artifacts/route-trace.json`,
      headers: {
        ...svc.auth(),
        'x-agent-id': agentId,
        'content-type': 'application/octet-stream',
        'content-length': String(bytes.length),
      },
      payload: bytes,
    });
    expect(put.statusCode, put.body).toBe(201);
    const posted = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job!.jobId}/result`,
      headers: { ...svc.auth(), 'x-agent-id': agentId },
      payload: resultFor(job!, 'FAILED', {
        startedAt: new Date(T0 + 3_600_000).toISOString(),
        artifacts: [{ name: 'route-trace.json', sizeBytes: bytes.length }],
      }),
    });
    expect(posted.statusCode, posted.body).toBe(200);
    const [item] = (await list(checks.url!)).json();
    expect(item.artifacts).toEqual([
      {
        name: 'route-trace.json',
        sizeBytes: bytes.length,
        downloadPath: `/v1/check-results/${checks.url}/${item.id}/artifacts/route-trace.json`,
      },
    ]);
    const download = await svc.request('GET', item.artifacts[0].downloadPath);
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.equals(bytes)).toBe(true);
  });
});
