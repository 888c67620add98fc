import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { KeyPair } from './test-ca.js';

/** A request as the test API server saw it. */
export type SeenRequest = {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Subject CN of the client certificate presented (mTLS), or null. */
  clientCertificate: string | null;
};

/**
 * A JSON API on 127.0.0.1:0 for API-check tests:
 *
 * - `/echo` → 200 JSON of the request (method, path, query, headers, body), `x-request-id: 42`
 * - `/items` → 200 `{ items: [{id, price}…], total, name, empty: [], nothing: null, nested: {…} }`
 * - `/binary` → 200 application/octet-stream, 1 KiB of bytes 0–255
 * - `/bytes/{n}` → 200 text/plain, n bytes of `a` in 64 KiB chunks
 * - `/see-other` → 303 to `/echo`; `/temporary` → 307 to `/echo`
 * - `/status/{code}` → that status with a JSON body
 * - `/cookie` → 200 with `set-cookie: session=<planted value>`
 *
 * With `tls` it is HTTPS; with `requireClientCert` (and `ca`) it demands a client certificate
 * signed by `ca` and answers 401 without one reaching the handler.
 */
export type TestApiServer = {
  origin: string;
  port: number;
  readonly requests: SeenRequest[];
  close(): Promise<void>;
};

export async function startApiServer(
  options: { tls?: KeyPair; ca?: string; requireClientCert?: boolean; cookieValue?: string } = {},
): Promise<TestApiServer> {
  const requests: SeenRequest[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://test');
      const socket = req.socket as TLSSocket;
      const peer = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : null;
      const seen: SeenRequest = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        clientCertificate: peer && typeof peer.subject?.CN === 'string' ? peer.subject.CN : null,
      };
      requests.push(seen);
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        const text = JSON.stringify(value);
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(text);
      };
      const [, route = '', arg = ''] = url.pathname.split('/');
      switch (route) {
        case 'echo':
          return json(200, seen, { 'x-request-id': '42' });
        case 'items':
          return json(200, {
            items: [
              { id: 1, price: 10, tags: ['a'] },
              { id: 2, price: 20, tags: [] },
              { id: 3, price: 30, tags: ['b', 'c'] },
            ],
            total: 3,
            name: 'outpost',
            empty: [],
            nothing: null,
            nested: { ok: true, version: '1.2.3' },
          });
        case 'binary': {
          const bytes = Buffer.alloc(1024);
          for (let i = 0; i < bytes.length; i++) bytes[i] = i % 256;
          res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(bytes);
          return;
        }
        case 'bytes': {
          let left = Number(arg);
          res.writeHead(200, { 'content-type': 'text/plain', 'content-length': left });
          const chunk = Buffer.alloc(65_536, 0x61);
          const write = () => {
            while (left > 0) {
              const part = chunk.subarray(0, Math.min(left, chunk.length));
              left -= part.length;
              if (!res.write(part)) return void res.once('drain', write);
            }
            res.end();
          };
          res.on('error', () => {});
          write();
          return;
        }
        case 'see-other':
          res.writeHead(303, { location: '/echo' }).end();
          return;
        case 'temporary':
          res.writeHead(307, { location: '/echo' }).end();
          return;
        case 'status':
          return json(Number(arg), { status: Number(arg) });
        case 'cookie':
          return json(
            200,
            { ok: true },
            { 'set-cookie': `session=${options.cookieValue ?? 'c00kie'}; HttpOnly` },
          );
        default:
          return json(404, { error: 'not found' });
      }
    });
  };
  const server = options.tls
    ? createHttpsServer(
        {
          ...options.tls,
          ...(options.ca ? { ca: options.ca } : {}),
          requestCert: options.requireClientCert ?? false,
          rejectUnauthorized: options.requireClientCert ?? false,
        },
        handler,
      )
    : createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
