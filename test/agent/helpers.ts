import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseAgentConfig, type AgentConfig } from '../../src/agent/config.js';
import type { Executor, ExecutorContext } from '../../src/checks/executor.js';
import {
  CHECK_TYPES,
  type CheckType,
  type Job,
  type JobClass,
  jobClassOf,
  type RunOutcome,
} from '../../src/protocol/index.js';
import { OutpostError } from '../../src/common/errors.js';
import { createLogger, type Logger } from '../../src/common/logger.js';

/** The API key every agent test uses. */
export const TEST_API_KEY = 'pl_0123456789abcdef0123456789abcdef';

/** One request the test service received. */
export type Recorded = {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  /** performance.now() when the request arrived, milliseconds. */
  atMs: number;
};

/** What a route handler answers: a status and JSON body, `drop` (socket destroyed) or `default`. */
export type Answer =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | 'drop'
  | 'default';
export type Route = 'claim' | 'ack' | 'lease' | 'result' | 'event' | 'stopped';
export type Handler = (request: Recorded, nth: number) => Answer | Promise<Answer>;

/**
 * A real HTTP server on 127.0.0.1:0 speaking the agent protocol, whose answers a test
 * can script per route (503s, dropped connections, 401, 409…). By default it long-polls
 * claims until a job is pushed or `waitSeconds` pass, and accepts leases, results and events.
 */
export class TestService {
  readonly requests: Recorded[] = [];
  readonly handlers: Partial<Record<Route, Handler>> = {};
  /** `leaseMs` the default lease handler grants. */
  leaseMs = 300_000;
  /** Raw jobs waiting to be claimed (anything: malformed jobs are pushed here too). */
  readonly #queue: unknown[] = [];
  readonly #waiters = new Set<() => void>();
  readonly #server = createServer((req, res) => void this.#handle(req, res));
  url = '';

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  /** Queues jobs for the next claims. */
  push(...jobs: unknown[]): void {
    this.#queue.push(...jobs);
    for (const wake of [...this.#waiters]) wake();
  }

  /** Requests received on one route. */
  received(route: Route): Recorded[] {
    return this.requests.filter((r) => routeOf(r.path) === route);
  }

  async close(): Promise<void> {
    for (const wake of [...this.#waiters]) wake();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const recorded: Recorded = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body: text === '' ? null : JSON.parse(text),
      atMs: performance.now(),
    };
    this.requests.push(recorded);
    const route = routeOf(recorded.path);
    const handler = route ? this.handlers[route] : undefined;
    const answer = handler ? await handler(recorded, this.received(route!).length) : 'default';
    if (answer === 'drop') {
      req.socket.destroy();
      return;
    }
    if (answer !== 'default') {
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
      return;
    }
    if (route === 'claim') return this.#longPoll(res, recorded.body as ClaimBody);
    if (route === 'stopped') {
      res.writeHead(204);
      res.end();
      return;
    }
    const status = route === 'event' ? 202 : route === undefined ? 404 : 200;
    const body =
      route === 'lease'
        ? { leaseExpiresAt: new Date(Date.now() + this.leaseMs).toISOString(), leaseMs: this.leaseMs }
        : route === 'result'
          ? { stored: true, duplicate: false }
          : route === 'ack'
            ? {
                acknowledged: (recorded.body as { jobIds: string[] }).jobIds,
                lost: [],
                leaseMs: this.leaseMs,
              }
            : {};
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  async #longPoll(res: ServerResponse, body: ClaimBody): Promise<void> {
    // Like the real queue: a job is handed out only against a free slot of its own class.
    const take = () => {
      const left = { ...body.freeSlots };
      const jobs: unknown[] = [];
      for (let i = 0; i < this.#queue.length; ) {
        const jobClass = classOfRaw(this.#queue[i]);
        if (left[jobClass] > 0) {
          left[jobClass] -= 1;
          jobs.push(...this.#queue.splice(i, 1));
        } else i += 1;
      }
      return jobs;
    };
    let jobs = take();
    if (jobs.length === 0 && body.waitSeconds > 0) {
      const deadline = Date.now() + body.waitSeconds * 1000;
      while (jobs.length === 0 && Date.now() < deadline && !res.destroyed) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            this.#waiters.delete(done);
            resolve();
          };
          const timer = setTimeout(done, deadline - Date.now());
          this.#waiters.add(done);
          res.once('close', done);
        });
        if (res.destroyed) return;
        jobs = take();
      }
    }
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jobs }));
  }
}

/** The job class of a raw queued job; uptime for a malformed one. */
function classOfRaw(raw: unknown): JobClass {
  const type = (raw as { check?: { checkType?: unknown } } | null)?.check?.checkType;
  return typeof type === 'string' && CHECK_TYPES.includes(type as CheckType)
    ? jobClassOf(type as CheckType)
    : 'uptime';
}

