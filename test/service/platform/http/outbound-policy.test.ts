import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutpostError } from '../../../../src/common/errors.js';
import { parseServiceConfig } from '../../../../src/service/config.js';
import {
  type AddressKind,
  classifyAddress,
  OutboundPolicy,
  OutboundRefusedError,
  parseOutboundAllow,
  pinnedConnector,
  type ResolvedAddress,
} from '../../../../src/service/platform/http/outbound-policy.js';
import { createTestCa, type TestCa } from '../../../helpers/test-ca.js';

/** A lookup answering from `table` (name → addresses), counting its calls; unknown names are ENOTFOUND. */
function fakeLookup(table: Record<string, string[]>) {
  const calls: string[] = [];
  const lookup = async (name: string): Promise<ResolvedAddress[]> => {
    calls.push(name);
    const found = table[name];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { lookup, calls };
}

describe('classifyAddress', () => {
  const cases: [string, AddressKind, string?][] = [
    ['127.0.0.1', 'loopback'],
    ['127.0.0.2', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%lo', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['100::1', 'reserved'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fec0::1', 'private'],
    ['64:ff9b:1::1', 'private'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700::1111', 'public'],
    // IPv6 forms that carry an IPv4 address have its kind.
    ['::ffff:127.0.0.1', 'loopback', '127.0.0.1'],
    ['::ffff:7f00:1', 'loopback', '127.0.0.1'],
    ['::127.0.0.1', 'loopback', '127.0.0.1'],
    ['::7f00:1', 'loopback', '127.0.0.1'],
    ['::ffff:0:7f00:1', 'loopback', '127.0.0.1'],
    ['64:ff9b::7f00:1', 'loopback', '127.0.0.1'],
    ['2002:7f00:1::', 'loopback', '127.0.0.1'],
    ['::ffff:169.254.169.254', 'link-local', '169.254.169.254'],
    ['::ffff:0.0.0.0', 'unspecified', '0.0.0.0'],
    ['::ffff:10.0.0.1', 'private', '10.0.0.1'],
    ['::ffff:8.8.8.8', 'public', '8.8.8.8'],
    // Cloud metadata services outside link-local space (AWS over IPv6, Alibaba Cloud).
    ['fd00:ec2::254', 'metadata'],
    ['fd00:ec2:0:0:0:0:0:254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['::ffff:100.100.100.200', 'metadata', '100.100.100.200'],
  ];
  it.each(cases)('%s is %s', (address, kind, ipv4) => {
    expect(classifyAddress(address)).toEqual(ipv4 === undefined ? { kind } : { kind, ipv4 });
  });

  it('throws a TypeError for what is not an IP address (non-standard IPv4 spellings included)', () => {
    for (const bad of ['localhost', '127.1', '0x7f.0.0.1', '2130706433', '0177.0.0.1', '[::1]', '']) {
      expect(() => classifyAddress(bad), bad).toThrow(TypeError);
    }
  });
});

describe('parseOutboundAllow', () => {
  it('takes CIDR ranges, single addresses and host names, ignoring spaces and empty entries', () => {
    const list = parseOutboundAllow(
      ' 10.0.0.0/8, hooks.Internal. ,,127.0.0.1/32, ::1, [fd00::]/8 ,127.0.0.2',
    );
    expect(list).not.toBeNull();
    expect(list!.names).toEqual(new Set(['hooks.internal']));
    expect(list!.ranges.map(([net, bits]) => `${net.toString()}/${bits}`)).toEqual([
      '10.0.0.0/8',
      '127.0.0.1/32',
      '::1/128',
      'fd00::/8',
      '127.0.0.2/32',
    ]);
  });

  it('refuses an entry that is none of them', () => {
    for (const bad of [
      '10.0.0.0/33',
      '127.1/32',
      '0x7f.0.0.1',
      'http://hooks.internal',
      'a b',
      '::1/129',
      '/8',
    ]) {
      expect(parseOutboundAllow(bad), bad).toBeNull();
    }
  });
});

describe('OutboundPolicy.reason and refusalOfUrl', () => {
  const policy = new OutboundPolicy();

  it('refuses loopback, link-local, unspecified, multicast, broadcast and reserved; allows private and public', () => {
    expect(policy.reason('127.0.0.1', 80)).toBe('127.0.0.1 is a loopback address');
    expect(policy.reason('169.254.169.254', 80)).toMatch(/^169\.254\.169\.254 is a link-local address/);
    expect(policy.reason('::ffff:7f00:1', 80)).toBe('::ffff:7f00:1 (IPv4 127.0.0.1) is a loopback address');
    expect(policy.reason('0.0.0.0', 80)).toBe('0.0.0.0 is an unspecified address');
    expect(policy.reason('224.0.0.251', 80)).toBe('224.0.0.251 is a multicast address');
    expect(policy.reason('255.255.255.255', 80)).toBe('255.255.255.255 is a broadcast address');
    expect(policy.reason('240.0.0.1', 80)).toMatch(/reserved/);
    expect(policy.reason('10.0.0.5', 80)).toBeNull();
    expect(policy.reason('fd00::5', 80)).toBeNull();
    expect(policy.reason('8.8.8.8', 443)).toBeNull();
  });

  it('judges every spelling of an address in a URL after WHATWG normalisation, and localhost', () => {
    const refused = [
      'http://127.0.0.1/',
      'http://127.0.0.2:8080/x',
      'http://[::1]/',
      'http://0.0.0.0/',
      'http://[::]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:7f00:1]/',
      'http://[::127.0.0.1]/',
      'http://2130706433/',
      'http://0177.0.0.1/',
      'http://0x7f.0.0.1/',
      'http://0x7f000001/',
      'http://127.1/',
      'http://localhost/',
      'http://LOCALHOST./',
      'https://api.localhost/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fe80::1]/',
      'HTTP://127.0.0.1/',
    ];
    for (const url of refused) {
      expect(policy.refusalOfUrl(url), url).toMatch(/^refused: .+; allow it with OUTPOST_OUTBOUND_ALLOW$/);
    }
    expect(policy.refusalOfUrl('http://2130706433/')).toBe(
      'refused: 127.0.0.1 is a loopback address; allow it with OUTPOST_OUTBOUND_ALLOW',
    );
    expect(policy.refusalOfUrl('http://localhost:9/')).toBe(
      'refused: localhost resolves to 127.0.0.1, a loopback address; allow it with OUTPOST_OUTBOUND_ALLOW',
    );
    // Names are judged when a notification is sent; private addresses are allowed by default.
    for (const url of [
      'https://hooks.example.com/x',
      'http://10.0.0.5/',
      'http://[fd00::1]/',
      'ftp://127.0.0.1/',
    ]) {
      expect(policy.refusalOfUrl(url), url).toBeNull();
    }
  });

  it('an allow-list entry allows what it names: a range, one address (any spelling), or a host name', () => {
    const allowing = new OutboundPolicy({ allow: ['127.0.0.1/32', '169.254.0.0/16', 'metadata.internal'] });
    expect(allowing.refusalOfUrl('http://127.0.0.1:8080/')).toBeNull();
    expect(allowing.refusalOfUrl('http://2130706433/')).toBeNull();
    expect(allowing.refusalOfUrl('http://[::ffff:127.0.0.1]/')).toBeNull();
    expect(allowing.refusalOfUrl('http://169.254.169.254/')).toBeNull();
    expect(allowing.refusalOfUrl('http://metadata.internal/')).toBeNull();
    // 127.0.0.2 is not 127.0.0.1; localhost is ::1 too, which is not allowed.
    expect(allowing.refusalOfUrl('http://127.0.0.2/')).toMatch(/loopback/);
    expect(allowing.refusalOfUrl('http://localhost/')).toMatch(
      /localhost resolves to ::1, a loopback address/,
    );
    expect(new OutboundPolicy({ allow: ['localhost'] }).refusalOfUrl('http://localhost/')).toBeNull();
  });

  it('OUTPOST_OUTBOUND_PRIVATE=deny refuses private addresses unless allowed', () => {
    const strict = new OutboundPolicy({ privateNetworks: 'deny', allow: ['10.9.0.0/16'] });
    for (const url of [
      'http://10.0.0.5/',
      'http://192.168.1.1/',
      'http://172.16.0.1/',
      'http://100.64.0.1/',
    ]) {
      expect(strict.refusalOfUrl(url), url).toMatch(/a private address and OUTPOST_OUTBOUND_PRIVATE is deny/);
    }
    expect(strict.refusalOfUrl('http://[fd00::1]/')).toMatch(/private/);
    expect(strict.refusalOfUrl('http://10.9.1.1/')).toBeNull();
    expect(strict.refusalOfUrl('https://8.8.8.8/')).toBeNull();
  });

  it("refuses an address of this machine on the service's own port; only an entry naming that address allows it", () => {
    const own = { ownPort: () => 3000, localAddresses: () => ['127.0.0.1', '10.1.2.3', 'fe80::1'] };
    const policy = new OutboundPolicy(own);
    expect(policy.reason('10.1.2.3', 3000)).toBe("10.1.2.3 is this service's own address (port 3000)");
    expect(policy.reason('::ffff:10.1.2.3', 3000)).toMatch(/own address/);
    expect(policy.reason('10.1.2.3', 3001)).toBeNull();
    expect(policy.reason('10.1.2.4', 3000)).toBeNull();
    expect(policy.refusalOfUrl('http://10.1.2.3:3000/v1/checks')).toMatch(/own address/);
    // A range does not allow it; the one address does.
    expect(new OutboundPolicy({ ...own, allow: ['10.0.0.0/8'] }).reason('10.1.2.3', 3000)).toMatch(/own/);
    expect(new OutboundPolicy({ ...own, allow: ['10.1.2.3'] }).reason('10.1.2.3', 3000)).toBeNull();
    expect(new OutboundPolicy({ ...own, allow: ['127.0.0.0/8'] }).reason('127.0.0.1', 3000)).toMatch(/own/);
    expect(new OutboundPolicy({ ...own, allow: ['127.0.0.0/8'] }).reason('127.0.0.1', 3001)).toBeNull();
    // Not listening: no own port.
    expect(new OutboundPolicy({ ownPort: () => null }).reason('10.1.2.3', 3000)).toBeNull();
  });

  it('throws a TypeError for an allow-list it cannot read', () => {
    expect(() => new OutboundPolicy({ allow: ['not a name'] })).toThrow(TypeError);
  });
});

describe('OutboundPolicy.resolve', () => {
  it('checks every address a name resolves to: one refused address refuses the name', async () => {
    const { lookup } = fakeLookup({
      'hooks.example.test': ['8.8.8.8', '127.0.0.1'],
      'meta.example.test': ['169.254.169.254'],
      'v6.example.test': ['2606:4700::1111', '::ffff:127.0.0.1'],
      'fine.example.test': ['8.8.4.4', '2606:4700::1111'],
    });
    const policy = new OutboundPolicy({ lookup });
    await expect(policy.resolve('hooks.example.test', 443)).rejects.toThrow(
      new OutboundRefusedError(
        'refused: hooks.example.test resolves to 127.0.0.1, a loopback address; allow it with OUTPOST_OUTBOUND_ALLOW',
      ),
    );
    await expect(policy.resolve('meta.example.test', 80)).rejects.toThrow(/link-local/);
    await expect(policy.resolve('v6.example.test', 80)).rejects.toThrow(/\(IPv4 127\.0\.0\.1\), a loopback/);
    await expect(policy.resolve('fine.example.test', 443)).resolves.toEqual({
      address: '8.8.4.4',
      family: 4,
    });
    await expect(policy.resolve('nowhere.example.test', 443)).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('takes addresses as they are (brackets too) and never asks DNS for them', async () => {
    const { lookup, calls } = fakeLookup({});
    const policy = new OutboundPolicy({ lookup });
    await expect(policy.resolve('[::1]', 80)).rejects.toBeInstanceOf(OutboundRefusedError);
    await expect(policy.resolve('127.0.0.1', 80)).rejects.toBeInstanceOf(OutboundRefusedError);
    await expect(policy.resolve('10.0.0.1', 80)).resolves.toEqual({ address: '10.0.0.1', family: 4 });
    expect(calls).toEqual([]);
  });

  it('refuses localhost through the system resolver', async () => {
    await expect(new OutboundPolicy().resolve('localhost', 80)).rejects.toThrow(
      /^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/,
    );
  });

  it('an allowed name is not checked; an allowed range lets its addresses through', async () => {
    const { lookup } = fakeLookup({ 'hooks.internal': ['127.0.0.1'], 'other.internal': ['127.0.0.1'] });
    const policy = new OutboundPolicy({ lookup, allow: ['hooks.internal'] });
    await expect(policy.resolve('HOOKS.internal.', 80)).resolves.toEqual({ address: '127.0.0.1', family: 4 });
    await expect(policy.resolve('other.internal', 80)).rejects.toThrow(
      /other\.internal resolves to 127\.0\.0\.1/,
    );
  });

  it('gives up on a lookup that hangs, as a temporary error', async () => {
    const policy = new OutboundPolicy({ lookup: () => new Promise(() => {}), lookupTimeoutMs: 50 });
    await expect(policy.resolve('slow.example.test', 80)).rejects.toMatchObject({ code: 'EAI_AGAIN' });
  });
});

describe('pinnedConnector', () => {
  let server: Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      hits += 1;
      res.end('pinned');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('connects to the checked address only: the name is resolved once, by the policy', async () => {
    // No real DNS knows this name: the connection can only go where the policy's lookup said.
    const { lookup, calls } = fakeLookup({ 'rebind.example.test': ['127.0.0.1'] });
    const policy = new OutboundPolicy({ lookup, allow: ['127.0.0.1/32'] });
    const agent = new Agent({ connect: pinnedConnector(policy, { timeout: 2000 }) });
    try {
      const res = await request(`http://rebind.example.test:${port}/`, { dispatcher: agent });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe('pinned');
      expect(calls).toEqual(['rebind.example.test']);
    } finally {
      await agent.close();
    }
  });

  it('fails the connection with the refusal, and the server gets nothing', async () => {
    const before = hits;
    const { lookup } = fakeLookup({ 'evil.example.test': ['127.0.0.1'] });
    const agent = new Agent({ connect: pinnedConnector(new OutboundPolicy({ lookup }), { timeout: 2000 }) });
    try {
      for (const url of [
        `http://evil.example.test:${port}/`,
        `http://127.0.0.1:${port}/`,
        `http://2130706433:${port}/`,
      ]) {
        await expect(request(url, { dispatcher: agent }), url).rejects.toBeInstanceOf(OutboundRefusedError);
      }
      expect(hits).toBe(before);
    } finally {
      await agent.close();
    }
  });
});

describe('pinnedConnector over TLS', () => {
  let ca: TestCa;
  let server: HttpsServer;
  let port: number;
  beforeAll(async () => {
    ca = createTestCa();
    const pair = ca.issue({ commonName: 'hooks.example.test', altNames: ['DNS:hooks.example.test'] });
    server = createHttpsServer(pair, (_req, res) => res.end('tls'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    ca.destroy();
  });

  it("connects to the checked address and still verifies the certificate against the URL's name", async () => {
    const { lookup } = fakeLookup({
      'hooks.example.test': ['127.0.0.1'],
      'other.example.test': ['127.0.0.1'],
    });
    const policy = new OutboundPolicy({ lookup, allow: ['127.0.0.1/32'] });
    const agent = new Agent({ connect: pinnedConnector(policy, { timeout: 2000, ca: ca.caCert }) });
    try {
      const res = await request(`https://hooks.example.test:${port}/`, { dispatcher: agent });
      expect(await res.body.text()).toBe('tls');
      // The certificate names hooks.example.test only: another name on the same address is refused by TLS.
      await expect(
        request(`https://other.example.test:${port}/`, { dispatcher: agent }),
      ).rejects.toMatchObject({
        code: 'ERR_TLS_CERT_ALTNAME_INVALID',
      });
    } finally {
      await agent.close();
    }
  });
});

describe('OUTPOST_OUTBOUND_ALLOW and OUTPOST_OUTBOUND_PRIVATE', () => {
  it('are read by the service configuration', () => {
    expect(parseServiceConfig({})).toMatchObject({ outboundAllow: [], outboundPrivate: 'allow' });
    expect(
      parseServiceConfig({
        OUTPOST_OUTBOUND_ALLOW: ' 10.0.0.0/8, hooks.internal,127.0.0.1/32 ,',
        OUTPOST_OUTBOUND_PRIVATE: 'Deny',
      }),
    ).toMatchObject({
      outboundAllow: ['10.0.0.0/8', 'hooks.internal', '127.0.0.1/32'],
      outboundPrivate: 'deny',
    });
  });

  it('refuses values it cannot read, naming the variables', () => {
    let error: unknown;
    try {
      parseServiceConfig({
        OUTPOST_OUTBOUND_ALLOW: '10.0.0.0/8,http://x',
        OUTPOST_OUTBOUND_PRIVATE: 'maybe',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(OutpostError);
    expect((error as OutpostError).code).toBe('OUTPOST_ERR_CONFIG');
    expect((error as OutpostError).message).toContain(
      'OUTPOST_OUTBOUND_ALLOW must be comma-separated CIDR ranges',
    );
    expect((error as OutpostError).message).toContain('OUTPOST_OUTBOUND_PRIVATE must be allow or deny');
  });
});
