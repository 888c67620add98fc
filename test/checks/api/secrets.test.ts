import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorReporter } from '../../../src/agent/error-reporter.js';
import { createApiExecutor } from '../../../src/checks/api/index.js';
import type { ExecutorContext } from '../../../src/checks/executor.js';
import type { Assertion, Job, JobScript } from '../../../src/protocol/index.js';
import { ScriptSandbox } from '../../../src/sandbox/sandbox.js';
import { base64Fragments, expectNoSecret } from '../../helpers/secrets.js';
import { refusedPort } from '../../helpers/http-servers.js';
import { jobOf } from '../../helpers/jobs.js';
import { apiRequest } from '../../helpers/api-request.js';

const assertion = (
  source: Assertion['source'],
  comparison: Assertion['comparison'],
  target = '',
  property = '',
): Assertion => ({ source, comparison, target, property, regex: null });

/** A context whose logger writes every agent log line into `lines`. */
function recordingContext(): { context: ExecutorContext; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { context: { signal: new AbortController().signal, log: pino({ level: 'debug' }, stream) }, lines };
}

/** Every encoding a server may echo `secret` in. */
function echoes(secret: string): string[] {
  const strict = encodeURIComponent(secret).replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16)}`);
  return [
    strict,
    strict.toUpperCase(),
    strict.toLowerCase(),
    // Every character percent-encoded, lower hex.
    [...Buffer.from(secret)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''),
    new URLSearchParams({ q: secret }).toString().slice(2),
    secret.toLowerCase(),
    secret.toUpperCase(),
    JSON.stringify(secret).replace(
      /[<>&~]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`,
    ),
    [...secret].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
    [...secret].map((c) => `&#${c.charCodeAt(0)};`).join(''),
    ...[0, 1, 2].map((shift) =>
      Buffer.concat([Buffer.alloc(shift, 0x41), Buffer.from(secret)]).toString('base64'),
    ),
    ...[0, 1, 2].map((shift) =>
      Buffer.concat([Buffer.alloc(shift, 0x41), Buffer.from(secret)]).toString('base64url'),
    ),
  ];
}

describe('expectNoSecret (the helper the secret tests rely on)', () => {
  const secret = 'Tr1cky~Secret value<&>!';
  it.each(echoes(secret).map((form) => [form]))('finds the secret as %s', (form) => {
    expect(() => expectNoSecret(`before ${form} after`, secret)).toThrow();
  });
  it('finds a 13-character prefix and passes clean text', () => {
    expect(() => expectNoSecret(`cut: ${secret.slice(0, 13)}…`, secret)).toThrow();
    expectNoSecret('nothing here *****', secret);
    expect(base64Fragments(secret).length).toBeGreaterThanOrEqual(3);
  });
});

