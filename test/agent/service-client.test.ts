import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimSilenceMs, ServiceClient, type ServiceError } from '../../src/agent/service-client.js';
import { type ClaimRequest, PROTOCOL_VERSION } from '../../src/protocol/index.js';
import { VERSION } from '../../src/common/paths.js';
import { makeJob, passedOutcome, TEST_API_KEY, TestService } from './helpers.js';

const CLAIM: ClaimRequest = {
  agentVersion: VERSION,
  protocolVersion: PROTOCOL_VERSION,
  checkTypes: ['ICMP'],
  runtimes: [],
  freeSlots: { uptime: 2, main: 0 },
  waitSeconds: 0,
};
const AGENT_ID = '8a0f1a8e-54d7-4a8c-9f59-4b0d2b1f6a11';

async function failure(call: Promise<unknown>): Promise<ServiceError> {
  try {
    await call;
  } catch (err) {
    return err as ServiceError;
  }
  throw new Error('the call succeeded');
}

describe('ServiceClient', () => {
  let service: TestService;
  let client: ServiceClient;
  const signal = () => AbortSignal.timeout(10_000);

  beforeEach(async () => {
    service = await new TestService().start();
    client = new ServiceClient({ serviceUrl: `${service.url}/`, apiKey: TEST_API_KEY, agentId: AGENT_ID });
  });
  afterEach(async () => {
    await client.close();
    await service.close();
  });

  it('sends the credentials, agent id and user agent with the claim body', async () => {
    const job = makeJob();
    service.push(job);

    const answer = await client.claim(CLAIM, signal());

    expect(answer).toEqual({ jobs: [job], rejected: [] });
    const [request] = service.received('claim');
    expect(request?.method).toBe('POST');
    expect(request?.headers.authorization).toBe(`Bearer ${TEST_API_KEY}`);
    expect(request?.headers['x-agent-id']).toBe(AGENT_ID);
    expect(request?.headers['user-agent']).toBe(`outpost-agent/${VERSION}`);
    expect(request?.body).toEqual(CLAIM);
  });

  it('returns malformed jobs as rejected with a reason instead of throwing', async () => {
    const good = makeJob();
    const bad = { ...makeJob({ jobId: 'job-bad', runLocation: 'loc-9', attempt: 2 }), timeoutMs: 'soon' };
    service.push(good, bad, { nonsense: true });

    const answer = await client.claim({ ...CLAIM, freeSlots: { uptime: 3, main: 0 } }, signal());

    expect(answer.jobs).toEqual([good]);
    expect(answer.rejected).toHaveLength(2);
    expect(answer.rejected[0]).toMatchObject({
      jobId: 'job-bad',
      runLocation: 'loc-9',
      attempt: 2,
      checkType: 'ICMP',
    });
    expect(answer.rejected[0]?.reason).toMatch(/^malformed job: \/timeoutMs: /);
    expect(answer.rejected[1]).toMatchObject({ jobId: null, checkId: null, attempt: null });
  });

  it.each([
    [503, 'OUTPOST_ERR_SERVICE_UNAVAILABLE'],
    [502, 'OUTPOST_ERR_SERVICE_UNAVAILABLE'],
    [429, 'OUTPOST_ERR_SERVICE_UNAVAILABLE'],
    [408, 'OUTPOST_ERR_SERVICE_UNAVAILABLE'],
    [401, 'OUTPOST_ERR_UNAUTHORIZED'],
    [403, 'OUTPOST_ERR_UNAUTHORIZED'],
    [400, 'OUTPOST_ERR_PROTOCOL'],
    [404, 'OUTPOST_ERR_PROTOCOL'],
  ])('sorts a claim answered %i as %s', async (status, code) => {
    service.handlers.claim = () => ({
      status,
      body: { statusCode: status, error: 'x', message: 'nope', attributes: {} },
    });

    const err = await failure(client.claim(CLAIM, signal()));

    expect(err.code).toBe(code);
    expect(err.statusCode).toBe(status);
    expect(err.message).toBe(`claim answered HTTP ${status}: nope`);
  });

  it('treats a dropped connection as transient', async () => {
    service.handlers.claim = () => 'drop';

    const err = await failure(client.claim(CLAIM, signal()));

    expect(err.code).toBe('OUTPOST_ERR_SERVICE_UNAVAILABLE');
    expect(err.statusCode).toBeNull();
  });

  it('treats a 200 that is not a claim answer as transient', async () => {
    service.handlers.claim = () => ({ status: 200, body: { hello: 'proxy' } });

    const err = await failure(client.claim(CLAIM, signal()));

    expect(err.code).toBe('OUTPOST_ERR_SERVICE_UNAVAILABLE');
  });

  it('reads Retry-After in seconds', async () => {
    service.handlers.claim = () => ({ status: 429, headers: { 'retry-after': '7' } });

    const err = await failure(client.claim(CLAIM, signal()));

    expect(err.retryAfterMs).toBe(7000);
  });

  it('says OUTPOST_ERR_ABORTED when the caller aborts a long poll', async () => {
    const controller = new AbortController();
    const claiming = client.claim({ ...CLAIM, waitSeconds: 20 }, controller.signal);
    await expect.poll(() => service.received('claim').length).toBe(1);

    controller.abort();

    expect((await failure(claiming)).code).toBe('OUTPOST_ERR_ABORTED');
  });

  it('renews a lease and reads the granted lease', async () => {
    service.leaseMs = 1234;

    const lease = await client.renewLease('job/1', signal());

    expect(lease.leaseMs).toBe(1234);
    expect(service.received('lease')[0]?.path).toBe('/v1/agent/jobs/job%2F1/lease');
  });

  it.each([409, 404])('says OUTPOST_ERR_LEASE_LOST when the lease answers %i', async (status) => {
    service.handlers.lease = () => ({ status });

    expect((await failure(client.renewLease('job-1', signal()))).code).toBe('OUTPOST_ERR_LEASE_LOST');
  });

  it('posts a result and reads a duplicate acknowledgement', async () => {
    service.handlers.result = () => ({ status: 200, body: { stored: true, duplicate: true } });
    const result = {
      ...passedOutcome(),
      runLocation: 'here',
      attempts: 1,
      resultType: 'FINAL' as const,
      artifacts: [],
    };

    const ack = await client.postResult('job-1', result, signal());

    expect(ack).toEqual({ stored: true, duplicate: true });
    expect(service.received('result')[0]?.body).toEqual(result);
  });

  it('says OUTPOST_ERR_LEASE_LOST when a result answers 409', async () => {
    service.handlers.result = () => ({ status: 409 });
    const result = {
      ...passedOutcome(),
      runLocation: 'here',
      attempts: 1,
      resultType: 'FINAL' as const,
      artifacts: [],
    };

    expect((await failure(client.postResult('job-1', result, signal()))).code).toBe('OUTPOST_ERR_LEASE_LOST');
  });
});

