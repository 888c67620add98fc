import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type HealthServer, type HealthSnapshot, startHealthServer } from '../../src/agent/health-server.js';
import { memoryLogger } from './helpers.js';

async function get(port: number, path: string, method: 'GET' | 'POST' = 'GET', address = '127.0.0.1') {
  const res = await request(`http://${address}:${port}${path}`, { method });
  return { status: res.statusCode, type: res.headers['content-type'], text: await res.body.text() };
}

describe('startHealthServer', () => {
  let server: HealthServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const snapshot: HealthSnapshot = {
    status: 'starting',
    version: '9.9.9',
    runningJobs: 3,
    freeSlots: { uptime: 7, main: 0 },
    lastSuccessfulPollAt: null,
    startedAt: '2026-01-01T00:00:00.000Z',
  };

  it('answers readiness 503 while starting, 200 when ready, 503 once draining', async () => {
    const state = { ...snapshot };
    server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      snapshot: () => state,
      logger: memoryLogger().logger,
    });

    const starting = await get(server.port, '/-/readiness');
    state.status = 'ready';
    const ready = await get(server.port, '/-/readiness');
    state.status = 'draining';
    const draining = await get(server.port, '/-/readiness');

    expect([starting.status, ready.status, draining.status]).toEqual([503, 200, 503]);
    expect(draining.text).toBe('draining\n');
  });

  it('answers liveness 200 whatever the status', async () => {
    server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      snapshot: () => ({ ...snapshot, status: 'draining' }),
      logger: memoryLogger().logger,
    });

    expect((await get(server.port, '/-/liveness')).status).toBe(200);
  });

  it('answers /health with the snapshot as JSON', async () => {
    server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      snapshot: () => snapshot,
      logger: memoryLogger().logger,
    });

    const res = await get(server.port, '/health');

    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^application\/json/);
    expect(JSON.parse(res.text)).toEqual(snapshot);
  });

  it('serves /metrics only when given a registry', async () => {
    const logger = memoryLogger().logger;
    const without = await startHealthServer({ port: 0, host: '127.0.0.1', snapshot: () => snapshot, logger });
    server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      snapshot: () => snapshot,
      logger,
      metrics: { contentType: 'text/plain; version=0.0.4', metrics: async () => 'outpost_test 1\n' },
    });

    const missing = await get(without.port, '/metrics');
    const served = await get(server.port, '/metrics');
    await without.close();

    expect(missing.status).toBe(404);
    expect(served).toEqual({ status: 200, type: 'text/plain; version=0.0.4', text: 'outpost_test 1\n' });
  });

  it('answers 404 to unknown paths and 405 to other methods', async () => {
    server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      snapshot: () => snapshot,
      logger: memoryLogger().logger,
    });

    expect((await get(server.port, '/nope')).status).toBe(404);
    expect((await get(server.port, '/health', 'POST')).status).toBe(405);
  });

  it('fails to start when the port is taken, and closes idempotently', async () => {
    const logger = memoryLogger().logger;
    server = await startHealthServer({ port: 0, host: '127.0.0.1', snapshot: () => snapshot, logger });

    await expect(
      startHealthServer({ port: server.port, host: '127.0.0.1', snapshot: () => snapshot, logger }),
    ).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await Promise.all([server.close(), server.close()]);
    await expect(get(server.port, '/-/liveness')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  // Loopback is 127.0.0.0/8 on Linux: a server bound to 127.0.0.1 refuses 127.0.0.2, one bound to every
  // interface answers it. So 127.0.0.2 stands for "another interface" without needing one.
  it('listens on loopback only by default (AGENT_HEALTH_HOST), on every interface when asked', async () => {
    server = await startHealthServer({ port: 0, snapshot: () => snapshot, logger: memoryLogger().logger });
    expect((await get(server.port, '/-/liveness')).status).toBe(200);
    await expect(get(server.port, '/-/liveness', 'GET', '127.0.0.2')).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
    await server.close();

    server = await startHealthServer({
      port: 0,
      host: '0.0.0.0',
      snapshot: () => snapshot,
      logger: memoryLogger().logger,
    });
    expect((await get(server.port, '/-/liveness', 'GET', '127.0.0.2')).status).toBe(200);
  });
});
