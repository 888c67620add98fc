import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { promisify } from 'node:util';
import {
  type Answer,
  type DecodedPacket,
  decode,
  encode,
  type Packet,
  RECURSION_AVAILABLE,
  RECURSION_DESIRED,
  TRUNCATED_RESPONSE,
} from 'dns-packet';
import { commandWorks } from './requirements.js';

const run = promisify(execFile);

/** True when dnsmasq is installed. */
export const dnsmasqWorks = (): boolean => commandWorks('dnsmasq', ['--version']);
/** True when dig (dnsutils) is installed. */
export const digWorks = (): boolean => commandWorks('dig', ['-v']);

/** A port free for both UDP and TCP on 127.0.0.1 right now. */
export async function freeDnsPort(): Promise<number> {
  for (;;) {
    const udp = createSocket('udp4');
    const port = await new Promise<number>((resolve) =>
      udp.bind(0, '127.0.0.1', () => resolve(udp.address().port)),
    );
    const tcp = createTcpServer();
    const tcpFree = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    await new Promise<void>((resolve) => (tcpFree ? tcp.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => udp.close(() => resolve()));
    if (tcpFree) return port;
  }
}

/** A dnsmasq process answering on 127.0.0.1:`port` (UDP and TCP) from the records on its command line. */
export type Dnsmasq = { port: number; process: ChildProcess; stop(): Promise<void> };

/**
 * Starts dnsmasq in the foreground on a free loopback port, with no upstream, no hosts file and
 * no configuration file: it answers only from `records` (`--host-record=…`, `--mx-host=…`, …).
 * Resolves once it logged that it started; retries on another port when the port was taken.
 * @param startTimeoutMs how long one start may take before dnsmasq is killed and the start fails (default 10 s).
 * @throws Error naming dnsmasq's own words when it does not start (not installed, no port, no answer in time).
 */
export async function startDnsmasq(records: string[], startTimeoutMs = 10_000): Promise<Dnsmasq> {
  for (let attempt = 0; ; attempt++) {
    const port = await freeDnsPort();
    const child = spawn(
      'dnsmasq',
      [
        '--no-daemon',
        `--port=${port}`,
        '--listen-address=127.0.0.1',
        '--bind-interfaces',
        '--no-resolv',
        '--no-hosts',
        '--conf-file=/dev/null',
        '--pid-file=',
        ...records,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    const started = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        stderr += `no start within ${startTimeoutMs} ms`;
        child.kill('SIGKILL');
        resolve(false);
      }, startTimeoutMs);
      child.once('exit', () => clearTimeout(timer));
      child.once('error', () => clearTimeout(timer));
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('started, version')) resolve(true);
      });
      child.once('exit', () => resolve(false));
      // dnsmasq not installed: spawn fails with ENOENT, and that must not be an unhandled 'error'.
      child.once('error', (err) => {
        stderr += err.message;
        resolve(false);
      });
    });
    if (started) {
      const stop = () =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
      return { port, process: child, stop };
    }
    if (!stderr.includes('in use') || attempt >= 5)
      throw new Error(`dnsmasq did not start: ${stderr.trim()}`);
  }
}

/** How the scripted server answers one query. */
export type ScriptedReply = {
  /** Wait this long before answering, ms. */
  delayMs?: number;
  /** Never answer (the query is still recorded). */
  silent?: boolean;
  /** Return code in the header, 0–15. Default 0 (NOERROR). */
  rcode?: number;
  answers?: Answer[];
  authorities?: Answer[];
  /** Set TC and send no records (as a server whose answer does not fit in UDP). */
  truncated?: boolean;
  /** Send these bytes instead of a DNS message. */
  raw?: Buffer;
  /** Answer with this id instead of the query's. */
  id?: number;
  /**
   * Send a decoy first, at once: an answer (A 203.0.113.66) with another id (`id`) or with our
   * id but another question (`question`), as a late or spoofed packet would arrive.
   */
  decoy?: 'id' | 'question';
};

/** A query the scripted server received. */
export type ReceivedQuery = { transport: 'UDP' | 'TCP'; packet: DecodedPacket; atMs: number };

/** A DNS server on 127.0.0.1 or ::1 (UDP and TCP on one port) whose every answer a test scripts. */
export type ScriptedDnsServer = {
  port: number;
  readonly queries: ReceivedQuery[];
  close(): Promise<void>;
};

function replyBytes(query: DecodedPacket, reply: ScriptedReply): Buffer {
  if (reply.raw) return reply.raw;
  const opt = query.additionals?.find((record) => record.type === 'OPT');
  const packet: Packet = {
    type: 'response',
    id: reply.id ?? query.id ?? 0,
    flags:
      ((query.flags ?? 0) & RECURSION_DESIRED) |
      RECURSION_AVAILABLE |
      (reply.truncated ? TRUNCATED_RESPONSE : 0) |
      ((reply.rcode ?? 0) & 0xf),
    questions: query.questions ?? [],
    answers: reply.truncated ? [] : (reply.answers ?? []),
    authorities: reply.truncated ? [] : (reply.authorities ?? []),
    additionals: opt
      ? [
          {
            type: 'OPT',
            name: '.',
            udpPayloadSize: 1232,
            extendedRcode: 0,
            ednsVersion: 0,
            flags: 0,
            flag_do: false,
            options: [],
          },
        ]
      : [],
  };
  return encode(packet);
}

