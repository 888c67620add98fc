import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/protocol/index.js';
import { parseSecretKey } from '../../src/service/platform/store/secret-box.js';
import { claimOverHttp, apiClient, type CliProcess, freePort, spawnCli, stopCli } from '../helpers/cli.js';
import {
  createDatabase,
  POSTGRES_REQUIREMENT,
  type PostgresCluster,
  startPostgresCluster,
} from '../helpers/postgres.js';
import { missingRequirement } from '../helpers/requirements.js';
import { resultFor } from '../helpers/service.js';

/**
 * `outpost migrate-store`: a service that started small on SQLite moves to PostgreSQL with its checks, group,
 * secret variable, alert channel, results and queued jobs. The copy is refused while the service runs, rolled
 * back when the key does not open the secrets, refused into a database that holds an account; once done, a
 * service on PostgreSQL (with the key the command printed) answers everything as before, hands the sealed
 * secrets to an agent in clear, and gives new rows new ids.
 */
const missing = missingRequirement([POSTGRES_REQUIREMENT]);

const API_KEY = `op_${randomBytes(20).toString('hex')}`;
/** A password in the target URL (the test cluster trusts loopback, so any password connects): never printed. */
const DB_PASSWORD = `pw${randomBytes(8).toString('hex')}`;
const BASIC_PASSWORD = `basic-${randomUUID()}`;
const VARIABLE_VALUE = `variable-${randomUUID()}`;
const GROUP_PASSWORD = `group-${randomUUID()}`;
const WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
/** The bytes of the ICMP run's artifact (a route trace an agent uploaded), moved with the store. */
const ARTIFACT_BYTES = randomBytes(4096);
/** Webhooks to loopback are refused unless allowed: the channel points at a port nobody listens on. */
const OUTBOUND = { OUTPOST_OUTBOUND_ALLOW: '127.0.0.1/32' };

/** A check group's `apiCheckDefaults`, with a basic-auth password (sealed at rest) unless empty. */
function groupDefaults(password: string) {
  return {
    url: '',
    headers: [],
    queryParameters: [],
    assertions: [],
    basicAuth: { username: password === '' ? '' : 'g', password },
  };
}

/** `outpost service` on `env`, on a free port; resolves once it listens. */
async function startService(
  env: Record<string, string>,
): Promise<{ process: CliProcess; url: string; api: ReturnType<typeof apiClient> }> {
  const port = await freePort();
  const process = spawnCli(['service'], { PORT: String(port), ...OUTBOUND, ...env });
  await process.waitFor(/service is listening/);
  const url = `http://127.0.0.1:${port}`;
  return { process, url, api: apiClient(url, API_KEY) };
}

/** `POST /v1/agent/jobs/claim` with the account key, as a data-center agent: the jobs handed out. */
function claim(url: string, checkTypes: string[], agentId = randomUUID()): Promise<Job[]> {
  return claimOverHttp(url, API_KEY, {
    agentId,
    checkTypes,
    freeSlots: { uptime: 5, main: 5 },
    waitSeconds: 5,
  });
}

/** Runs `outpost migrate-store` with `args` and `env`; resolves with its exit code and output. */
async function migrateStore(args: string[], env: Record<string, string> = {}) {
  const run = spawnCli(['migrate-store', ...args], env);
  const code = await run.exited;
  return { code, output: run.output() };
}

describe('outpost migrate-store: arguments', () => {
  it('exits 2 with a clear message on a missing or bad argument, before touching anything', async () => {
    const none = await migrateStore([]);
    expect(none.code).toBe(2);
    expect(none.output).toContain('--from sqlite:<data dir> is required');
    const notSqlite = await migrateStore(['--from', '/tmp/x', '--to', 'postgres://h/db']);
    expect(notSqlite.code).toBe(2);
    expect(notSqlite.output).toContain('--from must be sqlite:<data dir>');
    const notPostgres = await migrateStore(['--from', 'sqlite:/tmp/x', '--to', 'mysql://u:hidden@h/db']);
    expect(notPostgres.code).toBe(2);
    expect(notPostgres.output).toContain('--to must be a postgres:// or postgresql:// URL');
    expect(notPostgres.output).not.toContain('hidden');
    const unknown = await migrateStore(['--from=sqlite:/tmp/x', '--to=postgres://h/db', '--force']);
    expect(unknown.code).toBe(2);
    expect(unknown.output).toContain('unknown option "--force"');
    const help = await migrateStore(['--help']);
    expect(help.code).toBe(0);
    expect(help.output).toMatch(/Stop the service on the SQLite store first/);
  });
});

