import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  capturePackets,
  captureFilter,
  connectionFilter,
  isCaptureAvailable,
  LINK_TYPES,
  PcapStreamSplitter,
  readPcap,
  scrubPcap,
} from '../../src/net/pcap/index.js';
import { type RouteTrace, traceRoute } from '../../src/net/traceroute/index.js';
import { Scrubber, secretForms } from '../../src/common/scrub.js';
import { icmpAddonBuilt } from '../helpers/icmp.js';
import { createTestHost, type TestHost } from '../helpers/netns.js';
import { createRoutedPath, type RoutedPath } from '../helpers/netns-route.js';
import { commandWorks, ipv6Missing, missingRequirement, netnsWorks } from '../helpers/requirements.js';

const missing = missingRequirement([
  { ok: process.getuid?.() === 0, what: 'root (CAP_NET_RAW for tcpdump)', install: 'run the tests as root' },
  { ok: commandWorks('tcpdump', ['--version']), what: 'tcpdump', install: 'apt-get install tcpdump' },
  {
    ok: netnsWorks(),
    what: 'network namespaces (ip netns) and nft',
    install: 'apt-get install iproute2 nftables',
  },
  { ok: commandWorks('setpriv', ['--version']), what: 'setpriv', install: 'apt-get install util-linux' },
  { ok: icmpAddonBuilt(), what: 'the native ICMP addon', install: 'npm rebuild (needs python3, make, gcc)' },
]);
const ipv6 = missing === null && !ipv6Missing();

const ROOT = join(import.meta.dirname, '..', '..');
const TSX_CLI = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');

/** A secret with characters that every encoding (URL, form, base64) changes. */
const SECRET = "s3cr3t-K9/x+y z!Q~'(tok)*";
const STRICT_URL = 's3cr3t-K9%2Fx%2By%20z%21Q~%27%28tok%29%2A';
const BASE64 = Buffer.from(SECRET).toString('base64');

/** tcpdump's reading of a pcap file, one line per packet; throws when tcpdump cannot read it. */
function tcpdumpRead(file: string): string[] {
  const output = execFileSync('tcpdump', ['-r', file, '-n', '-q'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 10_000,
  });
  return output.split('\n').filter((line) => line !== '');
}

/** tcpdump's full reading (TCP flags, ICMP details). */
function tcpdumpReadFull(file: string): string[] {
  return execFileSync('tcpdump', ['-r', file, '-n'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 10_000,
  })
    .split('\n')
    .filter((line) => line !== '');
}

type TestServer = { server: Server; port: number; received: () => string };

/** A TCP server on 127.0.0.1 that keeps what its latest connection sent and answers 204 when the client ends. */
async function startServer(): Promise<TestServer> {
  let received = '';
  const server = createServer((socket) => {
    received = '';
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => {
      received += text;
    });
    socket.on('end', () => socket.end('HTTP/1.1 204 No Content\r\n\r\n'));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port, received: () => received };
}

/** Connects to 127.0.0.1:port without Nagle, writes each part once the server has the ones before, ends. */
async function sendInParts(server: TestServer, parts: string[]): Promise<void> {
  const socket: Socket = connect({ host: '127.0.0.1', port: server.port, noDelay: true });
  await once(socket, 'connect');
  let sent = '';
  for (const part of parts) {
    socket.write(part, 'latin1');
    sent += part;
    // The server has it: the next part goes out in a segment of its own.
    await vi.waitFor(() => expect(server.received()).toBe(sent));
  }
  socket.end();
  socket.resume();
  await once(socket, 'close');
}

