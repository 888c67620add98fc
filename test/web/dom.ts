/**
 * The harness of the web app's component tests (project `web-dom` of vitest.config.ts, jsdom): a real HTTP
 * server on loopback that answers the API routes a test gives and records every request, and a fetch that
 * sends the app's same-origin paths (`/v1/checks`) to it. No module is mocked: the pages call the typed
 * functions of app/src/api, which call the real fetch.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { act, cleanup, render } from '@testing-library/preact';
import { h, type VNode } from 'preact';
import { LocationProvider } from 'preact-iso';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { SessionInfo } from '../../app/src/api/session.js';
import { SessionContext } from '../../app/src/ui/permissions.js';

/** One request the server received: method, path with query, headers, and the parsed JSON body. */
export type Received = {
  method: string;
  url: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: unknown;
};

/** What a route answers: a status, a JSON body (undefined: none) and headers of its own (`etag`…). */
export type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

/**
 * A route's answer, or a function of the request giving it (or a promise of it: an answer held back until the
 * test lets it go) (`GET /v1/checks/abc` → `'GET /v1/checks/abc'`).
 */
export type Routes = Record<string, Answer | ((request: Received) => Answer | Promise<Answer>)>;

/** A loopback API server. */
export type ApiServer = {
  origin: string;
  /** Every request, oldest first. */
  received: Received[];
  /** Adds or replaces routes. */
  route: (routes: Routes) => void;
  /** The requests of `METHOD /path` (query left out). */
  requests: (key: string) => Received[];
  close: () => Promise<void>;
};

const realFetch = globalThis.fetch;

/**
 * Starts the API server with `routes` (`'METHOD /path'`, query left out) and points the app's fetch at it;
 * a request without a route answers 404 with the service's error body.
 */
export async function startApi(routes: Routes = {}): Promise<ApiServer> {
  const table: Routes = { ...routes };
  const received: Received[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://x');
    const request: Received = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: text ? JSON.parse(text) : undefined,
    };
    received.push(request);
    const handler = table[`${request.method} ${request.path}`];
    const answer: Answer =
      typeof handler === 'function'
        ? await handler(request)
        : (handler ?? {
            status: 404,
            body: {
              statusCode: 404,
              error: 'Not Found',
              message: `no route ${request.method} ${request.path}`,
            },
          });
    if (answer.body === undefined) {
      res.writeHead(answer.status, answer.headers).end();
      return;
    }
    res
      .writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
      .end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The app fetches same-origin paths; in jsdom they are sent to the loopback server.
  globalThis.fetch = (input, init) =>
    realFetch(new URL(input instanceof Request ? input.url : String(input), origin), init);
  return {
    origin,
    received,
    route: (more) => Object.assign(table, more),
    requests: (key) => received.filter((r) => `${r.method} ${r.path}` === key),
    close: async () => {
      globalThis.fetch = realFetch;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The address the app is at when it renders (preact-iso reads it). */
export function visit(path: string): void {
  window.history.replaceState(null, '', path);
}

/**
 * Starts the API server before the file's tests and closes it after them; before each test it forgets the
 * requests received and (re)sets the routes `defaults()` gives (routes a test added stay unless they are
 * among them). Call it at the top of a test file; the server it answers is live inside tests only.
 */
export function serveApi(defaults: () => Routes = () => ({})): ApiServer {
  let server: ApiServer | undefined;
  const live = (): ApiServer => {
    if (!server) throw new Error('the API server runs only inside tests (serveApi starts it in beforeAll)');
    return server;
  };
  beforeAll(async () => {
    server = await startApi();
  });
  afterAll(() => server?.close());
  beforeEach(() => {
    live().received.length = 0;
    live().route(defaults());
  });
  return {
    get origin() {
      return live().origin;
    },
    get received() {
      return live().received;
    },
    route: (routes) => live().route(routes),
    requests: (key) => live().requests(key),
    close: () => live().close(),
  };
}

/**
 * The service's 400 answer to a body that fails validation (docs/errors.md): `message`, and the dotted
 * path of the offending `field` (`request.url`, `incidentUpdates[0].description`) in its attributes.
 */
export function validationError(message: string, field: string): Answer {
  return {
    status: 400,
    body: {
      statusCode: 400,
      error: 'Bad Request',
      message,
      attributes: { code: 'OUTPOST_ERR_VALIDATION', field },
    },
  };
}

/** A signed-in session of `role`, as `GET /auth/session` answers it (an API key's session). */
export function sessionOf(role: SessionInfo['role']): SessionInfo {
  return {
    accountId: 'acc-1',
    accountName: 'Test account',
    csrfToken: 'csrf-token',
    expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    keyPrefix: 'op_test',
    user: null,
    role,
  };
}

/**
 * Renders `page` (a feature's page component) inside the router, with the address at `path`, for a session
 * of `role` (OWNER unless told: every control shown), as the app provides it (ui/permissions.tsx).
 */
export function renderRoute(
  path: string,
  page: VNode,
  role: SessionInfo['role'] = 'OWNER',
): ReturnType<typeof render> {
  visit(path);
  return render(h(SessionContext.Provider, { value: sessionOf(role) }, h(LocationProvider, null, page)));
}

// Unmounts inside act(): Preact 11 runs an unmounted component's effect cleanups (removeEventListener,
// clearTimeout) after the next frame, and after a file's last test that frame can come when jsdom's window
// is gone ("window is not defined", an unhandled error that fails the run). act() runs them at once.
afterEach(() => act(() => cleanup()));