describe.skipIf(missing !== null)('outpost migrate-store: SQLite to PostgreSQL', () => {
  let cluster: PostgresCluster;
  let target: string;
  let client: pg.Client;
  const dataDir = mkdtempSync(join(tmpdir(), 'outpost-move-sqlite-'));
  const pgDataDir = mkdtempSync(join(tmpdir(), 'outpost-move-pg-'));
  let source: Awaited<ReturnType<typeof startService>> | undefined;
  let moved: Awaited<ReturnType<typeof startService>> | undefined;
  const ids = { icmp: '', api: '', group: 0, deletedGroup: 0, channel: 0, result: '' };

  beforeAll(async () => {
    cluster = await startPostgresCluster();
    const url = new URL(await createDatabase(cluster.url()));
    url.password = DB_PASSWORD;
    target = url.toString();
    client = new pg.Client({ connectionString: target });
    await client.connect();
  });

  afterAll(async () => {
    await stopCli(source?.process);
    await stopCli(moved?.process);
    await client?.end().catch(() => {});
    await cluster?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(pgDataDir, { recursive: true, force: true });
  });

  /** Rows of `table` in the target; 0 while the target has no such table (not migrated yet). */
  async function count(table: string): Promise<number> {
    const exists = await client.query('select to_regclass($1) as t', [table]);
    if (exists.rows[0].t === null) return 0;
    const { rows } = await client.query<{ n: number }>(`select count(*)::int as n from ${table}`);
    return rows[0]!.n;
  }

  it('a service on SQLite gets a check, a group, a secret variable, a channel, a result and a queued job', async () => {
    source = await startService({ OUTPOST_DATA_DIR: dataDir, OUTPOST_API_KEY: API_KEY });
    const { api, url } = source;
    const group = await api('POST', '/v1/check-groups', {
      name: 'Moved group',
      activated: false,
      apiCheckDefaults: groupDefaults(GROUP_PASSWORD),
    });
    expect(group.status, JSON.stringify(group.json)).toBe(201);
    ids.group = group.json.id as number;
    // The newest id of a table, deleted: SQLite's autoincrement never gives it again, nor may PostgreSQL.
    const deleted = await api('POST', '/v1/check-groups', {
      name: 'Deleted group',
      activated: false,
      apiCheckDefaults: groupDefaults(''),
    });
    expect(deleted.status, JSON.stringify(deleted.json)).toBe(201);
    ids.deletedGroup = deleted.json.id as number;
    expect((await api('DELETE', `/v1/check-groups/${ids.deletedGroup}`)).status).toBeLessThan(300);
    const variable = await api('POST', '/v1/variables', {
      key: 'MOVED_SECRET',
      value: VARIABLE_VALUE,
      secret: true,
    });
    expect(variable.status, JSON.stringify(variable.json)).toBe(201);
    const channel = await api('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: {
        name: 'moved hook',
        url: 'http://127.0.0.1:9/hook',
        method: 'POST',
        webhookSecret: WEBHOOK_SECRET,
      },
    });
    expect(channel.status, JSON.stringify(channel.json)).toBe(201);
    ids.channel = channel.json.id as number;
    const icmp = await api('POST', '/v1/checks/icmp', {
      name: 'Moved ping',
      activated: false,
      request: { hostname: '127.0.0.1' },
      groupId: ids.group,
    });
    expect(icmp.status, JSON.stringify(icmp.json)).toBe(201);
    ids.icmp = icmp.json.id as string;
    const apiCheck = await api('POST', '/v1/checks/api', {
      name: 'Moved API',
      activated: false,
      request: {
        method: 'GET',
        url: 'https://moved.test/',
        basicAuth: { username: 'u', password: BASIC_PASSWORD },
      },
    });
    expect(apiCheck.status, JSON.stringify(apiCheck.json)).toBe(201);
    ids.api = apiCheck.json.id as string;

    // A result of the ICMP check, posted by an agent holding the account key.
    const ran = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [ids.icmp] } });
    expect(ran.status, JSON.stringify(ran.json)).toBeLessThan(300);
    const agentId = randomUUID();
    const [job] = await claim(url, ['ICMP'], agentId);
    expect(job).toBeDefined();
    // An artifact of the run: a file under the data directory, moved into the database's artifact rows.
    const uploaded = await fetch(new URL(`/v1/agent/jobs/${job!.jobId}/artifacts/route-trace.json`, url), {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${API_KEY}`,
        'x-agent-id': agentId,
        'content-type': 'application/octet-stream',
      },
      body: ARTIFACT_BYTES,
    });
    expect(uploaded.status, await uploaded.text()).toBe(201);
    const posted = await fetch(new URL(`/v1/agent/jobs/${job!.jobId}/result`, url), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${API_KEY}`,
        'x-agent-id': agentId,
        'content-type': 'application/json',
      },
      body: JSON.stringify(
        resultFor(job!, 'PASSED', {
          artifacts: [{ name: 'route-trace.json', sizeBytes: ARTIFACT_BYTES.length }],
        }),
      ),
    });
    expect(posted.status, await posted.text()).toBeLessThan(300);
    const results = await api('GET', `/v1/check-results/${ids.icmp}`);
    expect(results.json).toHaveLength(1);
    ids.result = results.json[0].id as string;

    // A run of the API check left queued: its job payload (sealed) moves with the store.
    const queued = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [ids.api] } });
    expect(queued.status, JSON.stringify(queued.json)).toBeLessThan(300);
  });

  it('refuses to copy while the service runs on the store (exit 1), and copies nothing', async () => {
    const run = await migrateStore(['--from', `sqlite:${dataDir}`, '--to', target]);
    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(/is in use by another process: stop `outpost service`/);
    expect(run.output).not.toContain(DB_PASSWORD);
    expect(await count('accounts')).toBe(0);
    await stopCli(source?.process);
    expect(await source!.process.exited).toBe(0);
  });

  it('rolls the whole copy back when OUTPOST_ENCRYPTION_KEY does not open the sealed secrets (exit 1)', async () => {
    const wrongKey = randomBytes(32).toString('base64');
    const run = await migrateStore(['--from', `sqlite:${dataDir}`, '--to', target], {
      OUTPOST_ENCRYPTION_KEY: wrongKey,
    });
    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(/stored secret .* cannot be opened with the key from OUTPOST_ENCRYPTION_KEY/);
    expect(run.output).not.toContain(DB_PASSWORD);
    for (const table of ['accounts', 'api_keys', 'checks', 'check_results', 'variables']) {
      expect(await count(table), table).toBe(0);
    }
  });

  let printedKey = '';
  it('copies every table into the empty database (exit 0), one line per table with rows, and prints the key to set', async () => {
    const run = await migrateStore(['--from', `sqlite:${dataDir}`, '--to', target]);
    expect(run.code, run.output).toBe(0);
    expect(run.output).not.toContain(DB_PASSWORD);
    expect(run.output).toContain(`:***@127.0.0.1:${cluster.port}/`);
    for (const line of ['accounts: 1 row', 'checks: 2 rows', 'check_groups: 1 row', 'variables: 1 row']) {
      expect(run.output).toContain(`  ${line}\n`);
    }
    expect(run.output).toMatch(/^ {2}check_results: 1 row$/m);
    expect(run.output).toMatch(/^ {2}alert_channels: 1 row$/m);
    // The ICMP job ended with its result; the API run is still queued.
    expect(run.output).toMatch(/^ {2}jobs: 1 row$/m);
    expect(run.output).not.toMatch(/kysely_migration/);
    // Empty tables are counted, not listed.
    expect(run.output).not.toMatch(/: 0 rows$/m);
    expect(run.output).toMatch(/copied \d+ rows in \d+ tables \([1-9]\d* of them empty\)/);
    expect(run.output).toMatch(
      /row counts match, \d+ id sequences moved, [1-9]\d* sealed secrets open with the key.*; planner statistics gathered$/m,
    );
    // ANALYZE ran after the copy: the planner knows the copied rows before autovacuum comes by.
    const analyzed = await client.query<{ relname: string }>(
      "select relname from pg_stat_user_tables where relname in ('checks', 'accounts') and last_analyze is not null order by relname",
    );
    expect(analyzed.rows.map((r) => r.relname)).toEqual(['accounts', 'checks']);
    expect(run.output).toMatch(/store it as a secret/);
    const keyLine = run.output.split('\n').find((l) => l.startsWith('OUTPOST_ENCRYPTION_KEY='));
    expect(keyLine).toBeDefined();
    printedKey = keyLine!.slice('OUTPOST_ENCRYPTION_KEY='.length);
    const fileKey = parseSecretKey(readFileSync(join(dataDir, 'encryption.key'), 'utf8'));
    expect(Buffer.from(printedKey, 'base64').equals(fileKey!)).toBe(true);
    expect(await count('accounts')).toBe(1);
    expect(await count('check_results')).toBe(1);
    // The artifact file went into the database's artifact rows (the PostgreSQL service's default store).
    expect(run.output).toMatch(/^ {2}artifacts: 1 file \(0\.0 MiB\) into the database$/m);
    expect(await count('artifacts')).toBe(1);
  });

  it('a service on PostgreSQL with the printed key answers everything as before', async () => {
    moved = await startService({
      OUTPOST_DATABASE_URL: target,
      OUTPOST_ENCRYPTION_KEY: printedKey,
      OUTPOST_DATA_DIR: pgDataDir,
    });
    // Start-up opened every sealed secret (else it would have stopped with OUTPOST_ERR_ENCRYPTION_KEY).
    expect(moved.process.output()).not.toMatch(/ENCRYPTION_KEY|cannot be opened/);
    const { api, url } = moved;
    // The API key is the one of the SQLite store (no OUTPOST_API_KEY was given).
    const icmp = await api('GET', `/v1/checks/${ids.icmp}`);
    expect(icmp.status, JSON.stringify(icmp.json)).toBe(200);
    expect(icmp.json.name).toBe('Moved ping');
    expect(icmp.json.groupId).toBe(ids.group);
    const group = await api('GET', `/v1/check-groups/${ids.group}`);
    expect(group.status).toBe(200);
    expect(group.json.name).toBe('Moved group');
    expect(group.json.apiCheckDefaults.basicAuth.password).toBe('*****');
    const variable = await api('GET', '/v1/variables/MOVED_SECRET');
    expect(variable.status).toBe(200);
    expect(variable.json.secret).toBe(true);
    expect(variable.json.value).not.toBe(VARIABLE_VALUE);
    const channel = await api('GET', `/v1/alert-channels/${ids.channel}`);
    expect(channel.status).toBe(200);
    expect(channel.json.config.name).toBe('moved hook');
    expect(channel.json.config.webhookSecret).toBe('*****');
    const results = await api('GET', `/v1/check-results/${ids.icmp}`);
    expect(results.status).toBe(200);
    expect(results.json.map((r: { id: string }) => r.id)).toEqual([ids.result]);
    const result = await api('GET', `/v1/check-results/${ids.icmp}/${ids.result}`);
    expect(result.status).toBe(200);
    expect(result.json.responseTime).toBe(1.5);
    // Its artifact downloads from the database, though this service's data directory holds no file.
    const artifact = await fetch(
      new URL(`/v1/check-results/${ids.icmp}/${ids.result}/artifacts/route-trace.json`, url),
      {
        headers: { authorization: `Bearer ${API_KEY}` },
      },
    );
    expect(artifact.status).toBe(200);
    expect(Buffer.from(await artifact.arrayBuffer()).equals(ARTIFACT_BYTES)).toBe(true);

    // The run queued on SQLite is handed out by PostgreSQL: its sealed payload opens, the secrets in clear.
    const [job] = await claim(url, ['API']);
    expect(job?.check.id).toBe(ids.api);
    expect((job!.check.request as { basicAuth: { password: string } }).basicAuth.password).toBe(
      BASIC_PASSWORD,
    );
    expect(job!.environmentVariables.find((v) => v.key === 'MOVED_SECRET')?.value).toBe(VARIABLE_VALUE);
    // A run started now seals a new payload with the same key and opens the check's sealed password.
    const again = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [ids.api] } });
    expect(again.status, JSON.stringify(again.json)).toBeLessThan(300);
    const [fresh] = await claim(url, ['API']);
    expect((fresh!.check.request as { basicAuth: { password: string } }).basicAuth.password).toBe(
      BASIC_PASSWORD,
    );
  });

  it('new rows on PostgreSQL get new ids: the identity sequences moved past the copied ones', async () => {
    const { api } = moved!;
    const group = await api('POST', '/v1/check-groups', {
      name: 'New on PostgreSQL',
      activated: false,
      apiCheckDefaults: groupDefaults(''),
    });
    expect(group.status, JSON.stringify(group.json)).toBe(201);
    expect(group.json.id).toBeGreaterThan(ids.deletedGroup);
    const channel = await api('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: { name: 'new hook', url: 'http://127.0.0.1:9/new', method: 'POST' },
    });
    expect(channel.status, JSON.stringify(channel.json)).toBe(201);
    expect(channel.json.id).toBeGreaterThan(ids.channel);
    const check = await api('POST', '/v1/checks/icmp', {
      name: 'New ping',
      activated: false,
      request: { hostname: '127.0.0.1' },
      groupId: group.json.id,
    });
    expect(check.status, JSON.stringify(check.json)).toBe(201);
    expect((await api('GET', `/v1/check-groups/${ids.group}`)).json.name).toBe('Moved group');
    expect(((await api('GET', '/v1/checks')).json as unknown[]).length).toBe(3);
  });

  it('a second copy into the now non-empty database exits 1 and changes nothing', async () => {
    const tables = ['accounts', 'checks', 'check_results', 'check_groups', 'alert_channels'];
    const before: number[] = [];
    for (const table of tables) before.push(await count(table));
    const run = await migrateStore(['--from', `sqlite:${dataDir}`, '--to', target]);
    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(/already holds an account/);
    expect(run.output).not.toContain(DB_PASSWORD);
    const after: number[] = [];
    for (const table of tables) after.push(await count(table));
    expect(after).toEqual(before);
  });
});
