import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SECRET_HEADERS } from '../../src/common/credential-headers.js';
import { CredentialHeaderMasker } from '../../src/net/pcap/credentials.js';
import { capturePackets, LINK_TYPES, readPcap, scrubPcap, tcpSegment } from '../../src/net/pcap/index.js';
import { Scrubber } from '../../src/common/scrub.js';
import { commandWorks, missingRequirement } from '../helpers/requirements.js';

/** Credential values: none of them is a job secret the scrubber knows. */
const TOKEN = 'Bearer eyJhbGciOi.tok-9f8e7d6c5b4a';
const COOKIE = 'session=c00k13-v4lu3-7788; theme=dark';
const API_KEY = 'ak_live_5up3r53cr3t_0042';
const PROXY = 'Basic cHJveHk6cHJveHktcGFzcw==';
const JOB_SECRET = 'job-secret-value-31337';

/** A request carrying each credential header, in mixed letter cases, and harmless ones. */
const REQUEST =
  'GET /a HTTP/1.1\r\n' +
  'Host: 127.0.0.1\r\n' +
  `aUtHoRiZaTiOn: ${TOKEN}\r\n` +
  'X-Trace: keep-me\r\n' +
  `Cookie:${COOKIE}\r\n` +
  `X-API-KEY:   ${API_KEY}\r\n` +
  `Proxy-Authorization: ${PROXY}\r\n` +
  `X-Job: ${JOB_SECRET}\r\n` +
  '\r\n';
const RESPONSE = `HTTP/1.1 200 OK\r\nSet-Cookie: ${COOKIE}\r\n\tfolded-continuation-${API_KEY}\r\nContent-Length: 2\r\n\r\nok`;
const CREDENTIALS = [TOKEN, COOKIE, API_KEY, PROXY];

/** What the masker should make of `text`: each credential value (and the folded line) as `*`. */
function expectedMasked(text: string): string {
  return text.replace(
    /^((?:authorization|cookie|x-api-key|proxy-authorization|set-cookie)[ \t]*:[ \t]*)([^\r\n]*)((?:\r\n[ \t]+[^\r\n]*)*)/gim,
    (_, name: string, value: string, folded: string) =>
      name +
      '*'.repeat(value.length) +
      folded.replace(
        /(\r\n[ \t]+)([^\r\n]*)/g,
        (_f, indent: string, rest: string) => indent + '*'.repeat(rest.length),
      ),
  );
}

