import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  capturePackets,
  keepConnection,
  LINK_TYPES,
  packetFlow,
  readPcap,
} from '../../src/net/pcap/index.js';
import { commandWorks, missingRequirement } from '../helpers/requirements.js';

const v4 = (address: string) => Buffer.from(address.split('.').map(Number));

/** An IPv4 packet (raw IP link type) of `protocol` with `payload` after a 20-byte header. */
function ipv4(protocol: number, source: string, destination: string, payload: Buffer): Buffer {
  const ip = Buffer.alloc(20);
  ip[0] = 0x45;
  ip.writeUInt16BE(20 + payload.length, 2);
  ip[8] = 64;
  ip[9] = protocol;
  v4(source).copy(ip, 12);
  v4(destination).copy(ip, 16);
  return Buffer.concat([ip, payload]);
}

/** A TCP header (no options) from `sourcePort` to `destinationPort`, then `payload`. */
function tcp(sourcePort: number, destinationPort: number, payload = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(20);
  header.writeUInt16BE(sourcePort, 0);
  header.writeUInt16BE(destinationPort, 2);
  header[12] = 5 << 4;
  header[13] = 0x02;
  return Buffer.concat([header, payload]);
}

/** An ICMP Destination Unreachable quoting `quoted` (an IP packet). */
function icmpUnreachable(quoted: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header[0] = 3;
  header[1] = 3;
  return Buffer.concat([header, quoted]);
}

/** An IPv6 packet with `next` header and `payload`. */
function ipv6(next: number, source: Buffer, destination: Buffer, payload: Buffer): Buffer {
  const ip = Buffer.alloc(40);
  ip[0] = 0x60;
  ip.writeUInt16BE(payload.length, 4);
  ip[6] = next;
  ip[7] = 64;
  source.copy(ip, 8);
  destination.copy(ip, 24);
  return Buffer.concat([ip, payload]);
}

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

const SECRET = Buffer.from('x-api-key: other-flow-secret-8841');

describe('keepConnection', () => {
  const local = { address: '10.0.0.7', port: 61_234 };
  const remote = { address: '10.0.0.9', port: 8080 };

  it('keeps both directions of the one connection and ICMP errors quoting it, drops every other flow', () => {
    const ours = [
      ipv4(6, '10.0.0.7', '10.0.0.9', tcp(61_234, 8080)),
      ipv4(6, '10.0.0.9', '10.0.0.7', tcp(8080, 61_234)),
      ipv4(1, '192.0.2.1', '10.0.0.7', icmpUnreachable(ipv4(6, '10.0.0.7', '10.0.0.9', tcp(61_234, 8080)))),
    ];
    const others = [
      // another local port to the same address and port (another client, or the agent's own)
      ipv4(6, '10.0.0.7', '10.0.0.9', tcp(40_000, 8080, SECRET)),
      ipv4(6, '10.0.0.9', '10.0.0.7', tcp(8080, 40_000, SECRET)),
      // the same ports, swapped
      ipv4(6, '10.0.0.7', '10.0.0.9', tcp(8080, 61_234, SECRET)),
      // another local address with our port
      ipv4(6, '10.0.0.8', '10.0.0.9', tcp(61_234, 8080, SECRET)),
      // an ICMP error quoting another client's packet to the same address and port
      ipv4(
        1,
        '192.0.2.1',
        '10.0.0.8',
        icmpUnreachable(ipv4(6, '10.0.0.8', '10.0.0.9', tcp(50_000, 8080, SECRET))),
      ),
      // UDP between the same ports
      ipv4(
        17,
        '10.0.0.7',
        '10.0.0.9',
        Buffer.concat([Buffer.from([0xef, 0x32, 0x1f, 0x90, 0, 8, 0, 0]), SECRET]),
      ),
    ];
    const input = pcapOf([others[0]!, ours[0]!, ...others.slice(1), ours[1]!, ours[2]!]);
    const { file, kept, dropped } = keepConnection(input, local, remote);
    expect({ kept, dropped }).toEqual({ kept: 3, dropped: others.length });
    const records = readPcap(file).records;
    expect(records.map((r) => r.data)).toEqual(ours);
    expect(file.includes(SECRET)).toBe(false);
    expect(file.subarray(0, 24)).toEqual(input.subarray(0, 24));
  });

  it('IPv6, whatever the spelling of the address', () => {
    const a = Buffer.from('20010db8000000000000000000000007', 'hex');
    const b = Buffer.from('20010db8000000000000000000000009', 'hex');
    const other = Buffer.from('20010db8000000000000000000000008', 'hex');
    const icmpv6 = (quoted: Buffer) => Buffer.concat([Buffer.from([1, 4, 0, 0, 0, 0, 0, 0]), quoted]);
    const ours = [
      ipv6(6, a, b, tcp(61_234, 443)),
      ipv6(6, b, a, tcp(443, 61_234)),
      ipv6(58, other, a, icmpv6(ipv6(6, a, b, tcp(61_234, 443)))),
    ];
    const input = pcapOf([
      ...ours,
      ipv6(6, a, b, tcp(61_235, 443, SECRET)),
      ipv6(58, other, a, icmpv6(ipv6(6, other, b, tcp(61_234, 443, SECRET)))),
    ]);
    const result = keepConnection(
      input,
      { address: '2001:DB8::7', port: 61_234 },
      { address: '2001:db8:0::9', port: 443 },
    );
    expect(result).toMatchObject({ kept: 3, dropped: 2 });
    expect(readPcap(result.file).records.map((r) => r.data)).toEqual(ours);
    expect(packetFlow(LINK_TYPES.RAW, ours[2]!)).toEqual({
      kind: 'icmp-error',
      flow: `${a.toString('hex')}:61234>${b.toString('hex')}:443`,
    });
  });
});