/** Builds a pcap file: `order` BE/LE, `nanosecond` magic, one record per data buffer. */
function pcapOf(
  order: 'BE' | 'LE',
  nanosecond: boolean,
  records: { data: Buffer; fraction: number }[],
): Buffer {
  const header = Buffer.alloc(24);
  const u32 = (buffer: Buffer, value: number, at: number) =>
    order === 'BE' ? buffer.writeUInt32BE(value, at) : buffer.writeUInt32LE(value, at);
  const u16 = (buffer: Buffer, value: number, at: number) =>
    order === 'BE' ? buffer.writeUInt16BE(value, at) : buffer.writeUInt16LE(value, at);
  u32(header, nanosecond ? 0xa1b23c4d : 0xa1b2c3d4, 0);
  u16(header, 2, 4);
  u16(header, 4, 6);
  u32(header, 65_535, 16);
  u32(header, LINK_TYPES.RAW, 20);
  const parts: Buffer[] = [header];
  for (const [i, record] of records.entries()) {
    const recordHeader = Buffer.alloc(16);
    u32(recordHeader, 1_700_000_000 + i, 0);
    u32(recordHeader, record.fraction, 4);
    u32(recordHeader, record.data.length, 8);
    u32(recordHeader, record.data.length + 10, 12);
    parts.push(recordHeader, record.data);
  }
  return Buffer.concat(parts);
}

describe('readPcap', () => {
  it.each([
    { order: 'BE', nanosecond: false },
    { order: 'LE', nanosecond: false },
    { order: 'BE', nanosecond: true },
    { order: 'LE', nanosecond: true },
  ] as const)('reads $order files with nanosecond=$nanosecond timestamps', ({ order, nanosecond }) => {
    const fraction = nanosecond ? 123_456_789 : 123_456;
    const file = pcapOf(order, nanosecond, [
      { data: Buffer.from('first packet'), fraction },
      { data: Buffer.from('second'), fraction: 0 },
    ]);

    const pcap = readPcap(file);

    expect(pcap).toMatchObject({
      byteOrder: order,
      nanosecond,
      versionMajor: 2,
      versionMinor: 4,
      snaplen: 65_535,
      linkType: LINK_TYPES.RAW,
      trailingBytes: 0,
    });
    expect(pcap.records.map((r) => [r.tsSec, r.capturedLength, r.originalLength, r.data.toString()])).toEqual(
      [
        [1_700_000_000, 12, 22, 'first packet'],
        [1_700_000_001, 6, 16, 'second'],
      ],
    );
    expect(pcap.records[0]).toMatchObject(
      nanosecond ? { tsUsec: 123_456, tsNsec: 123_456_789 } : { tsUsec: 123_456, tsNsec: 123_456_000 },
    );
  });

  it('leaves out a record cut short at the end and counts its bytes', () => {
    const whole = pcapOf('LE', false, [{ data: Buffer.from('abc'), fraction: 1 }]);
    const cut = Buffer.concat([whole, whole.subarray(24, 24 + 16 + 1)]);

    const pcap = readPcap(cut);

    expect(pcap.records).toHaveLength(1);
    expect(pcap.trailingBytes).toBe(17);
  });

  it('names what is wrong with a file it cannot read', () => {
    expect(() => readPcap(Buffer.from('short'))).toThrow(/shorter than the 24-byte header/);
    expect(() => readPcap(Buffer.from('0a0d0d0a'.padEnd(48, '0'), 'hex'))).toThrow(/pcapng/);
    expect(() => readPcap(Buffer.alloc(24))).toThrow(/magic number 0x00000000/);
  });

  it('splits a stream arriving in any chunks into the header and whole records', () => {
    const records = Array.from({ length: 20 }, (_, i) => ({ data: Buffer.alloc(i * 7, i), fraction: i }));
    const file = pcapOf('LE', false, records);
    const splitter = new PcapStreamSplitter();

    const pieces: Buffer[] = [];
    for (let at = 0; at < file.length; at += 5) pieces.push(...splitter.push(file.subarray(at, at + 5)));

    expect(pieces).toHaveLength(21);
    expect(pieces[0]).toHaveLength(24);
    expect(Buffer.concat(pieces).equals(file)).toBe(true);
    expect(splitter.pendingBytes).toBe(0);
  });
});

