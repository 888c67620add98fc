import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PROTOCOL_VERSION } from '../../src/protocol/index.js';

/** One webhook a receiver got. */
export type ReceivedWebhook = {
  headers: IncomingHttpHeaders;
  /** The raw body as UTF-8 text. */
  body: string;
  /** When the whole body had arrived, `performance.now()` ms of the receiving process. */
  arrivedAtMs: number;
  /** When the receiver answered it; null while it has not (or the sender hung up first). */
  answeredAtMs: number | null;
};

/** A webhook receiver on 127.0.0.1 that answers each request after a delay. */
export type SlowReceiver = {
  /** `http://127.0.0.1:{port}/hook`. */
  url: string;
  /** Webhooks received so far, in arrival order. */
  readonly received: ReceivedWebhook[];
  /** Closes the server and every connection, answered or not. */
  close(): Promise<void>;
};

/** Most body bytes recorded per request: a webhook body is a few KB; a test must not grow without bound. */
const MAX_RECORDED_BODY_BYTES = 1024 * 1024;

/**
 * Starts a webhook receiver that records every request when its body has arrived, then answers
 * 200 after `delayMs(n)` ms (n = 0-based arrival number), so sends stay in flight that long.
 * The peer of test/helpers/alert-peers.ts answers at once; crash tests need sends caught mid-way.
 */
