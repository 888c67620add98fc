import { createHmac, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CheckResult, type Job, PROTOCOL_VERSION } from '../../../src/protocol/index.js';
import { build, type Service } from '../../../src/service/app.js';
import { createAccount, createApiKey } from '../../../src/service/platform/http/auth.js';
import { openSqliteDatabase } from '../../../src/service/platform/store/database.js';
import { type HttpPeer, startHttpPeer } from '../../helpers/alert-peers.js';
import { expectNoSecret } from '../../helpers/secrets.js';
import { resultFor } from '../../helpers/service.js';

/**
 * Secrets handled by alerting — a webhook's signing secret and credential header, a PagerDuty
 * routing key, and a secret account variable a template puts in the body — reach the
 * providers and nothing else: not the store (any table), the logs, the API's answers, or the
 * attempts log, even when a provider echoes everything it got back in its answer (whose body is not
 * kept at all: an attempt holds the status only).
 */
const SECRETS = {
  variable: `var-Secret-${randomUUID()}`,
  signing: `whsec_${Buffer.from(`sign-${randomUUID()}`).toString('base64')}`,
  header: `hdr-Secret-${randomUUID()}`,
  routingKey: `pdkey${randomUUID().replaceAll('-', '')}`,
};

let service: Service;
let key: string;
let peer: HttpPeer;
let logs = '';
let dir: string;
const agentId = randomUUID();

const echo = (r: { headers: object; body: string; url: string }) => JSON.stringify(r);

beforeAll(async () => {
  // The first request answered 500 (one attempt to retry), every answer echoing the request in full.
  let first = true;
  peer = await startHttpPeer((request) => {
    const answer = { status: first ? 500 : 202, body: echo(request) };
    first = false;
    return answer;
  });
  dir = await mkdtemp(join(tmpdir(), 'outpost-alert-secrets-'));
  const db = await openSqliteDatabase(join(dir, 'outpost.db'));
  const account = await createAccount(db, 'A');
  key = await createApiKey(db, account);
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs += chunk.toString();
      done();
    },
  });
  service = await build({
    db,
    log: pino({ level: 'trace' }, sink),
    artifactsDir: join(dir, 'artifacts'),
    alerting: {
      providers: {
        pagerdutyUrl: peer.origin,
        opsgenieUrl: { US: peer.origin, EU: peer.origin },
      },
      delivery: { baseDelayMs: 20, maxDelayMs: 50, pollMs: 50 },
    },
    // The peer listens on loopback: the webhook's URL must be allowed.
    outbound: { allow: ['127.0.0.1/32'] },
  });
  const close = service.close;
  service.close = async () => {
    await close();
    await db.destroy();
  };
});

afterAll(async () => {
  await service?.close();
  await peer?.close();
  await rm(dir, { recursive: true, force: true });
});

async function api(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) {
  const res = await service.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${key}`, 'x-agent-id': agentId },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res;
}

async function until<T>(what: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const got = await what();
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('secrets in alerting', () => {
  it('reach the providers and appear nowhere else: store, logs, API answers, attempts', async () => {
    await api('POST', '/v1/variables', { key: 'API_TOKEN', value: SECRETS.variable, secret: true });
    await api('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: {
        name: 'hook',
        url: `${peer.origin}/hook`,
        headers: [{ key: 'Authorization', value: `Bearer ${SECRETS.header}` }],
        template: '{"token":"{{API_TOKEN}}","title":"{{ALERT_TITLE}}"}',
        webhookSecret: SECRETS.signing,
      },
    });
    await api('POST', '/v1/alert-channels', {
      type: 'PAGERDUTY',
      config: { serviceKey: SECRETS.routingKey },
    });
    const check = (
      await api('POST', '/v1/checks/url', {
        name: 'shop',
        activated: false,
        request: { url: 'https://shop.example.test/', assertions: [] },
      })
    ).json();
    await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.id] } });
    const claim = await api('POST', '/v1/agent/jobs/claim', {
      agentVersion: '0.0.0-test',
      protocolVersion: PROTOCOL_VERSION,
      checkTypes: ['URL'],
      runtimes: [],
      freeSlots: { uptime: 1, main: 1 },
      waitSeconds: 0,
    });
    const [job] = claim.json().jobs as Job[];
    const result: CheckResult = resultFor(job!, 'FAILED', { errorMessage: 'status 503' });
    await api('POST', `/v1/agent/jobs/${job!.jobId}/result`, result);

    // Both notifications delivered, one of them on its second attempt.
    const notifications = await until(async () => {
      const list = (await api('GET', '/v1/alert-notifications')).json() as { state: string }[];
      return list.length === 2 && list.every((n) => n.state === 'DELIVERED') ? list : undefined;
    });
    expect(notifications).toHaveLength(2);

    // Positive control: the secrets were in play and reached their providers.
    const hook = peer.requests.find((r) => r.url === '/hook')!;
    expect(hook.body).toContain(SECRETS.variable);
    expect(hook.headers.authorization).toBe(`Bearer ${SECRETS.header}`);
    const signed = `${hook.headers['webhook-id']}.${hook.headers['webhook-timestamp']}.${hook.body}`;
    const keyBytes = Buffer.from(SECRETS.signing.slice('whsec_'.length), 'base64');
    expect(hook.headers['webhook-signature']).toBe(
      `v1,${createHmac('sha256', keyBytes).update(signed).digest('base64')}`,
    );
    expect(peer.requests.some((r) => r.body.includes(SECRETS.routingKey))).toBe(true);

    // Every table of the store, whole.
    const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(
      service.context.db,
    );
    let store = '';
    for (const { name } of tables.rows) {
      const rows = await sql`select * from ${sql.table(name)}`.execute(service.context.db);
      store += JSON.stringify(rows.rows);
    }
    expect(store).toContain('ALERT_FAILURE');
    // Every answer a user can read.
    const answers = [
      (await api('GET', '/v1/alert-notifications')).body,
      (await api('GET', '/v1/check-alerts')).body,
      (await api('GET', '/v1/alert-channels')).body,
      (await api('GET', `/v1/check-results/${check.id}`)).body,
    ].join('\n');
    expect(answers).toContain('"attempts"');
    // The echoed answers were not kept: each attempt holds the status of its answer only.
    const attempts = await service.context.db.selectFrom('alert_attempts').select('answer').execute();
    expect(attempts.map((a) => a.answer).sort()).toEqual([
      'HTTP 202 Accepted',
      'HTTP 202 Accepted',
      'HTTP 500 Internal Server Error',
    ]);
    for (const secret of Object.values(SECRETS)) {
      expectNoSecret(store, secret);
      expectNoSecret(logs, secret);
      expectNoSecret(answers, secret);
    }
  }, 30_000);
});