describe('captureFilter', () => {
  it('adds the ICMP errors quoting a packet to the host and port, IPv4', () => {
    expect(captureFilter('192.0.2.10', 443)).toBe(
      '(host 192.0.2.10 and port 443) or (icmp and (icmp[icmptype] = icmp-unreach or ' +
        'icmp[icmptype] = icmp-timxceed) and icmp[24:4] = 0xc000020a and (icmp[17] = 6 or icmp[17] = 17) ' +
        'and icmp[8 + ((icmp[8] & 0xf) << 2) + 2:2] = 443)',
    );
    expect(captureFilter('192.0.2.10')).toBe(
      '(host 192.0.2.10) or (icmp and (icmp[icmptype] = icmp-unreach or ' +
        'icmp[icmptype] = icmp-timxceed) and icmp[24:4] = 0xc000020a)',
    );
  });

  it('compares the quoted IPv6 destination word by word', () => {
    expect(captureFilter('2001:db8::1', 80)).toContain(
      'ip6[72:4] = 0x20010db8 and ip6[76:4] = 0x00000000 and ip6[80:4] = 0x00000000 and ip6[84:4] = 0x00000001 ' +
        'and (ip6[54] = 6 or ip6[54] = 17) and ip6[90:2] = 80)',
    );
    expect(captureFilter('::ffff:192.0.2.1')).toMatch(
      /^\(host ::ffff:192\.0\.2\.1\) or .*ip6\[80:4\] = 0x0000ffff and ip6\[84:4\] = 0xc0000201\)$/,
    );
  });

  it.skipIf(missing !== null)('gives filters that tcpdump compiles', () => {
    const filters = ['192.0.2.10', '2001:db8::1'].flatMap((host) => [
      captureFilter(host, 443),
      captureFilter(host),
    ]);
    for (const filter of filters) {
      expect(() => execFileSync('tcpdump', ['-d', '-i', 'lo', filter], { stdio: 'pipe' })).not.toThrow();
    }
  });

  it('rejects a host that is not a numeric address', () => {
    expect(() => captureFilter('example.com')).toThrow(/^host must be a numeric IPv4 or IPv6 address/);
  });
});

describe('connectionFilter', () => {
  const local = { address: '192.0.2.7', port: 61_234 };
  const remote = { address: '192.0.2.10', port: 443 };

  it('names both ends of one TCP connection in each direction, and ICMP errors quoting exactly it', () => {
    const filter = connectionFilter(local, remote);
    expect(filter).toContain(
      '(tcp and ((src host 192.0.2.7 and src port 61234 and dst host 192.0.2.10 and dst port 443) or ' +
        '(src host 192.0.2.10 and src port 443 and dst host 192.0.2.7 and dst port 61234)))',
    );
    // The quoted packet: TCP, from our address and port, to the target's.
    expect(filter).toContain(
      'icmp[17] = 6 and icmp[20:4] = 0xc0000207 and icmp[24:4] = 0xc000020a and ' +
        'icmp[8 + ((icmp[8] & 0xf) << 2):2] = 61234 and icmp[8 + ((icmp[8] & 0xf) << 2) + 2:2] = 443',
    );
    const v6 = connectionFilter(
      { address: '2001:db8::7', port: 61_234 },
      { address: '2001:DB8::1', port: 80 },
    );
    expect(v6).toContain('src host 2001:db8::7 and src port 61234 and dst host 2001:db8::1 and dst port 80');
    expect(v6).toContain('ip6[54] = 6 and ip6[56:4] = 0x20010db8');
    expect(v6).toContain('ip6[84:4] = 0x00000001 and ip6[88:2] = 61234 and ip6[90:2] = 80');
  });

  it('rejects names, mixed families and bad ports', () => {
    expect(() => connectionFilter({ address: 'localhost', port: 1 }, remote)).toThrow(
      /^local address must be/,
    );
    expect(() => connectionFilter({ address: '::1', port: 1 }, remote)).toThrow(/different IP families/);
    expect(() => connectionFilter({ ...local, port: 0 }, remote)).toThrow(/^local port must be/);
    expect(() => connectionFilter(local, { ...remote, port: 65_536 })).toThrow(/^port must be/);
  });

  it.skipIf(missing !== null)('gives filters that tcpdump compiles', () => {
    for (const filter of [
      connectionFilter(local, remote),
      connectionFilter({ address: '::1', port: 61_234 }, { address: '::1', port: 8080 }),
    ]) {
      expect(() => execFileSync('tcpdump', ['-d', '-i', 'lo', filter], { stdio: 'pipe' })).not.toThrow();
    }
  });
});