describe('CredentialHeaderMasker', () => {
  it('masks every credential header value whatever the letter case, keeping the other lines and every length', () => {
    for (const text of [REQUEST, RESPONSE]) {
      const data = Buffer.from(text, 'latin1');
      new CredentialHeaderMasker().feed(data);
      expect(data.toString('latin1')).toBe(expectedMasked(text));
      expect(data.length).toBe(text.length);
      for (const credential of CREDENTIALS) expect(data.toString('latin1')).not.toContain(credential);
    }
    const masked = Buffer.from(REQUEST, 'latin1');
    new CredentialHeaderMasker().feed(masked);
    expect(masked.toString('latin1')).toContain('X-Trace: keep-me\r\n');
    expect(masked.toString('latin1')).toContain('GET /a HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  });

  it('covers the whole shared credential header list', () => {
    for (const name of SECRET_HEADERS) {
      const data = Buffer.from(`GET / HTTP/1.1\r\n${name.toUpperCase()} : value-of-${name}\r\n\r\n`);
      new CredentialHeaderMasker().feed(data);
      expect(data.toString()).not.toContain(`value-of-${name}`);
    }
  });

  it('masks the same bytes however the stream is cut into pieces (every split point, and byte by byte)', () => {
    const text = REQUEST + RESPONSE;
    const expected = expectedMasked(text);
    for (let cut = 0; cut <= text.length; cut++) {
      const data = Buffer.from(text, 'latin1');
      const masker = new CredentialHeaderMasker();
      masker.feed(data, 0, cut);
      masker.feed(data, cut, data.length);
      expect(data.toString('latin1'), `cut at ${cut}`).toBe(expected);
    }
    const data = Buffer.from(text, 'latin1');
    const masker = new CredentialHeaderMasker();
    for (let i = 0; i < data.length; i++) masker.feed(data, i, i + 1);
    expect(data.toString('latin1')).toBe(expected);
  });

  it('after lost bytes masks up to the next line end, as they may continue a value', () => {
    const data = Buffer.from('tail-of-a-token-XYZ\r\nX-Other: plain\r\n');
    const masker = new CredentialHeaderMasker();
    masker.lost();
    masker.feed(data);
    expect(data.toString()).toBe(`${'*'.repeat(19)}\r\nX-Other: plain\r\n`);
  });
});

/** An IPv4 TCP packet 127.0.0.1:40000 → 127.0.0.2:80 (raw IP link type) with `payload` at `sequence`. */
function tcpPacket(sequence: number, payload: Buffer): Buffer {
  const ip = Buffer.alloc(20);
  ip[0] = 0x45;
  ip.writeUInt16BE(40 + payload.length, 2);
  ip[8] = 64;
  ip[9] = 6;
  Buffer.from([127, 0, 0, 1]).copy(ip, 12);
  Buffer.from([127, 0, 0, 2]).copy(ip, 16);
  const tcp = Buffer.alloc(20);
  tcp.writeUInt16BE(40_000, 0);
  tcp.writeUInt16BE(80, 2);
  tcp.writeUInt32BE(sequence >>> 0, 4);
  tcp[12] = 5 << 4;
  tcp[13] = 0x18;
  return Buffer.concat([ip, tcp, payload]);
}

/** A classic little-endian pcap of raw-IP records. */
function pcapOf(packets: Buffer[]): Buffer {
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(65_535, 16);
  header.writeUInt32LE(LINK_TYPES.RAW, 20);
  const parts: Buffer[] = [header];
  for (const [i, packet] of packets.entries()) {
    const record = Buffer.alloc(16);
    record.writeUInt32LE(1_700_000_000 + i, 0);
    record.writeUInt32LE(packet.length, 8);
    record.writeUInt32LE(packet.length, 12);
    parts.push(record, packet);
  }
  return Buffer.concat(parts);
}

/** Every way the tests look for a value in bytes: as is, base64, URL-encoded, hex. */
function expectAbsent(bytes: Buffer, values: string[]): void {
  const text = bytes.toString('latin1');
  for (const value of values) {
    for (const form of [value, Buffer.from(value).toString('base64'), encodeURIComponent(value)]) {
      expect(text.includes(form), `found ${JSON.stringify(form)}`).toBe(false);
    }
    expect(bytes.toString('hex').includes(Buffer.from(value).toString('hex'))).toBe(false);
  }
}

describe('scrubPcap masks credential headers that are not job secrets', () => {
  const stream = Buffer.from(REQUEST, 'latin1');
  const isn = 0xffff_fff0; // the stream wraps around 2^32 inside the headers

  it('across segment boundaries at every split point, with wrapping sequence numbers', () => {
    for (let cut = 1; cut < stream.length; cut += 3) {
      const file = pcapOf([
        tcpPacket(isn, stream.subarray(0, cut)),
        tcpPacket(isn + cut, stream.subarray(cut)),
      ]);
      const out = scrubPcap(file, new Scrubber([JOB_SECRET]));
      expect(out.length).toBe(file.length);
      expectAbsent(out, [...CREDENTIALS, JOB_SECRET]);
      const joined = Buffer.concat(readPcap(out).records.map((r) => r.data.subarray(40))).toString('latin1');
      expect(joined).toBe(expectedMasked(REQUEST).replace(JOB_SECRET, '*'.repeat(JOB_SECRET.length)));
    }
  });

  it('in retransmitted segments, and conservatively after a segment that was not captured', () => {
    const at = REQUEST.indexOf('Cookie');
    const one = stream.subarray(0, at + 10);
    const two = stream.subarray(at + 10, at + 30);
    const three = stream.subarray(at + 30);
    // two is retransmitted (once whole, once overlapping three); then a gap hides `one` of a later stream.
    const file = pcapOf([
      tcpPacket(isn, one),
      tcpPacket(isn + one.length, two),
      tcpPacket(isn + one.length, two),
      tcpPacket(isn + one.length + 5, Buffer.concat([two.subarray(5), three])),
      tcpPacket(isn + one.length + two.length, three),
    ]);
    const out = scrubPcap(file, new Scrubber());
    for (const record of readPcap(out).records) {
      expectAbsent(record.data, CREDENTIALS.map((value) => value.slice(0, 12)).concat(['c00k13']));
    }
    const gap = pcapOf([
      tcpPacket(1000, Buffer.from('GET / HTTP/1.1\r\nAuthorization: Bearer abc')),
      tcpPacket(1100, Buffer.from('defghij-still-the-token\r\nX-Ok: visible\r\n\r\n')),
    ]);
    const masked = scrubPcap(gap, new Scrubber()).toString('latin1');
    expect(masked).not.toContain('still-the-token');
    expect(masked).toContain('X-Ok: visible');
  });
});

const missing = missingRequirement([
  { ok: process.getuid?.() === 0, what: 'root (CAP_NET_RAW for tcpdump)', install: 'run the tests as root' },
  { ok: commandWorks('tcpdump', ['--version']), what: 'tcpdump', install: 'apt-get install tcpdump' },
]);

describe.skipIf(missing !== null)('a real capture of credential headers', () => {
  let server: Server;
  let port: number;
  let received = '';
  beforeAll(async () => {
    server = createServer((socket) => {
      socket.setEncoding('latin1');
      socket.on('data', (text: string) => {
        received += text;
        if (received.endsWith('\r\n\r\n')) socket.end(RESPONSE, 'latin1');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => server.close());

  it('sent in small segments is masked in every record, and tcpdump still reads the file', async () => {
    const file = join(tmpdir(), `outpost-cred-${process.pid}.pcap`);
    rmSync(file, { force: true });
    try {
      const capture = await capturePackets({
        host: '127.0.0.1',
        port,
        file,
        during: async () => {
          received = '';
          const socket = connect({ host: '127.0.0.1', port, noDelay: true });
          const closed = once(socket, 'close');
          await once(socket, 'connect');
          socket.setEncoding('latin1');
          let answer = '';
          socket.on('data', (text: string) => {
            answer += text;
          });
          // Segments of 7 bytes: every credential value is split across several of them.
          let sent = 0;
          for (let at = 0; at < REQUEST.length; at += 7) {
            const piece = REQUEST.slice(at, at + 7);
            socket.write(piece, 'latin1');
            sent += piece.length;
            await vi.waitFor(() => expect(received.length).toBe(sent));
          }
          await vi.waitFor(() => expect(answer).toContain('ok'));
          socket.end();
          await closed;
        },
      });
      const raw = readFileSync(file);
      // The capture holds the credentials in clear before scrubbing: the test sees real traffic.
      expect(raw.toString('latin1')).toContain(COOKIE.slice(0, 7));
      expect(raw.toString('latin1')).toContain('c00k13');
      const scrubbed = scrubPcap(raw, new Scrubber());
      expectAbsent(scrubbed, [...CREDENTIALS, 'c00k13', '5up3r53cr3t', 'tok-9f8e']);
      writeFileSync(file, scrubbed);
      const lines = execFileSync('tcpdump', ['-r', file, '-n', '-q'], { encoding: 'utf8', stdio: 'pipe' })
        .split('\n')
        .filter((line) => line !== '');
      expect(lines).toHaveLength(capture.packets);
      expect(capture.packets).toBeGreaterThan(REQUEST.length / 7);
      // The request as the capture holds it, segments joined: only the credential values masked.
      const parsed = readPcap(scrubbed);
      const request = parsed.records
        .map((record) => ({ record, segment: tcpSegment(parsed.linkType, record.data) }))
        .filter(({ segment }) => segment?.flow.endsWith(`:${port}`) === true)
        .map(({ record, segment }) => record.data.subarray(segment!.payloadStart, segment!.payloadEnd));
      expect(Buffer.concat(request).toString('latin1')).toBe(expectedMasked(REQUEST));
    } finally {
      rmSync(file, { force: true });
    }
  });
});
