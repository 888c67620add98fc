import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../../src/protocol/index.js';
import { icmpBody, type TestService, testService } from '../../helpers/service.js';

/**
 * Claims with heartbeats (ClaimRequest `heartbeatSeconds`) over a real HTTP connection: the status and headers
 * come at once, a space every heartbeat while the claim waits, then the answer, which parses as JSON with the
 * spaces before it. Without `heartbeatSeconds` the answer comes whole at the end, as older agents expect.
 */
let svc: TestService;
let base: string;

beforeAll(async () => {
  svc = await testService();
  await svc.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(svc.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => svc.close());

type Received = {
  status: number;
  headersAtMs: number;
  chunks: { atMs: number; text: string }[];
  body: string;
};

/** POSTs a claim and records when the headers and each chunk of the body arrived, ms after the request. */
function claim(over: Record<string, unknown>, agentId = randomUUID()): Promise<Received> {
  const body = JSON.stringify({
    agentVersion: '0.0.0-test',
    protocolVersion: PROTOCOL_VERSION,
    checkTypes: ['ICMP'],
    runtimes: [],
    freeSlots: { uptime: 5, main: 0 },
    waitSeconds: 0,
    ...over,
  });
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL('/v1/agent/jobs/claim', base),
      {
        method: 'POST',
        headers: { ...svc.auth(), 'x-agent-id': agentId, 'content-type': 'application/json' },
      },
      (res) => {
        const received: Received = {
          status: res.statusCode ?? 0,
          headersAtMs: performance.now() - t0,
          chunks: [],
          body: '',
        };
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          received.chunks.push({ atMs: performance.now() - t0, text });
          received.body += text;
        });
        res.on('end', () => resolve(received));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('claim heartbeats', () => {
  it('sends the status at once, a space each second while waiting, then the answer as JSON', async () => {
    const received = await claim({ waitSeconds: 3, heartbeatSeconds: 1 });
    expect(received.status).toBe(200);
    expect(received.headersAtMs).toBeLessThan(500);
    const spaces = received.chunks.filter((c) => c.text.trim() === '');
    expect(spaces.length).toBeGreaterThanOrEqual(2);
    expect(spaces.length).toBeLessThanOrEqual(3);
    // No silence longer than a heartbeat and some slack, from the headers to the end.
    const times = [received.headersAtMs, ...received.chunks.map((c) => c.atMs)];
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(Math.max(...gaps)).toBeLessThan(1500);
    expect(received.body.trimStart().startsWith('{')).toBe(true);
    expect(JSON.parse(received.body)).toEqual({ jobs: [] });
  });

  it('hands out a job queued while the claim waits, in the same answer', async () => {
    const created = await svc.request('POST', '/v1/checks/icmp', icmpBody({ activated: false }));
    expect(created.statusCode).toBe(201);
    const waiting = claim({ waitSeconds: 10, heartbeatSeconds: 1 });
    // Two heartbeats' time: at least one has gone out by then, even on a loaded machine.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const triggered = await svc.request('POST', '/v1/check-sessions/trigger', {
      target: { checkId: [created.json().id] },
    });
    expect(triggered.statusCode).toBe(201);
    const received = await waiting;
    expect(received.chunks.some((c) => c.text.trim() === '')).toBe(true);
    const answer = JSON.parse(received.body) as { jobs: { check: { id: string } }[] };
    expect(answer.jobs.map((j) => j.check.id)).toEqual([created.json().id]);
    // Well before the 10 s wait ended.
    expect(received.chunks.at(-1)!.atMs).toBeLessThan(6000);
  });

  it('answers whole and at once without heartbeats, and with them when the claim does not wait', async () => {
    for (const over of [{ waitSeconds: 1 }, { waitSeconds: 0, heartbeatSeconds: 1 }]) {
      const received = await claim(over);
      expect(received.status).toBe(200);
      expect(received.body).toBe('{"jobs":[]}');
    }
  });

  it('refuses a heartbeat out of range with the field named', async () => {
    for (const heartbeatSeconds of [0, 11, 1.5]) {
      const received = await claim({ waitSeconds: 2, heartbeatSeconds });
      expect(received.status).toBe(400);
      expect(JSON.parse(received.body).attributes.field).toBe('heartbeatSeconds');
    }
  });
});
