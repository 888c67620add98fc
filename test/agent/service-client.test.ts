import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient, type ServiceError } from '../../src/agent/service-client.js';
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
