import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsResolver, ResolveError, resolveHost } from '../../../src/net/resolve.js';
import { missingRequirement } from '../../helpers/requirements.js';
import { type DnsStub, startDnsStub } from '../../helpers/dns-stub.js';

// Tests of src/net/resolve.ts (the first consumer is the TCP executor). Every DNS query goes
// to a stub on 127.0.0.1; the OS resolver is only asked for names /etc/hosts holds.

let stub: DnsStub;
let resolver: ReturnType<typeof createDnsResolver>;

beforeAll(async () => {
  stub = await startDnsStub({
    'both.test': { A: ['127.0.0.3'], AAAA: ['::1'] },
    'v4only.test': { A: ['127.0.0.2'] },
    'slow.test': { silent: true },
  });
  resolver = createDnsResolver({ servers: [stub.server], timeoutMs: 200, tries: 1 });
});
afterAll(() => stub.close());

/** A name /etc/hosts maps to a loopback address, other than localhost; null when there is none. */
function hostsFileLoopbackName(): { name: string; address: string } | null {
  for (const line of readFileSync('/etc/hosts', 'utf8').split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    const name = names.find((n) => n !== 'localhost' && !n.endsWith('.localhost'));
    if (address?.startsWith('127.') && name) return { name, address };
  }
  return null;
}

describe('resolveHost with the DNS resolver (c-ares)', () => {
  it('answers A for IPv4 and AAAA for IPv6 from the name server', async () => {
    const v4 = await resolveHost('both.test', { ipFamily: 'IPv4', useOsDnsResolver: false, resolver });
    const v6 = await resolveHost('both.test', { ipFamily: 'IPv6', useOsDnsResolver: false, resolver });

    expect(v4).toMatchObject({ address: '127.0.0.3', family: 4, resolver: 'dns' });
    expect(v6).toMatchObject({ address: '::1', family: 6, resolver: 'dns' });
    expect(v4.durationMs).toBeGreaterThan(0);
    expect(stub.questions).toContainEqual({ name: 'both.test', type: 'AAAA' });
  });

  it('falls back to IPv4 when the name has no IPv6 address', async () => {
    const found = await resolveHost('v4only.test', { ipFamily: 'IPv6', useOsDnsResolver: false, resolver });

    expect(found).toMatchObject({ address: '127.0.0.2', family: 4 });
    expect(stub.questions.filter((q) => q.name === 'v4only.test').map((q) => q.type)).toEqual(['AAAA', 'A']);
  });

  it('rejects an unknown name with ResolveError ENOTFOUND', async () => {
    const failure = resolveHost('missing.test', { ipFamily: 'IPv4', useOsDnsResolver: false, resolver });

    await expect(failure).rejects.toBeInstanceOf(ResolveError);
    await expect(failure).rejects.toMatchObject({ code: 'ENOTFOUND', hostname: 'missing.test' });
  });

  it('rejects with the timeout code when the name server stays silent', async () => {
    await expect(
      resolveHost('slow.test', { ipFamily: 'IPv4', useOsDnsResolver: false, resolver }),
    ).rejects.toMatchObject({ code: 'ETIMEOUT' });
  });

  it('does not read /etc/hosts: names only the hosts file knows go to the name server', async () => {
    const entry = hostsFileLoopbackName();
    if (entry === null) return;

    await expect(
      resolveHost(entry.name, { ipFamily: 'IPv4', useOsDnsResolver: false, resolver }),
    ).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(stub.questions).toContainEqual({ name: entry.name.toLowerCase(), type: 'A' });
  });

  it('answers localhost with loopback without asking anyone (RFC 6761)', async () => {
    const before = stub.questions.length;

    const v4 = await resolveHost('localhost', { ipFamily: 'IPv4', useOsDnsResolver: false, resolver });
    const v6 = await resolveHost('api.localhost.', { ipFamily: 'IPv6', useOsDnsResolver: false, resolver });

    expect(v4).toMatchObject({ address: '127.0.0.1', family: 4, resolver: 'dns' });
    expect(v6).toMatchObject({ address: '::1', family: 6 });
    expect(stub.questions.length).toBe(before);
  });

  it('uses IP literals as they are, in 0 ms, whatever the family asked', async () => {
    const before = stub.questions.length;

    const v6 = await resolveHost('[::1]', { ipFamily: 'IPv4', useOsDnsResolver: false, resolver });
    const v4 = await resolveHost('127.0.0.9', { ipFamily: 'IPv6', useOsDnsResolver: false, resolver });

    expect(v6).toEqual({ address: '::1', family: 6, resolver: 'dns', durationMs: 0 });
    expect(v4).toEqual({ address: '127.0.0.9', family: 4, resolver: 'dns', durationMs: 0 });
    expect(stub.questions.length).toBe(before);
  });

  it('rejects with OUTPOST_ERR_ABORTED when the signal aborts during a query', async () => {
    const controller = new AbortController();
    const pending = resolveHost('slow.test', {
      ipFamily: 'IPv4',
      useOsDnsResolver: false,
      resolver,
      signal: controller.signal,
    });
    controller.abort();

    await expect(pending).rejects.toMatchObject({ code: 'OUTPOST_ERR_ABORTED' });
  });
});

describe('resolveHost with the OS resolver (getaddrinfo)', () => {
  it('reads /etc/hosts', async (context) => {
    const entry = hostsFileLoopbackName();
    const missing = missingRequirement([
      {
        ok: entry !== null,
        what: 'a loopback name in /etc/hosts',
        install: 'add "127.0.0.1 localhost" to /etc/hosts',
      },
    ]);
    if (missing !== null || entry === null) return context.skip();

    const found = await resolveHost(entry.name, { ipFamily: 'IPv4', useOsDnsResolver: true });

    expect(found).toMatchObject({ address: entry.address, family: 4, resolver: 'os' });
  });
});
