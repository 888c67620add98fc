import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzip } from '../browser/formats.js';
import {
  type apiClient,
  awaitSession,
  type CliProcess,
  freePort,
  type ServiceProcess,
  spawnCli,
  startServiceProcess,
  stopCli,
} from '../helpers/cli.js';
import { chromiumRequirement, missingRequirement, runtimeRequirement } from '../helpers/requirements.js';
import { expectNoSecret } from '../helpers/secrets.js';

// The whole path of a browser check: created over HTTP, started as a check session, claimed and run
// by a real agent process (warm Chromium, runner child), its trace scrubbed and uploaded, its
// result stored and read back with the artifact downloaded.

const apiKey = `op_e2e_${'c'.repeat(40)}`;
const SECRET = 'Br0wser-s3cret/Passw0rd!77';

const missing = missingRequirement([chromiumRequirement(), runtimeRequirement('2026.04')]);

/** A loopback site: a sign-in form whose POST answers a page titled by the user name, and a cookie. */
async function startSite(): Promise<{ url: string; server: Server; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    if (req.method === 'POST') {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        bodies.push(body);
        const user = new URLSearchParams(body).get('user') ?? '';
        res.writeHead(200, { 'content-type': 'text/html', 'set-cookie': `session=${SECRET}; Path=/` });
        res.end(`<!doctype html><title>Welcome ${user.replace(/[<&]/g, '')}</title><h1>Signed in</h1>`);
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      '<!doctype html><title>Sign in</title><form method="post" action="/login">' +
        '<label>User <input name="user" id="user"></label>' +
        '<label>Password <input type="password" name="password" id="password"></label>' +
        '<button type="submit">Sign in</button></form>',
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, bodies };
}

