import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import type { Kysely } from 'kysely';
import { expect, inject } from 'vitest';
import { type CheckResult, type Job, PROTOCOL_VERSION } from '../../src/protocol/index.js';
import { type BuildOptions, build, type Service } from '../../src/service/app.js';
import { createAccount, createApiKey } from '../../src/service/platform/http/auth.js';
import { type Database, openSqliteDatabase } from '../../src/service/platform/store/database.js';
import { openPostgresDatabase } from '../../src/service/platform/store/postgres.js';
import { type Artifacts, ArtifactStore } from '../../src/service/runs/artifacts/artifacts.js';
import { createDatabase, dropDatabase } from './postgres.js';
import { TEMPLATE_DATABASE } from './postgres-setup.js';

/** A service on an in-memory store with two accounts, for `inject` tests. */
export type TestService = Service & {
  /** The store the service runs on (for a test's own statements: planted faults, audits). */
  db: Kysely<Database>;
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

/** Which store the tests run on: `OUTPOST_TEST_DATABASE=postgres` (the `postgres` test project), else SQLite. */
export const TEST_DATABASE: 'sqlite' | 'postgres' =
  process.env.OUTPOST_TEST_DATABASE === 'postgres' ? 'postgres' : 'sqlite';

/**
 * A new empty, migrated store of the dialect the tests run on (`TEST_DATABASE`): SQLite in memory, or a
 * new database on the run's PostgreSQL cluster copied from the migrated template. `drop` closes and removes it.
 * @throws Error under the postgres project when the run has no cluster (PostgreSQL not installed).
 */
export async function testStore(): Promise<{ db: Kysely<Database>; drop(): Promise<void> }> {
  if (TEST_DATABASE === 'sqlite') {
    const db = await openSqliteDatabase(':memory:');
    return { db, drop: () => db.destroy() };
  }
  const admin = inject('postgresAdminUrl');
  if (!admin) throw new Error('the postgres test project has no cluster: apt-get install postgresql');
  const url = await createDatabase(admin, TEMPLATE_DATABASE);
  const db = await openPostgresDatabase(url, { poolSize: 4 });
  return {
    db,
    async drop() {
      await db.destroy();
      await dropDatabase(admin, url);
    },
  };
}

/**
 * Builds a real service (a real store — SQLite in memory, or PostgreSQL under the `postgres` test
 * project — real routes, artifacts in a temp folder removed at close) with two accounts.
 */
export async function testService(
  options: Pick<
    BuildOptions,
    'leaseMs' | 'queueExpiryMs' | 'customDomains' | 'outbound' | 'apiCredentials' | 'artifactStore'
  > & { log?: BuildOptions['log'] } = {},
): Promise<TestService> {
  const store = await testStore();
  const db = store.db;
  const a = await createAccount(db, 'A');
  const b = await createAccount(db, 'B');
  const keyA = await createApiKey(db, a);
  const keyB = await createApiKey(db, b);
  const artifactsDir = await mkdtemp(join(tmpdir(), 'outpost-test-artifacts-'));
  // OUTPOST_TEST_LOG=error shows what a 500 hid.
  const log = options.log ?? pino({ level: process.env.OUTPOST_TEST_LOG ?? 'silent' });
  const service = await build({ db, log, artifactsDir, ...options });
  const close = service.close;
  return {
    ...service,
    close: async () => {
      await close();
      await store.drop();
      await rm(artifactsDir, { recursive: true, force: true });
    },
    db,
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

/** The file store of a service's artifacts (tests that look at the files themselves); throws for the database store. */
export function fileArtifacts(svc: { context: { artifacts: Artifacts } }): ArtifactStore {
  const artifacts = svc.context.artifacts;
  if (!(artifacts instanceof ArtifactStore))
    throw new Error('this service keeps its artifacts in the database');
  return artifacts;
}

/**
 * An upload body of exactly `totalBytes`, streamed as repeats of `block` (never the whole body in memory),
 * and the SHA-256 (hex) of what it sent, read once the body has been consumed.
 */
export function repeatedBody(block: Buffer, totalBytes: number): { body: Readable; sha256(): string } {
  const hash = createHash('sha256');
  let sent = 0;
  const body = Readable.from(
    (function* () {
      while (sent < totalBytes) {
        const part = block.subarray(0, Math.min(block.length, totalBytes - sent));
        sent += part.length;
        hash.update(part);
        yield part;
      }
    })(),
  );
  return { body, sha256: () => hash.digest('hex') };
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

/** A valid API check create body; override fields per test. */
export function apiBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'api', activated: false, request: { url: 'https://api.example.test/health' }, ...overrides };
}

/** Creates a check of `type` (201 expected) and returns its id. */
export async function createCheck(
  svc: TestService,
  type: string,
  body: Record<string, unknown>,
): Promise<string> {
  const res = await svc.request('POST', `/v1/checks/${type}`, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

/** Starts a check session for one check (TRIGGER_API) and returns its id. */
export async function triggerCheck(svc: TestService, checkId: string): Promise<string> {
  const res = await svc.request('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().sessions[0].checkSessionId as string;
}

/**
 * Claims jobs as agent `agentId` through `POST /v1/agent/jobs/claim` (main and uptime
 * slots, every runnable type, no wait unless `over` says so).
 */
export async function claimJobs(
  svc: TestService,
  agentId: string,
  over: Record<string, unknown> = {},
): Promise<Job[]> {
  const res = await svc.app.inject({
    method: 'POST',
    url: '/v1/agent/jobs/claim',
    headers: { ...svc.auth(), 'x-agent-id': agentId },
    payload: {
      agentVersion: '0.0.0-test',
      protocolVersion: PROTOCOL_VERSION,
      checkTypes: ['ICMP', 'DNS', 'TCP', 'URL', 'API'],
      // The runtime API jobs with scripts need; claims hand a job only to an agent holding it.
      runtimes: ['2026.04'],
      freeSlots: { uptime: 10, main: 10 },
      waitSeconds: 0,
      ...over,
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().jobs as Job[];
}

/** A result an agent would post for `job`: PASSED (or `status`), 1.5 ms, FINAL, `extra` on top. */
export function resultFor(
  job: Job,
  status: 'PASSED' | 'FAILED' = 'PASSED',
  extra: Partial<CheckResult> = {},
): CheckResult {
  const now = new Date().toISOString();
  return {
    status,
    hasFailures: status === 'FAILED',
    hasErrors: false,
    isDegraded: false,
    overMaxResponseTime: false,
    responseTime: 1.5,
    startedAt: now,
    stoppedAt: now,
    errorMessage: null,
    assertions: [],
    logs: [],
    runLocation: job.runLocation,
    attempts: job.attempt,
    resultType: 'FINAL',
    artifacts: [],
    ...extra,
  };
}
