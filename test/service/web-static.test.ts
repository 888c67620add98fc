import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, type Service } from '../../src/service/app.js';
import { createAccount, createApiKey } from '../../src/service/http/auth.js';
import { type Database, openSqliteDatabase } from '../../src/service/store/database.js';
import {
  APP_CSP,
  defaultTraceViewerDir,
  inlineScriptHashes,
  traceViewerCsp,
} from '../../src/service/web/static.js';

// Issue 13, part A: the service serves the built web app at `/` (SPA fallback on the app's paths only),
// its hashed assets as immutable, a 503 page while it is not built, and playwright-core's trace viewer.

const INDEX =
  '<!doctype html><html lang="en"><head><title>Outpost</title></head><body><div id="app"></div></body></html>\n';
const ASSET = 'console.log("outpost");\n';

let db: Kysely<Database>;
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
  db = await openSqliteDatabase(':memory:');
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
  await db?.destroy();
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
    for (const path of [
      '/v1/nope',
      '/nope',
      '/checksx',
      '/status/some-page',
      '/status',
      '/index.html',
      '/assets',
    ]) {
      const res = await get(built, path);
      expect(res.statusCode, path).toBe(404);
      expect(res.headers['content-type'], path).toMatch(/^application\/json/);
      expect(res.json(), path).toMatchObject({
        statusCode: 404,
        attributes: { code: 'OUTPOST_ERR_NOT_FOUND' },
      });
    }
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
    expect(operations.filter((p) => !p.startsWith('/v1/') && p !== '/ping/{token}')).toEqual([]);
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