function decoyBytes(query: DecodedPacket, kind: 'id' | 'question'): Buffer {
  const id = kind === 'id' ? ((query.id ?? 0) + 1) & 0xffff : query.id;
  const question = query.questions?.[0] ?? { type: 'A' as const, name: 'x' };
  const name = kind === 'question' ? `decoy.${question.name}` : question.name;
  return replyBytes(
    { ...query, ...(id === undefined ? {} : { id }), questions: [{ ...question, name }] },
    { answers: [{ type: 'A', name, ttl: 1, data: '203.0.113.66' }] },
  );
}

/**
 * Starts a misbehaving DNS server: `script` decides per query (and transport) whether to
 * delay, answer SERVFAIL or NXDOMAIN, truncate, send garbage or never answer.
 */
export async function startScriptedDnsServer(
  script: (query: DecodedPacket, transport: 'UDP' | 'TCP') => ScriptedReply,
  host: '127.0.0.1' | '::1' = '127.0.0.1',
): Promise<ScriptedDnsServer> {
  const port = await freeDnsPort();
  const queries: ReceivedQuery[] = [];
  const timers = new Set<NodeJS.Timeout>();
  // Timers start from libuv's cached loop time, which may lag: re-arm until the delay truly passed.
  const later = (delayMs: number, fn: () => void, since = performance.now()) => {
    const remainingMs = delayMs - (performance.now() - since);
    if (remainingMs <= 0) return fn();
    const timer = setTimeout(() => {
      timers.delete(timer);
      later(delayMs, fn, since);
    }, remainingMs);
    timers.add(timer);
  };
  const handle = (bytes: Buffer, transport: 'UDP' | 'TCP', send: (answer: Buffer) => void) => {
    const atMs = performance.now();
    const packet = decode(bytes);
    queries.push({ transport, packet, atMs });
    const reply = script(packet, transport);
    if (reply.silent) return;
    if (reply.decoy) send(decoyBytes(packet, reply.decoy));
    later(reply.delayMs ?? 0, () => send(replyBytes(packet, reply)), atMs);
  };

  const udp: UdpSocket = createSocket(host === '::1' ? 'udp6' : 'udp4');
  udp.on('message', (bytes, from) =>
    handle(bytes, 'UDP', (answer) => udp.send(answer, from.port, from.address)),
  );
  await new Promise<void>((resolve) => udp.bind(port, host, resolve));

  const sockets = new Set<Socket>();
  const tcp: Server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const message = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + message.length);
        handle(message, 'TCP', (answer) => {
          const prefix = Buffer.alloc(2);
          prefix.writeUInt16BE(answer.length);
          if (!socket.destroyed) socket.write(Buffer.concat([prefix, answer]));
        });
      }
    });
  });
  await new Promise<void>((resolve) => tcp.listen(port, host, resolve));

  return {
    port,
    queries,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

/**
 * Asks with dig and returns its "Query time" in ms (dig prints whole milliseconds) and
 * return code: `dig @127.0.0.1 -p <port> <name> <type>`.
 */
export async function digQuery(
  port: number,
  name: string,
  type: string,
  extra: string[] = [],
): Promise<{ queryTimeMs: number; status: string; output: string }> {
  const { stdout } = await run('dig', [
    '@127.0.0.1',
    '-p',
    String(port),
    name,
    type,
    '+tries=1',
    '+time=5',
    ...extra,
  ]);
  const queryTime = /Query time: (\d+) msec/.exec(stdout)?.[1];
  const status = /status: ([A-Z0-9]+)/.exec(stdout)?.[1];
  if (queryTime === undefined || status === undefined) throw new Error(`unexpected dig output:\n${stdout}`);
  return { queryTimeMs: Number(queryTime), status, output: stdout };
}

/** SVCB/HTTPS record data (RFC 9460 §2.2): priority, uncompressed target, then key/length/value params. */
export function svcbRdata(priority: number, target: string, params: [number, Buffer][]): Buffer {
  const labels = target === '.' ? [] : target.replace(/\.$/, '').split('.');
  const name = Buffer.concat([
    ...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])),
    Buffer.from([0]),
  ]);
  const head = Buffer.alloc(2);
  head.writeUInt16BE(priority);
  const encoded = params.map(([key, value]) => {
    const kl = Buffer.alloc(4);
    kl.writeUInt16BE(key, 0);
    kl.writeUInt16BE(value.length, 2);
    return Buffer.concat([kl, value]);
  });
  return Buffer.concat([head, name, ...encoded]);
}

const CAA_RDATA = Buffer.concat([Buffer.from([0, 5]), Buffer.from('issue'), Buffer.from('letsencrypt.org')]);
const HTTPS_RDATA = svcbRdata(1, '.', [
  [1, Buffer.from('\x02h2\x02h3', 'latin1')],
  [3, Buffer.from([0x20, 0xfb])],
  [4, Buffer.from([192, 0, 2, 1])],
]);

/**
 * dnsmasq arguments for a test zone under `.test` (TTL 300): A/AAAA www, CNAME alias, MX, TXT
 * (two strings; one with quotes), SRV, PTR, CAA and HTTPS; unknown names are NXDOMAIN.
 */
export const EXAMPLE_ZONE = [
  '--local=/test/',
  '--local-ttl=300',
  '--host-record=www.example.test,192.0.2.10,2001:db8::10',
  '--cname=alias.example.test,www.example.test',
  '--mx-host=example.test,mail.example.test,10',
  '--txt-record=example.test,v=spf1 -all,second',
  '--txt-record=quoted.example.test,say "hi"',
  '--srv-host=_sip._udp.example.test,sip.example.test,5060,10,5',
  '--ptr-record=10.2.0.192.in-addr.arpa,www.example.test',
  `--dns-rr=example.test,257,${CAA_RDATA.toString('hex')}`,
  `--dns-rr=svc.example.test,65,${HTTPS_RDATA.toString('hex')}`,
];