describe.skipIf(missing !== null)('capturePackets on loopback', () => {
  let server: TestServer;
  const files: string[] = [];
  beforeAll(async () => {
    server = await startServer();
  });
  afterEach(() => {
    for (const file of files.splice(0)) rmSync(file, { force: true });
  });
  afterAll(() => server?.server.close());

  it('captures a connection carrying a secret, which scrubPcap masks in every form', async () => {
    const request =
      `GET /items?token=${STRICT_URL} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Authorization: Bearer ${SECRET}\r\nX-Token: ${BASE64}\r\n\r\n`;

    const capture = await capturePackets({
      host: '127.0.0.1',
      port: server.port,
      interface: 'lo',
      during: () => sendInParts(server, [request]),
    });
    files.push(capture.file);

    expect(capture).toMatchObject({ truncated: false, linkType: LINK_TYPES.ETHERNET, interface: 'lo' });
    const lines = tcpdumpReadFull(capture.file);
    expect(lines).toHaveLength(capture.packets);
    expect(lines[0]).toMatch(
      new RegExp(`127\\.0\\.0\\.1\\.\\d+ > 127\\.0\\.0\\.1\\.${server.port}: Flags \\[S\\]`),
    );
    expect(lines.some((line) => line.includes('Flags [F.]'))).toBe(true);
    const raw = readFileSync(capture.file);
    expect(raw.length).toBe(capture.sizeBytes);
    for (const planted of [SECRET, STRICT_URL, BASE64]) expect(raw.includes(planted)).toBe(true);

    const scrubbed = scrubPcap(raw, new Scrubber([SECRET]));
    const scrubbedFile = join(tmpdir(), `outpost-scrubbed-${process.pid}.pcap`);
    files.push(scrubbedFile);
    writeFileSync(scrubbedFile, scrubbed);

    expect(scrubbed.length).toBe(raw.length);
    expect(tcpdumpRead(scrubbedFile)).toHaveLength(capture.packets);
    for (const form of new Set([...secretForms(SECRET), STRICT_URL, BASE64])) {
      expect({ form, found: scrubbed.includes(form) }).toEqual({ form, found: false });
    }
    // A credential header's whole value is masked, its scheme too.
    expect(scrubbed.includes(`Authorization: ${'*'.repeat('Bearer '.length + SECRET.length)}\r\n`)).toBe(
      true,
    );
    // Only secret bytes and the credential header's value changed.
    const changed = [...raw.keys()].filter((i) => raw[i] !== scrubbed[i]).length;
    // '*' of SECRET stays '*'
    expect(changed).toBe('Bearer '.length + SECRET.length + STRICT_URL.length + BASE64.length - 1);
  });

  it('masks a secret that two TCP segments split, in both records (Linux cooked capture on any)', async () => {
    const cut = 10;
    const parts = [
      `GET / HTTP/1.1\r\nAuthorization: Bearer ${SECRET.slice(0, cut)}`,
      `${SECRET.slice(cut)}\r\n\r\n`,
    ];

    const capture = await capturePackets({
      host: '127.0.0.1',
      port: server.port,
      during: () => sendInParts(server, parts),
    });
    files.push(capture.file);
    const raw = readFileSync(capture.file);
    const pcap = readPcap(raw);

    expect(pcap.linkType).toBe(LINK_TYPES.LINUX_SLL2);
    // No record holds the whole secret: record-by-record scrubbing alone would miss it.
    expect(pcap.records.some((record) => record.data.includes(SECRET))).toBe(false);
    expect(raw.includes(`Bearer ${SECRET.slice(0, cut)}`)).toBe(true);
    const scrubbed = scrubPcap(raw, new Scrubber([SECRET]));
    expect(scrubbed.includes(`Bearer ${SECRET.slice(0, cut)}`)).toBe(false);
    expect(scrubbed.includes(`${SECRET.slice(cut)}\r\n`)).toBe(false);
    expect(scrubbed.includes(`Authorization: ${'*'.repeat('Bearer '.length + cut)}`)).toBe(true);
    expect(scrubbed.includes(`${'*'.repeat(SECRET.length - cut)}\r\n\r\n`)).toBe(true);
  });

  it('stops between two packets at maxBytes, aborting the signal of during, and leaves a valid file', async () => {
    let duringSignal: AbortSignal | undefined;

    const capture = await capturePackets({
      host: '127.0.0.1',
      port: server.port,
      interface: 'lo',
      maxBytes: 2048,
      during: async (signal) => {
        duringSignal = signal;
        const socket = connect({ host: '127.0.0.1', port: server.port, noDelay: true });
        await once(socket, 'connect');
        for (let i = 0; i < 20 && !signal.aborted; i++) {
          socket.write(Buffer.alloc(300, 0x41));
          await vi.waitFor(() => expect(server.received().length % 300).toBe(0));
        }
        socket.destroy();
        // Only the cap ends this capture.
        if (!signal.aborted) await once(signal, 'abort');
      },
    });
    files.push(capture.file);

    expect(duringSignal?.aborted).toBe(true);
    expect(capture.truncated).toBe(true);
    expect(capture.sizeBytes).toBeLessThanOrEqual(2048);
    expect(capture.sizeBytes).toBeGreaterThan(2048 - (16 + 14 + 20 + 32 + 300));
    expect(readFileSync(capture.file).length).toBe(capture.sizeBytes);
    expect(tcpdumpRead(capture.file)).toHaveLength(capture.packets);
  });

  it('rejects with OUTPOST_ERR_ABORTED as soon as the signal aborts, and removes the file', async () => {
    const file = join(tmpdir(), `outpost-aborted-${process.pid}.pcap`);
    files.push(file);
    const started = performance.now();

    const run = capturePackets({
      host: '127.0.0.1',
      port: server.port,
      file,
      signal: AbortSignal.timeout(300),
      during: () => new Promise(() => {}),
    });

    await expect(run).rejects.toMatchObject({ code: 'OUTPOST_ERR_ABORTED' });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(existsSync(file)).toBe(false);
  });

  it('passes on the rejection of during and removes the file', async () => {
    const file = join(tmpdir(), `outpost-during-${process.pid}.pcap`);
    files.push(file);

    const run = capturePackets({
      host: '127.0.0.1',
      file,
      during: async () => {
        throw new Error('the caller failed');
      },
    });

    await expect(run).rejects.toThrow('the caller failed');
    expect(existsSync(file)).toBe(false);
  });

  it('says tcpdump is missing when it is not installed', async () => {
    const file = join(tmpdir(), `outpost-missing-${process.pid}.pcap`);
    files.push(file);

    const run = capturePackets({
      host: '127.0.0.1',
      file,
      tcpdumpPath: '/nonexistent/tcpdump',
      during: async () => {},
    });

    await expect(run).rejects.toMatchObject({
      code: 'OUTPOST_ERR_CAPTURE_UNAVAILABLE',
      message: expect.stringMatching(/tcpdump is not installed.*apt-get install tcpdump/),
    });
    expect(existsSync(file)).toBe(false);
    expect(await isCaptureAvailable({ tcpdumpPath: '/nonexistent/tcpdump' })).toBe(false);
    expect(await isCaptureAvailable()).toBe(true);
  });

  it('rejects bad options with the option name', async () => {
    const during = async () => {};
    await expect(capturePackets({ host: '127.0.0.1', maxBytes: 200 * 1024 * 1024, during })).rejects.toThrow(
      'maxBytes must be an integer from 1024 to 104857600; got 209715200',
    );
    await expect(capturePackets({ host: '127.0.0.1', interface: '-w/etc/passwd', during })).rejects.toThrow(
      /^interface must be/,
    );
    await expect(capturePackets({ host: 'localhost', during })).rejects.toThrow(/^host must be a numeric/);
  });
});

