import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import {
  type AddressInfo,
  createServer as createNetServer,
  type Server as NetServer,
  type Socket,
} from 'node:net';
import type { TLSSocket } from 'node:tls';
import { createInterface } from 'node:readline';
import type { KeyPair } from './test-ca.js';

/**
 * A real HTTP or HTTPS server on 127.0.0.1:0 (or ::1) that misbehaves on request:
 *
 * - `/` → 200 `ok`
 * - `/status/{code}` → that status
 * - `/redirect/{n}` → 302 to `/redirect/{n-1}`, `/redirect/0` → 200
 * - `/redirect-to?location=…` → 302 to that Location (absolute or relative)
 * - `/delay/{ms}` → waits ms, then headers and body in one write (first byte after ms)
 * - `/stall-headers` → never answers
 * - `/stall-body` → headers and 5 of 10 body bytes, then nothing
 * - `/bytes/{n}` → n body bytes
 * - `/secrets` → set-cookie, x-api-key, authorization and x-plain headers
 */
export type TestHttpServer = {
  /** `http://127.0.0.1:{port}` or `https://…`, without trailing slash. */
  origin: string;
  port: number;
  /** Requests received, by path. */
  readonly paths: string[];
  /** TLS connections accepted, and how many of them resumed a session. */
  readonly tls: { handshakes: number; resumed: number };
  /** Closes the server and every connection, stalled ones included. */
  close(): Promise<void>;
};

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://test');
  const [, route = '', arg = ''] = url.pathname.split('/');
  switch (route) {
    case '':
      res.end('ok');
      return;
    case 'status': {
      res.statusCode = Number(arg);
      res.end(`status ${arg}`);
      return;
    }
    case 'redirect': {
      const left = Number(arg);
      if (left <= 0) return void res.end('done');
      res.writeHead(302, { location: `/redirect/${left - 1}` }).end();
      return;
    }
    case 'redirect-to':
      res.writeHead(302, { location: url.searchParams.get('location') ?? '/' }).end();
      return;
    case 'delay': {
      const body = 'delayed';
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length }).end(body);
      }, Number(arg));
      return;
    }
    case 'stall-headers':
      return;
    case 'stall-body':
      res.writeHead(200, { 'content-length': 10 });
      res.write('12345');
      return;
    case 'bytes':
      res.writeHead(200, { 'content-length': Number(arg) }).end(Buffer.alloc(Number(arg), 0x61));
      return;
    case 'secrets':
      res.setHeader('set-cookie', ['session=abc; HttpOnly', 'theme=dark']);
      res.setHeader('x-api-key', 'key-123');
      res.setHeader('authorization', 'Bearer token-456');
      res.setHeader('x-plain', 'visible');
      res.end('secrets');
      return;
    default:
      res.statusCode = 404;
      res.end('not found');
  }
}

async function listen(server: Server | NetServer, host: string): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as AddressInfo).port;
}

/** Starts a test HTTP server; with `tls` an HTTPS one (see TestHttpServer for its routes). */
export async function startHttpServer(
  options: { tls?: KeyPair; host?: string } = {},
): Promise<TestHttpServer> {
  const paths: string[] = [];
  const tls = { handshakes: 0, resumed: 0 };
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    paths.push(new URL(req.url ?? '/', 'http://test').pathname);
    handle(req, res);
  };
  const server = options.tls ? createHttpsServer({ ...options.tls }, onRequest) : createHttpServer(onRequest);
  server.on('secureConnection', (socket: TLSSocket) => {
    tls.handshakes += 1;
    if (socket.isSessionReused()) tls.resumed += 1;
  });
  const host = options.host ?? '127.0.0.1';
  const port = await listen(server, host);
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    origin: `${options.tls ? 'https' : 'http'}://${shownHost}:${port}`,
    port,
    paths,
    tls,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * How a test TCP server treats a connection: `echo` echoes and stays open, `echo-close`
 * echoes the first chunk and closes, `banner` greets with `banner` and stays open, `silent`
 * reads and never answers, `close` closes at once.
 */
export type TcpServerMode = 'echo' | 'echo-close' | 'banner' | 'silent' | 'close';

/** A test TCP server on 127.0.0.1:0; `received` holds what each connection sent, as text. */
export type TestTcpServer = { port: number; received: string[]; close(): Promise<void> };

/** Starts a TCP server on 127.0.0.1 (or `host`) behaving as `mode`. */
export async function startTcpServer(
  mode: TcpServerMode,
  options: { banner?: string; host?: string } = {},
): Promise<TestTcpServer> {
  const sockets = new Set<Socket>();
  const received: string[] = [];
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    const index = received.push('') - 1;
    socket.on('data', (chunk) => {
      received[index] += chunk.toString('utf8');
      if (mode === 'echo') socket.write(chunk);
      if (mode === 'echo-close') socket.end(chunk);
    });
    if (mode === 'banner') socket.write(options.banner ?? 'HELLO outpost\r\n');
    if (mode === 'close') socket.end();
  });
  const port = await listen(server, options.host ?? '127.0.0.1');
  return {
    port,
    received,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port nothing listens on (bound, then released): connecting to it is refused. */
export async function refusedPort(host = '127.0.0.1'): Promise<number> {
  const server = createNetServer();
  const port = await listen(server, host);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The server of {@link spawnHttpServer}: CommonJS for `node -e`, no dependencies. */
const CHILD_SERVER = `
const tls = process.env.TLS_KEY !== undefined;
const { createServer } = require(tls ? 'node:https' : 'node:http');
const options = tls ? { key: process.env.TLS_KEY, cert: process.env.TLS_CERT } : {};
const server = createServer(options, (req, res) => {
  const delay = /^\\/delay\\/(\\d+)/.exec(req.url);
  const send = () => res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 }).end('ok');
  // Atomics.wait blocks for the delay with futex precision; timers would add their own jitter.
  if (delay) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(delay[1]));
  send();
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
process.stdin.on('end', () => process.exit(0)).resume();
`;

/**
 * A test HTTP(S) server in its own process: `/` answers 200 `ok`, `/delay/{ms}` after ms. The
 * delay blocks the server, which is what a timing test wants: one request at a time, exactly late.
 */
export type ChildHttpServer = { origin: string; port: number; close(): Promise<void> };

/**
 * Starts an HTTP server (HTTPS with `tls`) in a child node process, so that what it serves is
 * not delayed by the test's own event loop (timing comparisons with curl). It exits when the
 * test process goes away (its stdin closes) or on close().
 */
export async function spawnHttpServer(options: { tls?: KeyPair } = {}): Promise<ChildHttpServer> {
  const env = {
    ...process.env,
    ...(options.tls ? { TLS_KEY: options.tls.key, TLS_CERT: options.tls.cert } : {}),
  };
  const child = spawn(process.execPath, ['-e', CHILD_SERVER], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const [line] = (await Promise.race([once(lines, 'line'), once(child, 'exit')])) as [string];
  const port = Number(line);
  if (!Number.isInteger(port) || port <= 0)
    throw new Error(`the child HTTP server did not start: ${String(line)}`);
  return {
    origin: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    async close() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.stdin.end();
      await exited;
    },
  };
}
