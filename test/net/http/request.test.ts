import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConnector } from 'undici';
import { requestOnce, type RequestOnceOptions } from '../../../src/net/http/index.js';
import { resolveHost } from '../../../src/net/resolve.js';
import { startHttpServer, type TestHttpServer } from '../../helpers/http-servers.js';

let server: TestHttpServer;
beforeAll(async () => {
  server = await startHttpServer();
});
afterAll(() => server.close());

const base = buildConnector({ maxCachedSessions: 0, rejectUnauthorized: false, timeout: 0 });
const options = (overrides: Partial<RequestOnceOptions> = {}): RequestOnceOptions => ({
  base,
  resolve: (hostname) => resolveHost(hostname, { ipFamily: 'IPv4', useOsDnsResolver: false }),
  skipSSL: false,
  method: 'GET',
  headers: {},
  deadline: performance.now() + 5000,
  signal: new AbortController().signal,
  maxBodyBytes: 1024,
  ...overrides,
});

describe('requestOnce', () => {
  it('reads a body exactly as long as the cap without calling it truncated', async () => {
    const result = await requestOnce(new URL(`${server.origin}/bytes/1024`), options());

    expect(result).toMatchObject({ statusCode: 200, bodySizeBytes: 1024, bodyTruncated: false, error: null });
    expect(result.trace.endAt).not.toBeNull();
  });

  it('stops reading one byte past the cap', async () => {
    const result = await requestOnce(new URL(`${server.origin}/bytes/1025`), options());

    expect(result).toMatchObject({ statusCode: 200, bodySizeBytes: 1024, bodyTruncated: true, error: null });
  });

  it('opens a new connection for every request', async () => {
    const first = await requestOnce(new URL(`${server.origin}/`), options());
    const second = await requestOnce(new URL(`${server.origin}/`), options());

    expect(first.trace.sockets).toHaveLength(1);
    expect(second.trace.sockets).toHaveLength(1);
    expect(second.trace.sockets[0]).not.toBe(first.trace.sockets[0]);
    expect(first.trace.sockets[0]!.destroyed).toBe(true);
  });

  it('sends a HEAD without waiting for a body', async () => {
    const result = await requestOnce(new URL(`${server.origin}/bytes/5000`), options({ method: 'HEAD' }));

    expect(result).toMatchObject({ statusCode: 200, bodySizeBytes: 0, error: null });
    expect(result.headers['content-length']).toBe('5000');
  });
});
