import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  parseResolvConf,
  queryNameProblem,
  rcodeName,
  rcodeNumber,
  reverseName,
  rrTypeName,
  rrTypeNumber,
  svcbText,
  systemNameServer,
} from '../../../src/net/dns/index.js';
import { svcbRdata } from '../../helpers/dns-servers.js';

describe('svcbText (RFC 9460 presentation format)', () => {
  it('renders ServiceMode with alpn, port, address hints, ech and mandatory as dig does', () => {
    const rdata = svcbRdata(1, '.', [
      [0, Buffer.from([0, 1])],
      [1, Buffer.from('\x02h2\x02h3', 'latin1')],
      [3, Buffer.from([0x20, 0xfb])],
      [4, Buffer.from([192, 0, 2, 1, 192, 0, 2, 2])],
      [5, Buffer.from('ech!')],
      [6, Buffer.from('20010db8000000000000000000000001', 'hex')],
    ]);
    expect(svcbText(rdata)).toBe(
      '1 . mandatory=alpn alpn="h2,h3" port=8443 ipv4hint=192.0.2.1,192.0.2.2 ech=ZWNoIQ== ipv6hint=2001:db8::1',
    );
  });

  it('renders AliasMode, no-default-alpn and unknown keys', () => {
    expect(svcbText(svcbRdata(0, 'pool.example.', []))).toBe('0 pool.example.');
    expect(
      svcbText(
        svcbRdata(2, 'svc.example', [
          [2, Buffer.alloc(0)],
          [65000, Buffer.from('a"b')],
        ]),
      ),
    ).toBe('2 svc.example. no-default-alpn key65000="a\\"b"');
  });

  it('falls back to RFC 3597 for data that does not parse', () => {
    expect(svcbText(Buffer.from([0, 1, 5, 0x61]))).toBe('\\# 4 00010561');
  });
});

describe('codes', () => {
  it('names return codes, EDNS extended ones included', () => {
    expect([0, 2, 3, 5, 16, 23, 99].map(rcodeName)).toEqual([
      'NOERROR',
      'SERVFAIL',
      'NXDOMAIN',
      'REFUSED',
      'BADVERS',
      'BADCOOKIE',
      'RCODE99',
    ]);
    expect(rcodeNumber('nxdomain')).toBe(3);
    expect(rcodeNumber('RCODE_12')).toBe(12);
    expect(rcodeNumber('nonsense')).toBeNull();
  });

  it('maps RR types both ways, HTTPS and SVCB included', () => {
    expect(rrTypeNumber('HTTPS')).toBe(65);
    expect(rrTypeNumber('UNKNOWN_65')).toBe(65);
    expect(rrTypeNumber('caa')).toBe(257);
    expect(rrTypeName('UNKNOWN_64')).toBe('SVCB');
    expect(rrTypeName('UNKNOWN_4242')).toBe('TYPE4242');
    expect(rrTypeNumber('NOPE')).toBeNull();
  });
});

describe('reverseName and queryNameProblem', () => {
  it('turns IPv4 and IPv6 addresses into their reverse names', () => {
    expect(reverseName('192.0.2.10')).toBe('10.2.0.192.in-addr.arpa');
    expect(reverseName('2001:db8::1')).toBe(
      '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa',
    );
    expect(reverseName('::ffff:192.0.2.1')).toBe(
      '1.0.2.0.0.0.0.c.f.f.f.f.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa',
    );
    expect(reverseName('www.example.test')).toBeNull();
  });

  it('rejects names a DNS message cannot carry', () => {
    expect(queryNameProblem('www.example.test.')).toBeNull();
    expect(queryNameProblem(`${'a'.repeat(64)}.test`)).toMatch(/longer than 63/);
    expect(queryNameProblem('a..test')).toMatch(/empty label/);
  });
});

describe('resolv.conf', () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-resolv-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('parses nameserver lines in order, skipping comments, options and non-addresses', () => {
    const text = [
      '# generated',
      'search example.test',
      'nameserver not-an-ip',
      '; nameserver 192.0.2.99',
      'nameserver 127.0.0.53 # stub',
      'nameserver fe80::1%eth0',
      'options edns0 trust-ad',
      'nameserver ::1',
    ].join('\n');
    expect(parseResolvConf(text)).toEqual(['127.0.0.53', 'fe80::1%eth0', '::1']);
  });

  it('gives the first name server, or 127.0.0.1 when the file names none or is missing', async () => {
    const withServers = join(dir, 'a.conf');
    writeFileSync(withServers, 'nameserver 127.0.0.2\nnameserver 127.0.0.3\n');
    const empty = join(dir, 'b.conf');
    writeFileSync(empty, 'search example.test\n');
    expect(await systemNameServer(withServers)).toBe('127.0.0.2');
    expect(await systemNameServer(empty)).toBe('127.0.0.1');
    expect(await systemNameServer(join(dir, 'missing.conf'))).toBe('127.0.0.1');
  });
});