describe('ServiceClient through HTTP_PROXY', () => {
  it('tunnels service traffic through the proxy unless NO_PROXY names the host', async () => {
    const service = await new TestService().start();
    const tunnels: string[] = [];
    // A real forward proxy on loopback: answers CONNECT and pipes bytes to the target.
    const proxy = createServer();
    proxy.on('connect', (req, socket, head) => {
      tunnels.push(req.url ?? '');
      const [host, port] = (req.url ?? '').split(':');
      const upstream = connect(Number(port), host, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(socket).pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const viaProxy = new ServiceClient({
      serviceUrl: service.url,
      apiKey: TEST_API_KEY,
      agentId: AGENT_ID,
      proxy: { httpProxy: proxyUrl, httpsProxy: null, noProxy: null },
    });
    const bypass = new ServiceClient({
      serviceUrl: service.url,
      apiKey: TEST_API_KEY,
      agentId: AGENT_ID,
      proxy: { httpProxy: proxyUrl, httpsProxy: null, noProxy: '127.0.0.1' },
    });
    try {
      await viaProxy.claim(CLAIM, AbortSignal.timeout(10_000));
      await bypass.claim(CLAIM, AbortSignal.timeout(10_000));

      expect(tunnels).toEqual([new URL(service.url).host]);
      expect(service.received('claim')).toHaveLength(2);
    } finally {
      await viaProxy.close();
      await bypass.close();
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await service.close();
    }
  });
});

describe('ServiceClient claims with heartbeats', () => {
  /** A service on loopback whose claim answer `answer` writes; the client under test points at it. */
  async function serviceWith(answer: (res: import('node:http').ServerResponse) => void) {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => answer(res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new ServiceClient({ serviceUrl: url, apiKey: TEST_API_KEY, agentId: AGENT_ID });
    return {
      client,
      close: async () => {
        await client.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }
  const waiting: ClaimRequest = { ...CLAIM, waitSeconds: 20, heartbeatSeconds: 1 };

  it('waits past the silence limit while heartbeats come, and reads the answer after them', async () => {
    const job = makeJob();
    const peer = await serviceWith((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      let beats = 0;
      const timer = setInterval(() => {
        beats += 1;
        if (beats < 6) res.write(' ');
        else {
          clearInterval(timer);
          res.end(JSON.stringify({ jobs: [job] }));
        }
      }, 1000);
    });
    try {
      const t0 = performance.now();
      expect(await peer.client.claim(waiting, AbortSignal.timeout(20_000))).toEqual({
        jobs: [job],
        rejected: [],
      });
      expect(performance.now() - t0).toBeGreaterThan(claimSilenceMs(1));
    } finally {
      await peer.close();
    }
  });

  it('gives a claim up after three missed heartbeats: silent after the headers, or no headers at all', async () => {
    const silentBody = await serviceWith((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
    });
    const frozen = await serviceWith(() => {});
    try {
      for (const peer of [silentBody, frozen]) {
        const t0 = performance.now();
        const err = await failure(peer.client.claim(waiting, AbortSignal.timeout(30_000)));
        const tookMs = performance.now() - t0;
        expect(err.code).toBe('OUTPOST_ERR_SERVICE_UNAVAILABLE');
        // Not the 20 s wait and its 15 s grace.
        expect(tookMs).toBeGreaterThanOrEqual(claimSilenceMs(1) - 50);
        expect(tookMs).toBeLessThan(claimSilenceMs(1) + 2000);
      }
    } finally {
      await silentBody.close();
      await frozen.close();
    }
  });

  it('after a silent claim, the next call goes out on a new connection, not on one kept alive to the silent peer', async () => {
    let silent = false;
    const sockets: import('node:net').Socket[] = [];
    const server = createServer((req, res) => {
      sockets.push(req.socket);
      req.resume();
      req.on('end', () => {
        if (silent) return;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"jobs":[]}');
      });
    });
    // As the service's (Fastify keeps idle connections 72 s): longer than the silence, so they are still there.
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new ServiceClient({ serviceUrl: url, apiKey: TEST_API_KEY, agentId: AGENT_ID });
    try {
      // Calls at once open several connections; kept alive, the next calls reuse them.
      await Promise.all([1, 2, 3].map(() => client.claim(CLAIM, AbortSignal.timeout(5000))));
      const opened = new Set(sockets).size;
      expect(opened).toBeGreaterThan(1);
      await client.claim(CLAIM, AbortSignal.timeout(5000));
      expect(new Set(sockets).size).toBe(opened);
      silent = true;
      expect((await failure(client.claim(waiting, AbortSignal.timeout(30_000)))).code).toBe(
        'OUTPOST_ERR_SERVICE_UNAVAILABLE',
      );
      const before = new Set(sockets);
      silent = false;
      await client.claim(CLAIM, AbortSignal.timeout(5000));
      expect(before.has(sockets.at(-1)!)).toBe(false);
    } finally {
      await client.close().catch(() => {});
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
