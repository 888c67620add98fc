import { createHash } from 'node:crypto';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../../../src/protocol/index.js';
import { build, type Service } from '../../../../src/service/app.js';
import { createAccount, createApiKey } from '../../../../src/service/platform/http/auth.js';
import {
  APP_CSP,
  defaultTraceViewerDir,
  inlineScriptHashes,
  traceViewerCsp,
} from '../../../../src/service/platform/web/static.js';
import { CHROMIUM_PATH, chromiumRequirement, missingRequirement } from '../../../helpers/requirements.js';
import { testStore } from '../../../helpers/service.js';

// Issue 13, part A: the service serves the built web app at `/` (SPA fallback on the app's paths only),
// its hashed assets as immutable, a 503 page while it is not built, and playwright-core's trace viewer.

const INDEX =
  '<!doctype html><html lang="en"><head><title>Outpost</title></head><body><div id="app"></div></body></html>\n';
const ASSET = 'console.log("outpost");\n';

let store: Awaited<ReturnType<typeof testStore>>;
let built: Service;
let unbuilt: Service;
let appDir: string;
let apiKey: string;

beforeAll(async () => {
  appDir = mkdtempSync(join(tmpdir(), 'outpost-web-static-'));
  mkdirSync(join(appDir, 'assets'));
  writeFileSync(join(appDir, 'index.html'), INDEX);
  writeFileSync(join(appDir, 'assets', 'index-abc123.js'), ASSET);
  writeFileSync(join(appDir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  store = await testStore();
  const db = store.db;
  apiKey = await createApiKey(db, await createAccount(db, 'A'));
  built = await build({ db, log: pino({ level: 'silent' }), retention: false, appDir });
  await built.app.listen({ port: 0, host: '127.0.0.1' });
  unbuilt = await build({
    db,
    log: pino({ level: 'silent' }),
    retention: false,
    appDir: join(appDir, 'does-not-exist'),
  });
});

afterAll(async () => {
  await built?.close();
  await unbuilt?.close();
  await store?.drop();
  rmSync(appDir, { recursive: true, force: true });
});

function get(service: Service, url: string, method: 'GET' | 'HEAD' = 'GET') {
  return service.app.inject({ method, url });
}

/**
 * GET `path` over real HTTP, sent byte for byte (inject and fetch resolve `..` before the service sees it).
 * @returns the status and the body.
 */
async function rawGet(service: Service, path: string): Promise<{ status: number; body: string }> {
  const address = service.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening');
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: address.port, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function expectAppHeaders(res: { headers: Record<string, unknown> }): void {
  expect(res.headers).toMatchObject({
    'content-security-policy': APP_CSP,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
  });
}

describe('the web app', () => {
  it('answers index.html on / , /sign-in and every path of the app’s routes, with the CSP and no-cache', async () => {
    const paths = [
      '/',
      '/sign-in',
      '/checks',
      '/checks/',
      '/checks/0b3a/results/9f1e',
      '/checks?status=failing',
      '/accounts',
      '/private-locations/abc',
      '/agents',
      '/alert-channels/new',
      '/check-groups/12',
      '/incidents',
      '/status-pages/3/edit',
    ];
    for (const path of paths) {
      const res = await get(built, path);
      expect(res.statusCode, path).toBe(200);
      expect(res.headers['content-type'], path).toMatch(/^text\/html/);
      expect(res.headers['cache-control'], path).toBe('no-cache');
      expect(res.headers.etag, path).toBeDefined();
      expectAppHeaders(res);
      expect(res.body, path).toBe(INDEX);
    }
    const head = await get(built, '/checks/x', 'HEAD');
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toMatch(/^text\/html/);
    expect(head.body).toBe('');
  });

  it('answers 304 to a revalidation of index.html', async () => {
    const first = await get(built, '/');
    const again = await built.app.inject({
      method: 'GET',
      url: '/checks',
      headers: { 'if-none-match': String(first.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
  });

  it('serves hashed assets as immutable for a year, and the favicon', async () => {
    const asset = await get(built, '/assets/index-abc123.js');
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expectAppHeaders(asset);
    expect(asset.body).toBe(ASSET);
    const icon = await get(built, '/favicon.svg');
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['content-type']).toMatch(/^image\/svg\+xml/);
    const missing = await get(built, '/assets/nope.js');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().attributes.code).toBe('OUTPOST_ERR_NOT_FOUND');
  });

  it('leaves every other path to the API: JSON 404s, /v1, /openapi.json, /ping, /status', async () => {
    for (const path of ['/v1/nope', '/nope', '/checksx', '/status', '/index.html', '/assets']) {
      const res = await get(built, path);
      expect(res.statusCode, path).toBe(404);
      expect(res.headers['content-type'], path).toMatch(/^application\/json/);
      expect(res.json(), path).toMatchObject({
        statusCode: 404,
        attributes: { code: 'OUTPOST_ERR_NOT_FOUND' },
      });
    }
    // /status/{url} belongs to public status pages: an unknown one answers their 404 page, not the app.
    const statusPage = await get(built, '/status/some-page');
    expect(statusPage.statusCode).toBe(404);
    expect(statusPage.headers['content-type']).toMatch(/^text\/html/);
    expect(statusPage.body).not.toContain('<div id="app">');
    const unauthenticated = await get(built, '/v1/checks');
    expect(unauthenticated.statusCode).toBe(401);
    const api = await built.app.inject({
      method: 'GET',
      url: '/v1/checks',
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(api.statusCode).toBe(200);
    expect(api.headers['content-security-policy']).toBeUndefined();
    const openapi = await get(built, '/openapi.json');
    expect(openapi.statusCode).toBe(200);
    expect(openapi.json().openapi).toBe('3.1.0');
    // The session routes and the app's files are not API operations.
    const operations = Object.keys(openapi.json().paths as object);
    expect(
      operations.filter((p) =>
        /^\/(auth|assets|trace-viewer|favicon|sign-in|checks|accounts)\b|^\/$/.test(p),
      ),
    ).toEqual([]);
    expect(operations).toContain('/v1/checks');
    const ping = await get(built, '/ping/AAAAAAAAAAAAAAAAAAAAAA');
    expect(ping.statusCode).toBe(404);
    expect(ping.headers['content-security-policy']).toBeUndefined();
  });

  it('answers 503 HTML saying to run npm run build while the app is not built', async () => {
    for (const path of ['/', '/sign-in', '/checks/1']) {
      const res = await get(unbuilt, path);
      expect(res.statusCode, path).toBe(503);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expectAppHeaders(res);
      expect(res.body).toContain('npm run build');
      expect(res.body).toContain('<html lang="en">');
      expect(res.body).not.toContain(appDir);
    }
    expect((await get(unbuilt, '/assets/index-abc123.js')).statusCode).toBe(404);
    expect((await get(unbuilt, '/v1/nope')).statusCode).toBe(404);
  });

  it('refuses paths that leave the app’s folder', async () => {
    writeFileSync(join(appDir, 'secret.txt'), 'not an asset');
    for (const path of [
      '/assets/../secret.txt',
      '/assets/%2e%2e/secret.txt',
      '/assets/..%2fsecret.txt',
      '/assets/%2e%2e%2f%2e%2e%2fpackage.json',
      '/checks/../secret.txt',
    ]) {
      for (const res of [await get(built, path), await rawGet(built, path)]) {
        expect(res.body, path).not.toContain('not an asset');
        expect(res.body, path).not.toContain('"name": "outpost"');
        // /checks/… answers index.html, never the file.
        if (!path.startsWith('/checks/'))
          expect('status' in res ? res.status : res.statusCode, path).not.toBe(200);
      }
    }
  });
});

describe('the trace viewer', () => {
  const dir = defaultTraceViewerDir();

  it('is found in playwright-core', () => {
    expect(dir).not.toBeNull();
    expect(readFileSync(join(dir!, 'index.html'), 'utf8')).toContain('Trace Viewer');
  });

  it('serves index.html with its own CSP: inline script by hash, same-origin frames, no other origin', async () => {
    const res = await get(
      built,
      '/trace-viewer/index.html?trace=%2Fv1%2Fcheck-results%2Fa%2Fb%2Fartifacts%2Ftrace.zip',
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('Playwright Trace Viewer');
    const csp = String(res.headers['content-security-policy']);
    const hashes = inlineScriptHashes(res.body);
    expect(hashes.length).toBeGreaterThan(0);
    expect(csp).toBe(traceViewerCsp(hashes));
    for (const hash of hashes) expect(csp).toContain(`'sha256-${hash}'`);
    const directives = new Map(
      csp.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name!, values];
      }),
    );
    expect(directives.get('connect-src')).toEqual(["'self'"]);
    expect(directives.get('worker-src')).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'self'"]);
    expect(directives.get('default-src')).toEqual(["'self'"]);
    expect(directives.get('script-src')).not.toContain("'unsafe-inline'");
    expect(directives.get('script-src')).not.toContain("'unsafe-eval'");
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-cache');
  });

  it('hashes exactly the inline scripts', () => {
    const html = '<script type="module" src="./a.js"></script><script>alert(1)</script><script >\n</script>';
    expect(inlineScriptHashes(html)).toEqual([createHash('sha256').update('alert(1)').digest('base64')]);
  });

  it('serves its service worker (scope /trace-viewer/, no extra header needed), snapshot page and assets', async () => {
    const sw = await get(built, '/trace-viewer/sw.bundle.js');
    expect(sw.statusCode).toBe(200);
    expect(sw.headers['content-type']).toMatch(/javascript/);
    expect(sw.headers['service-worker-allowed']).toBeUndefined();
    // The worker's own CSP limits what it fetches: this origin only.
    expect(String(sw.headers['content-security-policy'])).toContain("connect-src 'self'");
    const snapshot = await get(built, '/trace-viewer/snapshot.html');
    expect(snapshot.statusCode).toBe(200);
    const indexJs = /src="\.\/(index\.[^"]+\.js)"/.exec(readFileSync(join(dir!, 'index.html'), 'utf8'))?.[1];
    expect(indexJs).toBeDefined();
    expect((await get(built, `/trace-viewer/${indexJs}`)).statusCode).toBe(200);
    expect((await get(built, '/trace-viewer/index.html', 'HEAD')).statusCode).toBe(200);
    const root = await get(built, '/trace-viewer/');
    expect(root.statusCode).toBe(200);
    expect(root.body).toContain('Playwright Trace Viewer');
    const bare = await get(built, '/trace-viewer?trace=x');
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe('/trace-viewer/?trace=x');
  });

  it('refuses traversal out of its folder', async () => {
    for (const path of [
      '/trace-viewer/../package.json',
      '/trace-viewer/%2e%2e/package.json',
      '/trace-viewer/..%2fpackage.json',
      '/trace-viewer/%2e%2e%2f%2e%2e%2f%2e%2e%2fpackage.json',
      '/trace-viewer/assets/../../package.json',
      '/trace-viewer/..\\package.json',
    ]) {
      for (const res of [await get(built, path), await rawGet(built, path)]) {
        expect('status' in res ? res.status : res.statusCode, path).not.toBe(200);
        expect(res.body, path).not.toContain('"name": "playwright-core"');
      }
    }
    expect((await get(built, '/trace-viewer/nope.js')).statusCode).toBe(404);
  });
});

/** Sends a JSON request with the API key to `base`; answers the parsed body. @throws Error on a status of 300 or more. */
async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(base + path, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

describe.skipIf(missingRequirement([chromiumRequirement()]))('the trace viewer in Chromium', () => {
  it('opens a result’s trace.zip with the session cookie and fetches nothing from another origin', async () => {
    // Another origin, counting what it is asked for.
    let hits: string[] = [];
    const other = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(req.url === '/style.css' ? 200 : 404, { 'content-type': 'text/css' });
      res.end('h1 { color: rebeccapurple }');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
    const traceDir = mkdtempSync(join(tmpdir(), 'outpost-trace-'));
    try {
      // A real trace of a page that loads a style sheet from the other origin.
      const recording = await browser.newContext();
      await recording.tracing.start({ screenshots: true, snapshots: true });
      const traced = await recording.newPage();
      await traced.setContent(
        `<link rel="stylesheet" href="${otherBase}/style.css"><h1>Hello from the trace</h1><button>Go</button>`,
      );
      await traced.click('button');
      await recording.tracing.stop({ path: join(traceDir, 'trace.zip') });
      await recording.close();
      expect(hits).toContain('/style.css');
      hits = [];

      // The trace as a result's artifact, uploaded as an agent does.
      const address = built.app.server.address() as AddressInfo;
      const base = `http://127.0.0.1:${address.port}`;
      const check = await api(base, 'POST', '/v1/checks/api', {
        name: 'api',
        activated: false,
        doubleCheck: false,
        request: { url: 'https://api.example.test/health' },
      });
      const trigger = await api(base, 'POST', '/v1/check-sessions/trigger', {
        target: { checkId: [check.id] },
      });
      const agent = '7d3f1c2b-4a5e-4f60-8b7c-9d0e1f2a3b4c';
      const claim = await api(
        base,
        'POST',
        '/v1/agent/jobs/claim',
        {
          agentVersion: '0.0.0-test',
          protocolVersion: PROTOCOL_VERSION,
          checkTypes: ['API'],
          runtimes: ['2026.04'],
          freeSlots: { uptime: 1, main: 1 },
          waitSeconds: 0,
        },
        { 'x-agent-id': agent },
      );
      const job = claim.jobs[0];
      const zip = readFileSync(join(traceDir, 'trace.zip'));
      const upload = await fetch(`${base}/v1/agent/jobs/${job.jobId}/artifacts/trace.zip`, {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'x-agent-id': agent,
          'content-type': 'application/octet-stream',
        },
        body: zip,
      });
      expect(upload.status).toBe(201);
      const now = new Date().toISOString();
      await api(
        base,
        'POST',
        `/v1/agent/jobs/${job.jobId}/result`,
        {
          status: 'PASSED',
          hasFailures: false,
          hasErrors: false,
          isDegraded: false,
          overMaxResponseTime: false,
          responseTime: 1,
          startedAt: now,
          stoppedAt: now,
          errorMessage: null,
          assertions: [],
          logs: [],
          runLocation: job.runLocation,
          attempts: job.attempt,
          resultType: 'FINAL',
          artifacts: [{ name: 'trace.zip', sizeBytes: zip.length }],
        },
        { 'x-agent-id': agent },
      );
      const session = await api(base, 'GET', `/v1/check-sessions/${trigger.sessions[0].checkSessionId}`);
      const traceUrl = `/v1/check-results/${check.id}/${session.results[0].id}/artifacts/trace.zip`;

      // A browser signs in (the cookie only: no key in the page) and opens the viewer.
      const context = await browser.newContext();
      const page = await context.newPage();
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      await page.goto(`${base}/sign-in`);
      const status = await page.evaluate(async (key) => {
        const res = await fetch('/auth/session', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ apiKey: key }),
        });
        return res.status;
      }, apiKey);
      expect(status).toBe(200);
      await page.goto(`${base}/trace-viewer/index.html?trace=${encodeURIComponent(traceUrl)}`);
      // The DOM snapshot of the click, rendered from the trace in the viewer's iframe.
      await expect
        .poll(
          async () => {
            for (const frame of page.frames()) {
              const text = await frame
                .locator('body')
                .innerText({ timeout: 1000 })
                .catch(() => '');
              if (text.includes('Hello from the trace')) return true;
            }
            return false;
          },
          { timeout: 20_000 },
        )
        .toBe(true);
      // The action list shows the recorded click.
      expect(await page.getByText("locator('button')").count()).toBeGreaterThan(0);
      expect(violations).toEqual([]);
      // The style sheet came out of the trace, not from its origin.
      expect(hits).toEqual([]);

      // A trace URL of another origin: the viewer's CSP stops its service worker.
      await page.goto(`${base}/trace-viewer/index.html?trace=${encodeURIComponent(`${otherBase}/evil.zip`)}`);
      await expect.poll(() => violations.length, { timeout: 10_000 }).toBeGreaterThan(0);
      expect(violations.join('\n')).toContain("connect-src 'self'");
      expect(hits).toEqual([]);
      await context.close();
    } finally {
      await browser.close();
      other.close();
      rmSync(traceDir, { recursive: true, force: true });
    }
  }, 60_000);
});
