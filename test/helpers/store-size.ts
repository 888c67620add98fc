import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Kysely, sql } from 'kysely';
import { pino } from 'pino';
import { expect } from 'vitest';
import type { CheckResult, Job } from '../../src/protocol/index.js';
import { build, type Service } from '../../src/service/app.js';
import { createAccount, createApiKey } from '../../src/service/platform/http/auth.js';
import { type Database, openSqliteDatabase } from '../../src/service/platform/store/database.js';
import { RetentionWorker } from '../../src/service/platform/store/retention.js';
import { retentionTasks } from '../../src/service/modules.js';
import { claimJobs, resultFor } from './service.js';

const AGENT_ID = '00000000-0000-4000-8000-00000000051e';

/** A realistic 2 KiB JSON response body of an API check (an order list), `marker` planted in it. */
export function typicalBody(marker = ''): string {
  const items = Array.from({ length: 12 }, (_, i) => ({
    id: `ord_${(1000 + i).toString(36)}`,
    status: i % 3 === 0 ? 'shipped' : 'pending',
    total: { amount: 1999 + i * 37, currency: 'EUR' },
    updatedAt: `2026-11-2${i % 10}T10:${10 + i}:00Z`,
  }));
  const body = JSON.stringify({ data: items, page: { next: 'cursor_2f9a', size: 12 }, note: marker });
  return body.padEnd(2048, ' ');
}

/**
 * A typical API check's result for `job` as an agent posts it: GET with 4 request headers, a 2 KiB JSON
 * body, 12 response headers, timings, a certificate, 3 assertions and 3 log lines. `marker` is planted in
 * the body, a response header, a request header and a log line.
 */
export function typicalApiResult(
  job: Job,
  status: 'PASSED' | 'FAILED' | 'DEGRADED' = 'PASSED',
  marker = '',
): CheckResult {
  const body = typicalBody(marker);
  const url = 'https://api.example.test/v1/orders?limit=12';
  return resultFor(job, status === 'FAILED' ? 'FAILED' : 'PASSED', {
    status,
    isDegraded: status === 'DEGRADED',
    responseTime: 182.4,
    errorMessage: status === 'FAILED' ? 'assertion failed: status code 503 is not 200' : null,
    assertions: [
      {
        source: 'STATUS_CODE',
        property: '',
        comparison: 'EQUALS',
        target: '200',
        regex: null,
        actual: 200,
        error: null,
      },
      {
        source: 'JSON_BODY',
        property: '$.page.size',
        comparison: 'EQUALS',
        target: '12',
        regex: null,
        actual: '12',
        error: null,
      },
      {
        source: 'RESPONSE_TIME',
        property: '',
        comparison: 'LESS_THAN',
        target: '1000',
        regex: null,
        actual: 182,
        error: null,
      },
    ],
    logs: [
      { time: '2026-11-28T10:00:00.000Z', level: 'INFO', msg: `GET ${url}` },
      { time: '2026-11-28T10:00:00.180Z', level: 'INFO', msg: `200 OK in 182 ms (2048 bytes) ${marker}` },
      { time: '2026-11-28T10:00:00.182Z', level: 'DEBUG', msg: 'assertions: 3 passed' },
    ],
    httpCheckResult: {
      request: {
        method: 'GET',
        url,
        headers: {
          accept: 'application/json',
          'user-agent': 'Outpost/0.1.0',
          authorization: '*****',
          'x-request-id': `req-${marker || 'b1c2d3e4f5a6'}`,
        },
      },
      response: {
        statusCode: 200,
        statusText: 'OK',
        url,
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'content-length': '2048',
          date: 'Sat, 28 Nov 2026 10:00:00 GMT',
          server: 'nginx',
          'cache-control': 'no-store',
          etag: 'W/"800-5f1b2c3d"',
          vary: 'Accept-Encoding, Origin',
          'x-request-id': `req-${marker || 'b1c2d3e4f5a6'}`,
          'x-ratelimit-limit': '1000',
          'x-ratelimit-remaining': '998',
          'strict-transport-security': 'max-age=63072000; includeSubDomains',
          'access-control-allow-origin': '*',
        },
        bodySizeBytes: body.length,
        bodyTruncated: false,
        body,
      },
      timings: { socket: 0.2, lookup: 4.1, connect: 22.3, secureConnect: 61.8, response: 170.2, end: 182.4 },
      timingPhases: {
        wait: 0.2,
        dns: 3.9,
        tcp: 18.2,
        tls: 39.5,
        firstByte: 108.4,
        download: 12.2,
        total: 182.4,
      },
      redirects: [],
      certificate: {
        subject: { commonName: 'api.example.test', organization: null },
        issuer: { commonName: 'R11', organization: "Let's Encrypt" },
        subjectAltNames: ['DNS:api.example.test'],
        validFrom: '2026-10-01T00:00:00.000Z',
        validTo: '2026-12-30T00:00:00.000Z',
        daysRemaining: 32,
        fingerprint256:
          'AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89',
        serialNumber: '04A1B2C3D4E5F60718293A4B5C6D7E8F',
        authorized: true,
        authorizationError: null,
      },
      resolvedIp: '192.0.2.10',
      connection: { protocol: 'tcp', family: 4, remoteAddress: '192.0.2.10', remotePort: 443 },
      resolver: 'dns',
      errorCode: null,
    },
  });
}