export async function startSlowReceiver(delayMs: (n: number) => number = () => 0): Promise<SlowReceiver> {
  const received: ReceivedWebhook[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_RECORDED_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => {
      const webhook: ReceivedWebhook = {
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        arrivedAtMs: performance.now(),
        answeredAtMs: null,
      };
      const n = received.length;
      received.push(webhook);
      const answer = () => {
        if (res.destroyed) return;
        webhook.answeredAtMs = performance.now();
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      };
      const wait = delayMs(n);
      if (wait <= 0) {
        answer();
        return;
      }
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer();
      }, wait);
      timers.add(timer);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Whether a webhook's signatures verify against `secret` (docs/alerting.md): `x-checkly-signature`
 * is the hex HMAC-SHA256 of the body, `webhook-signature` is `v1,` + the base64 HMAC-SHA256 of
 * `{webhook-id}.{webhook-timestamp}.{body}` (the secret's UTF-8 bytes as key: not a `whsec_` one).
 * @returns the names of the headers that are missing or do not verify; empty when all verify.
 */
export function signatureProblems(
  webhook: Pick<ReceivedWebhook, 'headers' | 'body'>,
  secret: string,
): string[] {
  const h = webhook.headers;
  const problems: string[] = [];
  const header = (name: string) => (typeof h[name] === 'string' ? (h[name] as string) : undefined);
  const id = header('webhook-id');
  const ts = header('webhook-timestamp');
  const checkly = header('x-checkly-signature');
  const standard = header('webhook-signature');
  if (id === undefined) problems.push('webhook-id');
  if (ts === undefined || !/^\d+$/.test(ts)) problems.push('webhook-timestamp');
  if (header('x-checkly-timestamp') !== ts) problems.push('x-checkly-timestamp');
  const hex = createHmac('sha256', secret).update(webhook.body).digest('hex');
  if (checkly === undefined || !sameText(checkly, hex)) problems.push('x-checkly-signature');
  const b64 = createHmac('sha256', secret).update(`${id}.${ts}.${webhook.body}`).digest('base64');
  // Standard Webhooks allows several space-separated signatures; one must match.
  const offered = (standard ?? '').split(' ').filter((s) => s.startsWith('v1,'));
  if (!offered.some((s) => sameText(s.slice(3), b64))) problems.push('webhook-signature');
  return problems;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Creates a WEBHOOK alert channel sending failures and recoveries to `url`, signed with `secret`.
 * Checks created after it subscribe to it (autoAssignAlerts defaults to true).
 * @returns the channel id.
 * @throws Error when the service does not answer 201.
 */
export async function createWebhookChannel(api: Target, url: string, secret: string): Promise<number> {
  const res = await call(api, 'POST', '/v1/alert-channels', {
    type: 'WEBHOOK',
    sendFailure: true,
    sendRecovery: true,
    config: { name: 'crash receiver', url, webhookSecret: secret },
  });
  if (res.status !== 201)
    throw new Error(`channel create answered ${res.status}: ${JSON.stringify(res.json)}`);
  return res.json.id as number;
}

/**
 * Creates `count` URL checks (not activated: only triggered runs) named `{prefix} {i}`, `parallel`
 * requests at a time.
 * @returns their ids, in creation order.
 * @throws Error when a create does not answer 201.
 */
export async function createUrlChecks(
  api: Target,
  count: number,
  prefix: string,
  parallel = 8,
): Promise<string[]> {
  const ids: string[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const res = await call(api, 'POST', '/v1/checks/url', {
        name: `${prefix} ${i}`,
        activated: false,
        request: { url: `https://shop-${i}.example.test/`, assertions: [] },
      });
      if (res.status !== 201)
        throw new Error(`check create answered ${res.status}: ${JSON.stringify(res.json)}`);
      ids[i] = res.json.id as string;
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
  return ids;
}

/** A job as claimed: what posting its result needs. */
export type ClaimedJob = { jobId: string; checkId: string; runLocation: string; attempt: number };

/** The agent every helper here claims as (x-agent-id). */
export const AGENT_ID = randomUUID();

/**
 * Triggers one run of each check of `checkIds` (one trigger call per 1 000) and claims their jobs
 * as agent AGENT_ID, as an agent would.
 * @returns one job per check, keyed by check id.
 * @throws Error when the service refuses a call or a job does not come within `timeoutMs`.
 */
export async function triggerAndClaim(
  api: Target,
  checkIds: readonly string[],
  timeoutMs = 20_000,
): Promise<Map<string, ClaimedJob>> {
  for (let i = 0; i < checkIds.length; i += 1000) {
    const res = await call(api, 'POST', '/v1/check-sessions/trigger', {
      target: { checkId: checkIds.slice(i, i + 1000) },
    });
    if (res.status !== 201) throw new Error(`trigger answered ${res.status}: ${JSON.stringify(res.json)}`);
  }
  const wanted = new Set(checkIds);
  const jobs = new Map<string, ClaimedJob>();
  const deadline = Date.now() + timeoutMs;
  while (jobs.size < wanted.size) {
    if (Date.now() > deadline)
      throw new Error(`claimed ${jobs.size} of ${wanted.size} jobs within ${timeoutMs} ms`);
    const res = await call(
      api,
      'POST',
      '/v1/agent/jobs/claim',
      {
        agentVersion: '0.0.0-test',
        protocolVersion: PROTOCOL_VERSION,
        checkTypes: ['URL'],
        runtimes: [],
        freeSlots: { uptime: 1000, main: 0 },
        waitSeconds: 1,
      },
      true,
    );
    if (res.status !== 200) throw new Error(`claim answered ${res.status}: ${JSON.stringify(res.json)}`);
    for (const job of res.json.jobs as {
      jobId: string;
      check: { id: string };
      runLocation: string;
      attempt: number;
    }[]) {
      if (wanted.has(job.check.id)) {
        jobs.set(job.check.id, {
          jobId: job.jobId,
          checkId: job.check.id,
          runLocation: job.runLocation,
          attempt: job.attempt,
        });
      }
    }
  }
  return jobs;
}

/** The FINAL result of `job`: FAILED (an assertion-like error message) or PASSED. */
export function finalResult(job: ClaimedJob, status: 'PASSED' | 'FAILED'): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    status,
    hasFailures: status === 'FAILED',
    hasErrors: false,
    isDegraded: false,
    overMaxResponseTime: false,
    responseTime: 12.5,
    startedAt: now,
    stoppedAt: now,
    errorMessage: status === 'FAILED' ? 'expected status 200, got 503' : null,
    assertions: [],
    logs: [],
    runLocation: job.runLocation,
    attempts: job.attempt,
    resultType: 'FINAL',
    artifacts: [],
  };
}

/**
 * Posts the result of `job` as agent AGENT_ID.
 * @throws Error when the service does not answer 200.
 */
export async function postResult(api: Target, job: ClaimedJob, status: 'PASSED' | 'FAILED'): Promise<void> {
  const res = await call(api, 'POST', `/v1/agent/jobs/${job.jobId}/result`, finalResult(job, status), true);
  if (res.status !== 200) throw new Error(`result post answered ${res.status}: ${JSON.stringify(res.json)}`);
}

/** Where a service listens and the API key of its account (authenticates agents too). */
export type Target = { url: string; apiKey: string };

/**
 * One call to the service API with a JSON body; as agent AGENT_ID (x-agent-id) when `agent`.
 * @returns the status and the parsed JSON answer (null when empty).
 */
export async function call(
  target: Target,
  method: string,
  path: string,
  body?: unknown,
  agent = false,
): Promise<{ status: number; json: any }> {
  const res = await fetch(new URL(path, target.url), {
    method,
    headers: {
      authorization: `Bearer ${target.apiKey}`,
      ...(agent ? { 'x-agent-id': AGENT_ID } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

/** A notification as GET /v1/alert-notifications answers it (the fields the tests read). */
export type NotificationView = {
  id: number;
  checkId: string | null;
  alertType: string;
  state: string;
  idempotencyKey: string;
  attempts: { outcome: string }[];
};

/**
 * Every notification of the account, through GET /v1/alert-notifications (pages of 100).
 * @throws Error when a page is refused.
 */
export async function allNotifications(api: Target): Promise<NotificationView[]> {
  const all: NotificationView[] = [];
  for (let page = 1; ; page++) {
    const res = await call(api, 'GET', `/v1/alert-notifications?limit=100&page=${page}`);
    if (res.status !== 200)
      throw new Error(`notifications answered ${res.status}: ${JSON.stringify(res.json)}`);
    all.push(...(res.json as NotificationView[]));
    if ((res.json as unknown[]).length < 100) return all;
  }
}