type ClaimBody = { freeSlots: { uptime: number; main: number }; waitSeconds: number };

function routeOf(path: string): Route | undefined {
  if (path === '/v1/agent/jobs/claim') return 'claim';
  if (path === '/v1/agent/events') return 'event';
  if (path === '/v1/agent/jobs/ack') return 'ack';
  if (path === '/v1/agent/stopped') return 'stopped';
  if (/^\/v1\/agent\/jobs\/[^/]+\/lease$/.test(path)) return 'lease';
  if (/^\/v1\/agent\/jobs\/[^/]+\/result$/.test(path)) return 'result';
  return undefined;
}

/** A valid job; `overrides` are merged at the top level and `check` shallowly. */
export function makeJob(
  overrides: Partial<Omit<Job, 'check'>> & { check?: Partial<Job['check']> } = {},
): Job {
  const { check, ...rest } = overrides;
  return {
    jobId: `job-${Math.random().toString(16).slice(2, 10)}`,
    accountId: 'acc-1',
    check: {
      id: 'check-1',
      name: 'a check',
      checkType: 'ICMP',
      request: { hostname: '127.0.0.1', ipFamily: 'IPv4', pingCount: 1, assertions: [] },
      shouldFail: false,
      degradedResponseTime: null,
      maxResponseTime: null,
      degradedPacketLossThreshold: null,
      maxPacketLossThreshold: null,
      runtimeId: null,
      ...check,
    },
    environmentVariables: [],
    runLocation: 'private-test',
    runSource: 'SCHEDULER',
    checkSessionId: null,
    attempt: 1,
    timeoutMs: 30_000,
    leaseMs: 300_000,
    ...rest,
  };
}

/**
 * A tiny real executor (test double for executors only): waits on a timer that honours
 * the AbortSignal, then passes — or runs `behaviour` for crashes and custom outcomes.
 * `runs` records the jobs it saw, `aborted` the ones whose signal fired.
 */
export class TimerExecutor implements Executor {
  readonly runs: Job[] = [];
  readonly aborted: Job[] = [];
  closed = 0;
  running = 0;
  maxRunning = 0;
  constructor(
    readonly checkType: CheckType,
    readonly delayMs: number,
    readonly behaviour?: (job: Job, context: ExecutorContext) => RunOutcome | Promise<RunOutcome>,
  ) {}

  async run(job: Job, context: ExecutorContext): Promise<RunOutcome> {
    this.runs.push(job);
    this.running += 1;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    const startedAt = new Date();
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, this.delayMs);
        context.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            this.aborted.push(job);
            reject(new OutpostError('OUTPOST_ERR_ABORTED', 'aborted', { cause: context.signal.reason }));
          },
          { once: true },
        );
      });
      if (this.behaviour) return await this.behaviour(job, context);
      return passedOutcome(startedAt);
    } finally {
      this.running -= 1;
    }
  }

  async close(): Promise<void> {
    this.closed += 1;
  }
}

/** A PASSED outcome started at `startedAt` and stopped now. */
export function passedOutcome(startedAt = new Date()): RunOutcome {
  return {
    status: 'PASSED',
    hasFailures: false,
    hasErrors: false,
    isDegraded: false,
    overMaxResponseTime: false,
    responseTime: Date.now() - startedAt.getTime(),
    startedAt: startedAt.toISOString(),
    stoppedAt: new Date().toISOString(),
    errorMessage: null,
    assertions: [],
    logs: [],
  };
}

/** A logger whose JSON lines are kept in `lines` (and not printed). */
export function memoryLogger(): { logger: Logger; lines: Record<string, unknown>[]; text: () => string } {
  const raw: string[] = [];
  const logger = createLogger({
    level: 'DEBUG',
    name: 'test',
    destination: { write: (line: string) => void raw.push(line) },
  });
  return {
    logger,
    get lines() {
      return raw.map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    text: () => raw.join(''),
  };
}

/** A configuration for tests: ephemeral health port, 1 s claims, the test key. */
export function testConfig(serviceUrl: string, env: NodeJS.ProcessEnv = {}): AgentConfig {
  return parseAgentConfig({
    API_KEY: TEST_API_KEY,
    SERVICE_URL: serviceUrl,
    AGENT_HEALTH_PORT: '0',
    AGENT_CLAIM_WAIT_SECONDS: '1',
    ...env,
  });
}

/** Fast back-off for tests: 20 ms → 200 ms. */
export const FAST_BACKOFF = { baseMs: 20, capMs: 200 };
