import { lookup } from 'node:dns/promises';
import { describe, expect, it } from 'vitest';
import { DnsQueryError, queryDns } from '../../../src/net/dns/index.js';
import { hasCode } from '../../../src/common/errors.js';
import { freeDnsPort, startScriptedDnsServer } from '../../helpers/dns-servers.js';
import { ipv6Missing, missingRequirement } from '../../helpers/requirements.js';

describe('queryDns against a misbehaving server', () => {
  it('sends RD, a random id and an EDNS0 OPT record advertising 1232 bytes', async () => {
    const server = await startScriptedDnsServer(() => ({ rcode: 0 }));
    try {
      for (let i = 0; i < 4; i++) {
        await queryDns({ query: 'a.test', recordType: 'A', nameServer: '127.0.0.1', port: server.port });
      }
      const [first] = server.queries;
      expect(first?.packet.flag_rd).toBe(true);
      expect(first?.packet.additionals).toEqual([
        expect.objectContaining({ type: 'OPT', name: '.', udpPayloadSize: 1232, ednsVersion: 0 }),
      ]);
      expect(new Set(server.queries.map((q) => q.packet.id)).size).toBeGreaterThan(1);
    } finally {
      await server.close();
    }
  });

  it('renders SOA and NS answers and keeps the authority section in the JSON', async () => {
    const soa = {
      mname: 'ns1.example.test',
      rname: 'hostmaster.example.test',
      serial: 2024010101,
      refresh: 3600,
      retry: 600,
      expire: 86400,
      minimum: 300,
    };
    const server = await startScriptedDnsServer((query) =>
      query.questions?.[0]?.type === 'NS'
        ? { answers: [{ type: 'NS', name: 'example.test', ttl: 60, data: 'ns1.example.test' }] }
        : { rcode: 3, authorities: [{ type: 'SOA', name: 'example.test', ttl: 60, data: soa }] },
    );
    try {
      const ns = await queryDns({
        query: 'example.test',
        recordType: 'NS',
        nameServer: '127.0.0.1',
        port: server.port,
      });
      expect(ns.answer).toBe('example.test.\t60\tIN\tNS\tns1.example.test.');
      const negative = await queryDns({
        query: 'gone.example.test',
        recordType: 'SOA',
        nameServer: '127.0.0.1',
        port: server.port,
      });
      expect(negative.returnCode).toBe('NXDOMAIN');
      expect(negative.json.Authority).toEqual([
        {
          name: 'example.test.',
          type: 6,
          TTL: 60,
          data: 'ns1.example.test. hostmaster.example.test. 2024010101 3600 600 86400 300',
        },
      ]);
    } finally {
      await server.close();
    }
  });

  it.skipIf(ipv6Missing())('asks an IPv6 name server (::1) over UDP and TCP', async () => {
    const answers = [{ type: 'AAAA' as const, name: 'v6.test', ttl: 5, data: '2001:db8::6' }];
    const server = await startScriptedDnsServer(() => ({ answers }), '::1');
    try {
      for (const protocol of ['UDP', 'TCP'] as const) {
        const response = await queryDns({
          query: 'v6.test',
          recordType: 'AAAA',
          nameServer: '::1',
          port: server.port,
          protocol,
        });
        expect(response.address).toBe('::1');
        expect(response.answer).toBe('v6.test.\t5\tIN\tAAAA\t2001:db8::6');
      }
      expect(server.queries.map((q) => q.transport)).toEqual(['UDP', 'TCP']);
    } finally {
      await server.close();
    }
  });

  it('retries a truncated UDP answer over TCP and says so', async () => {
    const answers = [{ type: 'A' as const, name: 'big.test', ttl: 5, data: '192.0.2.7' }];
    const server = await startScriptedDnsServer((_, transport) =>
      transport === 'UDP' ? { truncated: true } : { answers },
    );
    try {
      const response = await queryDns({
        query: 'big.test',
        recordType: 'A',
        nameServer: '127.0.0.1',
        port: server.port,
      });
      expect(response.truncatedRetriedOverTcp).toBe(true);
      expect(response.protocol).toBe('TCP');
      expect(response.json.TC).toBe(false);
      expect(response.answer).toBe('big.test.\t5\tIN\tA\t192.0.2.7');
      expect(server.queries.map((q) => q.transport)).toEqual(['UDP', 'TCP']);
    } finally {
      await server.close();
    }
  });

  it('ignores answers with another id or question and takes ours', async () => {
    for (const decoy of ['id', 'question'] as const) {
      const server = await startScriptedDnsServer(() => ({
        decoy,
        delayMs: 20,
        answers: [{ type: 'A', name: 'real.test', ttl: 5, data: '192.0.2.8' }],
      }));
      try {
        const response = await queryDns({
          query: 'real.test',
          recordType: 'A',
          nameServer: '127.0.0.1',
          port: server.port,
        });
        expect(response.answer).toBe('real.test.\t5\tIN\tA\t192.0.2.8');
      } finally {
        await server.close();
      }
    }
  });

  it('returns SERVFAIL as an answer', async () => {
    const server = await startScriptedDnsServer(() => ({ rcode: 2 }));
    try {
      const response = await queryDns({
        query: 'x.test',
        recordType: 'A',
        nameServer: '127.0.0.1',
        port: server.port,
      });
      expect(response.returnCode).toBe('SERVFAIL');
      expect(response.json.Status).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('times out within its limit when the server never answers, over UDP and TCP', async () => {
    const server = await startScriptedDnsServer(() => ({ silent: true }));
    try {
      for (const protocol of ['UDP', 'TCP'] as const) {
        const started = performance.now();
        const error = await queryDns({
          query: 'x.test',
          recordType: 'A',
          nameServer: '127.0.0.1',
          port: server.port,
          protocol,
          timeoutMs: 200,
        }).catch((e: unknown) => e);
        const elapsed = performance.now() - started;
        expect(error).toBeInstanceOf(DnsQueryError);
        expect(error).toMatchObject({ code: 'ETIMEOUT', message: 'DNS query timed out after 200 ms' });
        expect(elapsed).toBeGreaterThanOrEqual(190); // timers start from the cached loop time
        expect(elapsed).toBeLessThan(400);
      }
    } finally {
      await server.close();
    }
  });

  it('rejects with OUTPOST_ERR_ABORTED when the caller aborts', async () => {
    const server = await startScriptedDnsServer(() => ({ silent: true }));
    try {
      const controller = new AbortController();
      const pending = queryDns({
        query: 'x.test',
        recordType: 'A',
        nameServer: '127.0.0.1',
        port: server.port,
        signal: controller.signal,
      });
      controller.abort(new Error('shutdown'));
      const error = await pending.catch((e: unknown) => e);
      expect(hasCode(error, 'OUTPOST_ERR_ABORTED')).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('reports ECONNREFUSED when nothing listens, over UDP and TCP', async () => {
    const port = await freeDnsPort();
    for (const protocol of ['UDP', 'TCP'] as const) {
      const error = await queryDns({
        query: 'x.test',
        recordType: 'A',
        nameServer: '127.0.0.1',
        port,
        protocol,
      }).catch((e: unknown) => e);
      expect(error).toMatchObject({
        code: 'ECONNREFUSED',
        message: `ECONNREFUSED: no DNS server at 127.0.0.1 port ${port} (${protocol})`,
      });
    }
  });

  it('reports EBADRESP for a malformed answer carrying our id', async () => {
    const server = await startScriptedDnsServer((query) => {
      const raw = Buffer.from([0, 0, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0, 9]);
      raw.writeUInt16BE(query.id ?? 0, 0);
      return { raw };
    });
    try {
      const error = await queryDns({
        query: 'x.test',
        recordType: 'A',
        nameServer: '127.0.0.1',
        port: server.port,
      }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'EBADRESP' });
      expect((error as Error).message).toMatch(/^malformed answer from 127\.0\.0\.1 port \d+ \(UDP\)/);
    } finally {
      await server.close();
    }
  });

  it('resolves a name server given as a host name (localhost, from /etc/hosts)', async (ctx) => {
    // The scripted server listens on 127.0.0.1 only.
    const localhost = (await lookup('localhost')).address;
    const missing = missingRequirement([
      {
        ok: localhost === '127.0.0.1',
        what: 'localhost resolving to 127.0.0.1',
        install: 'add "127.0.0.1 localhost" to /etc/hosts',
      },
    ]);
    if (missing !== null) return ctx.skip();
    const server = await startScriptedDnsServer(() => ({
      answers: [{ type: 'A', name: 'h.test', ttl: 1, data: '192.0.2.9' }],
    }));
    try {
      const response = await queryDns({
        query: 'h.test',
        recordType: 'A',
        nameServer: 'localhost',
        port: server.port,
      });
      expect(response.address).toBe('127.0.0.1');
      expect(response.json.Answer[0]?.data).toBe('192.0.2.9');
    } finally {
      await server.close();
    }
  });
});