describe.skipIf(missing !== null)('browser checks end to end (service + agent processes)', () => {
  let service: ServiceProcess;
  let api: ReturnType<typeof apiClient>;
  let agent: CliProcess;
  let site: Awaited<ReturnType<typeof startSite>>;

  beforeAll(async () => {
    site = await startSite();
    service = await startServiceProcess(apiKey, { LOG_LEVEL: 'WARN' });
    api = service.api;
    agent = spawnCli(['agent'], {
      API_KEY: apiKey,
      SERVICE_URL: service.url,
      AGENT_HEALTH_PORT: String(await freePort()),
      LOG_LEVEL: 'INFO',
      AGENT_CLAIM_WAIT_SECONDS: '1',
      BROWSER_CONCURRENCY: '1',
    });
  }, 60_000);

  afterAll(async () => {
    await stopCli(agent);
    await service?.stop();
    site?.server.close();
  });

  async function runCheck(script: string): Promise<{ checkId: string; result: any }> {
    const created = await api('POST', '/v1/checks/browser', {
      name: 'sign in',
      activated: false,
      script,
      timeoutSeconds: 60,
      environmentVariables: [
        { key: 'SITE_URL', value: site.url },
        { key: 'PASSWORD', value: SECRET, secret: true },
      ],
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const checkId = created.json.id as string;
    const started = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
    expect(started.status).toBe(201);
    const session = await awaitSession(api, started.json.sessions[0].checkSessionId, 120_000);
    const [listed] = (await api('GET', `/v1/check-results/${checkId}`)).json;
    const result = (await api('GET', `/v1/check-results/${checkId}/${listed.id}`)).json;
    expect(session.results.length).toBe(1);
    return { checkId, result };
  }

  async function download(path: string): Promise<Buffer> {
    const res = await fetch(new URL(path, service.url), { headers: { authorization: `Bearer ${apiKey}` } });
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  }

  it('runs a @playwright/test spec: PASSED with steps and web vitals, a scrubbed trace to download', async () => {
    const script = [
      "import { test, expect } from '@playwright/test';",
      "test('sign in', async ({ page }) => {",
      "  await test.step('open', async () => { await page.goto(process.env.SITE_URL); });",
      "  await test.step('submit', async () => {",
      "    await page.fill('#user', 'ada');",
      "    await page.fill('#password', process.env.PASSWORD);",
      "    await page.click('button');",
      "    await expect(page).toHaveTitle('Welcome ada');",
      '  });',
      "  console.log('signed in as ada with', process.env.PASSWORD);",
      '});',
    ].join('\n');
    const { result } = await runCheck(script);
    expect(result.status, JSON.stringify(result)).toBe('PASSED');
    const part = result.browserCheckResult;
    expect(part.scriptShape).toBe('TEST');
    expect(part.playwrightVersion).toBe('1.58.2');
    expect(part.browserVersion).toMatch(/^\d+\./);
    expect(part.steps.map((s: { name: string; depth: number }) => [s.name, s.depth])).toEqual([
      ['sign in', 0],
      ['open', 1],
      ['submit', 1],
    ]);
    expect(part.pages.length).toBeGreaterThan(0);
    expect(part.pages[0].webVitals.TTFB).toEqual(expect.any(Number));
    expect(part.scrubbing.secretValues).toBeGreaterThan(0);
    expect(part.scrubbing.artifactsWithheld).toBe(false);
    expect(result.logs.map((l: { msg: string }) => l.msg).join('\n')).toContain(
      'signed in as ada with *****',
    );
    // The form really carried the secret to the site: scrubbing is what keeps it out of the artifacts.
    expect(site.bodies.some((b) => new URLSearchParams(b).get('password') === SECRET)).toBe(true);
    const names = result.artifacts.map((a: { name: string }) => a.name);
    expect(names).toContain('trace.zip');
    const trace = await download(
      result.artifacts.find((a: { name: string }) => a.name === 'trace.zip').downloadPath,
    );
    const entries = unzip(trace);
    expect([...entries.keys()]).toContain('trace.trace');
    for (const [name, data] of entries) {
      try {
        expectNoSecret(data.toString('latin1'), SECRET);
      } catch (err) {
        throw new Error(`trace entry ${name}: ${(err as Error).message}`);
      }
    }
    expectNoSecret(JSON.stringify(result), SECRET);
  }, 180_000);

  it('reports a failed expect as FAILED with its line, and a failure screenshot', async () => {
    const script = [
      "import { test, expect } from '@playwright/test';",
      "test('title', async ({ page }) => {",
      '  await page.goto(process.env.SITE_URL);',
      "  await expect(page).toHaveTitle('Not this title', { timeout: 1000 });",
      '});',
    ].join('\n');
    const { result } = await runCheck(script);
    expect(result.status).toBe('FAILED');
    expect(result.hasFailures).toBe(true);
    expect(result.hasErrors).toBe(false);
    const error = result.browserCheckResult.errors.find((e: { kind: string }) => e.kind === 'ASSERTION');
    expect(error?.location?.line).toBe(4);
    expect(result.errorMessage).toMatch(/toHaveTitle/);
    const names = result.artifacts.map((a: { name: string }) => a.name);
    expect(names).toEqual(expect.arrayContaining(['trace.zip', 'failure.png']));
    const png = await download(
      result.artifacts.find((a: { name: string }) => a.name === 'failure.png').downloadPath,
    );
    expect(png.subarray(1, 4).toString()).toBe('PNG');
  }, 180_000);

  it('runs a Playwright check suite with its project: PASSED, a step per test, CI only for test sessions', async () => {
    const spec = (title: string) =>
      [
        "import { test, expect } from '@playwright/test';",
        "import { greet } from '../helpers/greet';",
        `test('${title}', async ({ page }) => {`,
        '  await page.goto(process.env.SITE_URL);',
        "  await expect(page).toHaveTitle('Sign in');",
        "  console.log(greet('ada'), 'CI=' + (process.env.CI ?? 'unset'), process.env.OUTPOST_RUN_SOURCE);",
        '});',
      ].join('\n');
    const created = await api('POST', '/v1/checks/playwright', {
      name: 'suite',
      activated: false,
      timeoutSeconds: 120,
      environmentVariables: [{ key: 'SITE_URL', value: site.url }],
      scriptPath: 'tests/a.spec.ts',
      dependencies: [
        {
          path: 'package.json',
          content: JSON.stringify({ name: 'suite', dependencies: { lodash: '4.17.21' } }),
        },
        { path: 'playwright.config.ts', content: "export default { testDir: 'tests' };" },
        {
          path: 'helpers/greet.ts',
          content: "import _ from 'lodash';\nexport const greet = (n: string) => 'hello ' + _.capitalize(n);",
        },
        { path: 'tests/a.spec.ts', content: spec('first') },
        { path: 'tests/b.spec.ts', content: spec('second') },
      ],
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const checkId = created.json.id as string;
    for (const triggerSource of ['TRIGGER_API', 'TEST_RECORD'] as const) {
      const started = await api('POST', '/v1/check-sessions/trigger', {
        target: { checkId: [checkId] },
        triggerSource,
      });
      expect(started.status).toBe(201);
      await awaitSession(api, started.json.sessions[0].checkSessionId, 150_000);
    }
    const listed = (await api('GET', `/v1/check-results/${checkId}`)).json;
    expect(listed).toHaveLength(2);
    const logsOf = async (id: string) => {
      const result = (await api('GET', `/v1/check-results/${checkId}/${id}`)).json;
      expect(result.status, JSON.stringify(result.browserCheckResult?.errors)).toBe('PASSED');
      const tests = result.browserCheckResult.steps.filter((s: { depth: number }) => s.depth === 0);
      expect(tests.map((t: { name: string }) => t.name).sort()).toEqual([
        'a.spec.ts › first',
        'b.spec.ts › second',
      ]);
      expect(result.artifacts.some((a: { name: string }) => a.name.endsWith('trace.zip'))).toBe(true);
      return result.logs.map((l: { msg: string }) => l.msg).join('\n');
    };
    const all = await Promise.all(listed.map((r: { id: string }) => logsOf(r.id)));
    expect(all.find((l) => l.includes('TEST_RECORD'))).toContain('CI=1');
    expect(all.find((l) => l.includes('TRIGGER_API'))).toContain('CI=unset');
    expect(all.join('\n')).toContain('hello Ada');
  }, 300_000);
});