const missing = missingRequirement([
  { ok: process.getuid?.() === 0, what: 'root (CAP_NET_RAW for tcpdump)', install: 'run the tests as root' },
  { ok: commandWorks('tcpdump', ['--version']), what: 'tcpdump', install: 'apt-get install tcpdump' },
]);

describe.skipIf(missing !== null)('keepConnection on a real capture', () => {
  it('leaves only our connection out of a capture of every flow to the port, readable by tcpdump', async () => {
    const server = createServer((socket) => socket.on('data', () => socket.end()));
    server.listen(0, '127.0.0.6');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const file = join(tmpdir(), `outpost-keep-${process.pid}.pcap`);
    rmSync(file, { force: true });
    let ours: { address: string; port: number } | undefined;
    try {
      // The broad filter (every flow to the port) on purpose: the function must do the narrowing.
      await capturePackets({
        host: '127.0.0.6',
        port,
        file,
        during: async () => {
          const talk = async (payload: Buffer | null) => {
            const socket: Socket = connect({ host: '127.0.0.6', port });
            const closed = once(socket, 'close');
            await once(socket, 'connect');
            const end = { address: socket.localAddress!, port: socket.localPort! };
            if (payload) socket.write(payload);
            else socket.end();
            socket.resume();
            await closed;
            return end;
          };
          const [mine] = await Promise.all([talk(null), talk(SECRET), talk(SECRET)]);
          ours = mine;
        },
      });
      const raw = readFileSync(file);
      expect(raw.includes(SECRET)).toBe(true);
      const result = keepConnection(raw, ours!, { address: '127.0.0.6', port });
      expect(result.kept).toBeGreaterThan(0);
      expect(result.dropped).toBeGreaterThan(0);
      expect(result.file.includes(SECRET)).toBe(false);
      writeFileSync(file, result.file);
      const lines = execFileSync('tcpdump', ['-nn', '-r', file], { encoding: 'utf8', stdio: 'pipe' })
        .split('\n')
        .filter((line) => line !== '');
      expect(lines).toHaveLength(result.kept);
      for (const line of lines) expect(line).toContain(`127.0.0.1.${ours!.port}`);
    } finally {
      rmSync(file, { force: true });
      server.close();
    }
  });
});

/** Pids of this process's tcpdump children (from /proc). */
function tcpdumpChildren(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (stat.includes('(tcpdump)') && Number(fields[1]) === process.pid) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

describe.skipIf(missing !== null)('stopping a capture', () => {
  it('loses none of the packets tcpdump had not read yet when the capture ends (tcpdump held back by SIGSTOP)', async () => {
    const server = createServer((socket) => socket.end());
    server.listen(0, '127.0.0.6');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const file = join(tmpdir(), `outpost-stop-${process.pid}.pcap`);
    rmSync(file, { force: true });
    const connections = 20;
    try {
      const capture = await capturePackets({
        host: '127.0.0.6',
        port,
        file,
        drainMs: 0,
        // tcpdump's ring (2 MB, one slot per snaplen) then holds every packet while it is stopped.
        snaplenBytes: 1500,
        during: async () => {
          const [pid] = tcpdumpChildren();
          expect(pid).toBeDefined();
          process.kill(pid!, 'SIGSTOP');
          try {
            for (let i = 0; i < connections; i++) {
              const socket = connect({ host: '127.0.0.6', port });
              const closed = once(socket, 'close');
              socket.resume();
              await closed;
            }
          } finally {
            process.kill(pid!, 'SIGCONT');
          }
        },
      });
      const lines = execFileSync('tcpdump', ['-nn', '-r', file], { encoding: 'utf8', stdio: 'pipe' })
        .split('\n')
        .filter((line) => line !== '');
      expect(lines).toHaveLength(capture.packets);
      expect(lines.filter((line) => line.includes(`> 127.0.0.6.${port}: Flags [S]`))).toHaveLength(
        connections,
      );
      // The end-of-capture marker is not in the file.
      expect(lines.filter((line) => line.includes('UDP'))).toEqual([]);
    } finally {
      rmSync(file, { force: true });
      server.close();
    }
  });
});