/** A real service on a SQLite file store in a temp folder, one account, one API check. */
export type FileStoreService = Service & {
  db: Kysely<Database>;
  file: string;
  checkId: string;
  headers: Record<string, string>;
  close(): Promise<void>;
};

/** Builds a {@link FileStoreService}; retention is off (tests run passes with {@link retentionPass}). */
export async function fileStoreService(): Promise<FileStoreService> {
  const dir = await mkdtemp(join(tmpdir(), 'outpost-store-size-'));
  const file = join(dir, 'outpost.db');
  const db = await openSqliteDatabase(file);
  const account = await createAccount(db, 'size');
  const key = await createApiKey(db, account);
  const service = await build({
    db,
    databaseFile: file,
    log: pino({ level: 'silent' }),
    artifactsDir: join(dir, 'artifacts'),
    retention: false,
  });
  const headers = { authorization: `Bearer ${key}` };
  const created = await service.app.inject({
    method: 'POST',
    url: '/v1/checks/api',
    headers,
    payload: {
      name: 'orders API',
      activated: false,
      locations: ['eu-west-1'],
      request: { url: 'https://api.example.test/v1/orders?limit=12' },
    },
  });
  expect(created.statusCode, created.body).toBe(201);
  const close = service.close;
  return {
    ...service,
    db,
    file,
    checkId: created.json().id as string,
    headers,
    close: async () => {
      await close();
      await db.destroy();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Stores one result through the real ingest path: a triggered run, the job claimed and the result posted
 * as an agent does (`POST /v1/agent/jobs/{jobId}/result`). Returns the stored result's id.
 */
export async function storeResult(svc: FileStoreService, make: (job: Job) => CheckResult): Promise<string> {
  const trigger = await svc.app.inject({
    method: 'POST',
    url: '/v1/check-sessions/trigger',
    headers: svc.headers,
    payload: { target: { checkId: [svc.checkId] } },
  });
  expect(trigger.statusCode, trigger.body).toBe(201);
  const [job] = await claimJobs({ ...svc, auth: () => svc.headers } as never, AGENT_ID);
  expect(job, 'a claimed job').toBeDefined();
  const posted = await svc.app.inject({
    method: 'POST',
    url: `/v1/agent/jobs/${job!.jobId}/result`,
    headers: { ...svc.headers, 'x-agent-id': AGENT_ID },
    payload: make(job!),
  });
  expect(posted.statusCode, posted.body).toBe(200);
  const row = await svc.db
    .selectFrom('check_results')
    .select('id')
    .where('job_id', '=', job!.jobId)
    .executeTakeFirstOrThrow();
  return row.id;
}

/** One retention pass of every module at `nowMs`, as the service's worker runs it. */
export function retentionPass(
  svc: FileStoreService,
  nowMs: number,
  options: { passingDetailHours?: number; batchSize?: number } = {},
) {
  return new RetentionWorker(svc.db, retentionTasks({ artifacts: svc.context.artifacts }), {
    resultDays: 90,
    artifactDays: 30,
    agentDays: 30,
    log: pino({ level: 'silent' }),
    ...options,
  }).runOnce(nowMs);
}

/**
 * The store's size on disk after a checkpoint: pages × page size (`fileBytes`), the part in use (`usedBytes`,
 * free pages left out: new rows reuse them), and the size of a copy made with `VACUUM INTO` (`packedBytes`,
 * every page full).
 */
export async function storeBytes(
  db: Kysely<Database>,
  file: string,
): Promise<{ fileBytes: number; usedBytes: number; packedBytes: number }> {
  await sql`pragma wal_checkpoint(TRUNCATE)`.execute(db);
  const one = async (pragma: string) =>
    Number(Object.values((await sql.raw(`pragma ${pragma}`).execute(db)).rows[0] as object)[0]);
  const pageSize = await one('page_size');
  const pages = await one('page_count');
  const free = await one('freelist_count');
  const copy = `${file}.packed`;
  await rm(copy, { force: true });
  await sql`vacuum into ${copy}`.execute(db);
  const packedBytes = (await stat(copy)).size;
  await rm(copy, { force: true });
  return { fileBytes: pages * pageSize, usedBytes: (pages - free) * pageSize, packedBytes };
}

/** Bytes per stored result, before and after the passing runs' details were dropped. */
export type StoreSizeFigures = {
  results: number;
  /** File bytes per result as stored (pages × page size after a checkpoint, less the store before them). */
  storedBytesPerResult: number;
  /** The same, every page full (`VACUUM INTO`). */
  storedPackedBytesPerResult: number;
  /** Bytes in use per result once compacted in place (free pages, which new results reuse, left out). */
  compactedBytesPerResult: number;
  /** The same, every page full (`VACUUM INTO`). */
  compactedPackedBytesPerResult: number;
  /** The stored result document (`check_results.doc`) of one result, before and after, bytes. */
  docBytes: number;
  compactedDocBytes: number;
};

/**
 * Stores `results` typical passing API-check results ({@link typicalApiResult}) through the real ingest
 * path into a file store and measures the store on disk per result, then again after a retention pass
 * past OUTPOST_PASSING_DETAIL_HOURS (default 24 h) dropped their details.
 */
export async function measureStoreSize(results: number): Promise<StoreSizeFigures> {
  const svc = await fileStoreService();
  try {
    // Without this result, the store's own tables and the first run's rows would count as results.
    await storeResult(svc, (job) => typicalApiResult(job));
    const empty = await storeBytes(svc.db, svc.file);
    let lastId = '';
    for (let i = 0; i < results; i++) lastId = await storeResult(svc, (job) => typicalApiResult(job));
    const stored = await storeBytes(svc.db, svc.file);
    const docOf = async () =>
      Buffer.byteLength(
        (
          await svc.db
            .selectFrom('check_results')
            .select('doc')
            .where('id', '=', lastId)
            .executeTakeFirstOrThrow()
        ).doc,
      );
    const docBytes = await docOf();
    await retentionPass(svc, Date.now() + 25 * 3_600_000);
    const compacted = await storeBytes(svc.db, svc.file);
    const per = (after: number, before: number) => Math.round((after - before) / results);
    return {
      results,
      storedBytesPerResult: per(stored.fileBytes, empty.fileBytes),
      storedPackedBytesPerResult: per(stored.packedBytes, empty.packedBytes),
      compactedBytesPerResult: per(compacted.usedBytes, empty.usedBytes),
      compactedPackedBytesPerResult: per(compacted.packedBytes, empty.packedBytes),
      docBytes,
      compactedDocBytes: await docOf(),
    };
  } finally {
    await svc.close();
  }
}