describe('secrets never leave the API executor in any encoding', () => {
  const secret = 'Pl4nted~Secret value<&>!';
  const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  const received = new Map<string, IncomingMessage['headers'][]>();
  let server: Server;
  let other: Server;
  let origin: string;
  let otherOrigin: string;
  const executor = createApiExecutor();

  const listen = async (handler: (req: IncomingMessage, res: ServerResponse) => void) => {
    const s = createServer(handler);
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return { s, origin: `http://127.0.0.1:${(s.address() as AddressInfo).port}` };
  };

  beforeAll(async () => {
    const handler = (prefix: string) => (req: IncomingMessage, res: ServerResponse) => {
      const path = `${prefix}${new URL(req.url ?? '/', 'http://x').pathname}`;
      received.set(path, [...(received.get(path) ?? []), req.headers]);
      const route = routes.get(path);
      if (route) route(req, res);
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    };
    ({ s: server, origin } = await listen(handler('a')));
    ({ s: other, origin: otherOrigin } = await listen(handler('b')));
  });
  afterAll(async () => {
    await executor.close();
    await Promise.all([server, other].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  });

  const secretJob = (request: Record<string, unknown>): Job => ({
    ...jobOf('API', request, { timeoutMs: 10_000 }),
    environmentVariables: [{ key: 'TOKEN', value: secret, secret: true }],
  });

  it('a body and headers echoing the secret in every encoding, and a header named by it, are scrubbed', async () => {
    routes.set('a/echo-all', (_req, res) => {
      res.setHeader(`x-${secret.toLowerCase().replace(/[^a-z0-9]/g, '')}`, 'named');
      res.setHeader('x-echo', encodeURIComponent(secret));
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(echoes(secret).join('\n'));
    });
    const { context, lines } = recordingContext();
    const outcome = await executor.run(
      secretJob(
        apiRequest(`${origin}/echo-all?t={{TOKEN}}`, {
          headers: [{ key: 'x-sent', value: '{{TOKEN}}' }],
          assertions: [
            assertion('TEXT_BODY', 'EQUALS', 'no'),
            assertion('HEADERS', 'EQUALS', 'no', 'x-echo'),
          ],
        }),
      ),
      context,
    );
    expect(received.get('a/echo-all')!.at(-1)!['x-sent']).toBe(secret);
    expect(outcome.status).toBe('FAILED');
    expectNoSecret(JSON.stringify(outcome), secret);
    expectNoSecret(lines.join('\n'), secret);
  });

  it.each([
    [
      'a JSON value cut at 200 characters',
      (pad: number) => JSON.stringify({ v: `${'x'.repeat(pad)}${secret}` }),
    ],
    ['a text body cut at 1 MiB', (pad: number) => `${'y'.repeat(1024 * 1024 - pad)}${secret}`],
  ])('%s leaves no start of the secret at the cut', async (name, body) => {
    for (const pad of [185, 190, 195, 199, 13, 5]) {
      routes.set('a/cut', (_req, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(body(pad)),
      );
      const { context, lines } = recordingContext();
      const outcome = await executor.run(
        secretJob(
          apiRequest(`${origin}/cut`, { assertions: [assertion('JSON_BODY', 'EQUALS', 'no', '$.v')] }),
        ),
        context,
      );
      expect(outcome.status, name).toBe('FAILED');
      expectNoSecret(JSON.stringify(outcome), secret);
      expectNoSecret(lines.join('\n'), secret);
    }
  });

  it('a host name holding the secret, lower-cased in a resolution error, is scrubbed', async () => {
    // Resolution through a refused loopback name server: nothing leaves the machine.
    const local = createApiExecutor({ dnsServers: [`127.0.0.1:${await refusedPort()}`] });
    try {
      const hostSecret = 'HostSecretLabel42';
      const { context, lines } = recordingContext();
      const outcome = await local.run(
        {
          ...jobOf('API', apiRequest('http://{{HOST}}.example.test/'), { timeoutMs: 5000 }),
          environmentVariables: [{ key: 'HOST', value: hostSecret, secret: true }],
        },
        context,
      );
      expect(outcome.status).toBe('FAILED');
      expectNoSecret(JSON.stringify(outcome), hostSecret);
      expectNoSecret(lines.join('\n'), hostSecret);
    } finally {
      await local.close();
    }
  });

  it.each([
    ['password', 'pa%ss-word-Secret1'],
    ['password', 'pass-%zz-Secret12'],
    ['password', 'pass-%E0%A4%A-Secret'],
    ['password', 'trailing-Secret-%'],
    ['user', 'us%er-Secret-name'],
  ])(
    'a URL %s with a malformed escape (%s) is a result, not a crash, and is scrubbed',
    async (part, value) => {
      const userinfo = part === 'password' ? `alice:${value}` : `${value}:pw-secret-777`;
      const { context, lines } = recordingContext();
      const outcome = await executor.run(
        jobOf('API', apiRequest(`http://${userinfo}@127.0.0.1:${new URL(origin).port}/x`)),
        context,
      );
      expect(['PASSED', 'FAILED']).toContain(outcome.status);
      expectNoSecret(JSON.stringify(outcome), value);
      expectNoSecret(lines.join('\n'), value);
    },
  );

  const CREDENTIALS = [
    ['Authorization', 'Bearer cred-authorization-1'],
    ['Cookie', 'sid=cred-cookie-2'],
    ['Proxy-Authorization', 'Basic cred-proxy-3'],
    ['x-api-key', 'cred-api-key-4'],
    ['X-Auth-Token', 'cred-auth-token-5'],
  ] as const;

  it('a cross-origin redirect drops every credential header, for the rest of the chain (A→B→A)', async () => {
    routes.set('a/start', (_req, res) => res.writeHead(302, { location: `${otherOrigin}/hop` }).end());
    routes.set('b/hop', (_req, res) => res.writeHead(307, { location: `${origin}/back` }).end());
    routes.set('a/back', (_req, res) => res.writeHead(200).end('done'));
    const { context, lines } = recordingContext();
    const outcome = await executor.run(
      jobOf(
        'API',
        apiRequest(`${origin}/start`, { headers: CREDENTIALS.map(([key, value]) => ({ key, value })) }),
      ),
      context,
    );
    expect(outcome.status).toBe('PASSED');
    expect(outcome.httpCheckResult!.redirects).toHaveLength(2);
    const first = received.get('a/start')!.at(-1)!;
    for (const [key, value] of CREDENTIALS) expect(first[key.toLowerCase()]).toBe(value);
    for (const path of ['b/hop', 'a/back']) {
      const headers = received.get(path)!.at(-1)!;
      for (const [key] of CREDENTIALS)
        expect(headers[key.toLowerCase()], `${key} sent to ${path}`).toBeUndefined();
    }
    for (const [, value] of CREDENTIALS) {
      expectNoSecret(JSON.stringify(outcome), value.split(/[ =]/).at(-1)!);
      expectNoSecret(lines.join('\n'), value.split(/[ =]/).at(-1)!);
    }
  });

  it('a same-origin redirect keeps the credential headers', async () => {
    routes.set('a/same', (_req, res) => res.writeHead(302, { location: '/same-end' }).end());
    const outcome = await executor.run(
      jobOf(
        'API',
        apiRequest(`${origin}/same`, { headers: CREDENTIALS.map(([key, value]) => ({ key, value })) }),
      ),
      contextOfSilent(),
    );
    expect(outcome.status).toBe('PASSED');
    const headers = received.get('a/same-end')!.at(-1)!;
    for (const [key, value] of CREDENTIALS) expect(headers[key.toLowerCase()]).toBe(value);
  });
});

function contextOfSilent(): ExecutorContext {
  return { signal: new AbortController().signal, log: pino({ level: 'silent' }) };
}

describe('the agent log of a run with a setup script', () => {
  let sandbox: ScriptSandbox;
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    sandbox = new ScriptSandbox({ poolSize: 1 });
    await sandbox.warm('2026.04');
    server = createServer((_req, res) => res.writeHead(200).end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await sandbox.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('never carries a credential a setup script printed before it became a header', async () => {
    const token = 'minted-Token-Value-9182';
    const setup: JobScript = {
      source: 'LOCAL',
      snippetId: null,
      name: 'setup script',
      code: `const t = ${JSON.stringify(token)}; console.log('minted', t, encodeURIComponent(t).toLowerCase(), Buffer.from('x' + t).toString('base64')); request.headers['x-api-key'] = t; request.headers.Authorization = 'Bearer ' + t;`,
    };
    const executor = createApiExecutor({ scripts: sandbox, scriptTimeoutMs: 5000 });
    const { context, lines } = recordingContext();
    const outcome = await executor.run(
      { ...jobOf('API', apiRequest(`${origin}/`), { timeoutMs: 15_000 }), setupScript: setup },
      context,
    );
    expect(outcome.status).toBe('PASSED');
    expect(lines.some((l) => l.includes('minted'))).toBe(true);
    expectNoSecret(lines.join('\n'), token);
    expectNoSecret(JSON.stringify(outcome), token);
  });
});

describe('error reports', () => {
  it('never carry the agent key in any encoding', () => {
    const apiKey = 'pl_Agent-Key~Secret-0123456789';
    const reporter = new ErrorReporter({
      client: { postEvent: async () => {} },
      enabled: false,
      apiKey,
      logger: pino({ level: 'silent' }),
    });
    const error = new Error(`failed with ${echoes(apiKey).join(' | ')}`);
    const event = reporter.toEvent(error);
    expectNoSecret(JSON.stringify(event), apiKey);
    // Cut at the message limit: no start of the key left at the cut.
    const cut = reporter.toEvent(new Error(`${'z'.repeat(4096 - 13)}${apiKey}`));
    expectNoSecret(JSON.stringify(cut), apiKey);
  });
});