describe.skipIf(missing !== null)('capturePackets of failing connections (namespaces)', () => {
  let host: TestHost;
  let path: RoutedPath;
  const files: string[] = [];
  beforeAll(() => {
    host = createTestHost();
    path = createRoutedPath({ clientNamespace: false });
  });
  afterEach(() => {
    for (const file of files.splice(0)) rmSync(file, { force: true });
    path.setRouterForwardRules([]);
  });
  afterAll(() => {
    host?.destroy();
    path?.destroy();
  });

  /** One connection attempt that settles (never rejects) on connect, error or `timeoutMs`. */
  const attempt = (address: string, port: number, timeoutMs: number) => async () => {
    const socket = connect({ host: address, port });
    await Promise.race([
      once(socket, 'connect'),
      once(socket, 'error').catch(() => {}),
      new Promise((resolve) => setTimeout(resolve, timeoutMs)),
    ]).catch(() => {});
    socket.destroy();
  };

  it('records the unanswered SYNs of a black-holed host', async () => {
    host.setInputRules(['drop']);

    const capture = await capturePackets({
      host: host.peerAddress,
      port: 80,
      during: attempt(host.peerAddress, 80, 1500),
    });
    files.push(capture.file);

    const lines = tcpdumpReadFull(capture.file);
    // The SYN and its retransmission after 1 s; nothing answers.
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(capture.packets).toBe(lines.length);
    for (const line of lines) {
      expect(line).toMatch(
        new RegExp(`${host.hostAddress}\\.\\d+ > ${host.peerAddress}\\.80: Flags \\[S\\]`),
      );
    }
  });

  it.each([
    { family: 'IPv4', rule: 'ip daddr %s tcp dport 80 reject with icmp type host-unreachable' },
    { family: 'IPv6', rule: 'ip6 daddr %s tcp dport 80 reject with icmpv6 type admin-prohibited' },
  ] as const)(
    'keeps the ICMP error a router sends about the connection, not a concurrent trace ($family)',
    async ({ family, rule }) => {
      if (family === 'IPv6' && !ipv6) return;
      const addresses = family === 'IPv4' ? path.ipv4 : path.ipv6;
      path.setRouterForwardRules([rule.replace('%s', addresses.target)]);

      let trace: RouteTrace | undefined;

      const capture = await capturePackets({
        host: addresses.target,
        port: 80,
        during: async () => {
          // As the agent's diagnostics do: the route trace runs while the connection is repeated.
          const tracing = traceRoute(addresses.target, { ipFamily: family, socketPreference: 'raw' });
          await attempt(addresses.target, 80, 1500)();
          trace = await tracing;
        },
      });
      files.push(capture.file);

      // The trace got the router's Time Exceeded; the capture has neither it nor the echo traffic.
      expect(trace?.hops[0]?.probes[0]?.address).toBe(addresses.router);
      const lines = tcpdumpReadFull(capture.file);
      expect(lines.filter((line) => /time exceeded|echo/.test(line))).toEqual([]);
      expect(lines[0]).toMatch(/Flags \[S\]/);
      const icmp = lines.filter((line) => line.includes(`${addresses.router} > ${addresses.client}: ICMP`));
      expect(icmp.length).toBeGreaterThanOrEqual(1);
      expect(icmp[0]).toContain(addresses.target);
    },
  );
});

describe.skipIf(missing !== null)('capturePackets as nobody', () => {
  const child = (caps: string[]) =>
    JSON.parse(
      execFileSync(
        'setpriv',
        [
          '--reuid=65534',
          '--regid=65534',
          '--clear-groups',
          ...caps,
          '--',
          process.execPath,
          TSX_CLI,
          join(import.meta.dirname, 'pcap-child.ts'),
        ],
        { encoding: 'utf8', timeout: 30_000 },
      ),
    );

  it('is unavailable without CAP_NET_RAW, naming what to grant', () => {
    const { available, error } = child([]);

    expect(available).toBe(false);
    expect(error).toMatchObject({
      code: 'OUTPOST_ERR_CAPTURE_UNAVAILABLE',
      message: expect.stringMatching(/tcpdump may not capture: .*permission.*CAP_NET_RAW.*--cap-add NET_RAW/),
    });
  });

  it('captures with CAP_NET_RAW alone (no CAP_NET_ADMIN)', () => {
    const { available, packets, error } = child(['--inh-caps=+net_raw', '--ambient-caps=+net_raw']);

    expect({ available, error }).toEqual({ available: true, error: null });
    expect(packets).toBe(0);
  });
});
