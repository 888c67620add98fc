import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import { chromiumRequirement, missingRequirement, runtimeRequirement } from '../helpers/requirements.js';
import {
  type Loopback,
  payloadFor,
  processesOf,
  RUN_AS,
  RUNTIME_ID,
  runCheck,
  serve,
  startBrowser,
  type WarmBrowser,
} from './runner-harness.js';

/**
 * Isolation of browser checks: two checks run by two runners on the same warm browser share no
 * browser state, and a check's script sees nothing of the agent (its environment, its files, its
 * processes) beyond what its payload gives it.
 */
const skip = missingRequirement([chromiumRequirement(), runtimeRequirement(RUNTIME_ID)]);

/** Everything a page of the origin can keep, read from inside the page. */
const READ_STATE = `async () => ({
  cookie: document.cookie,
  local: localStorage.getItem('kept'),
  databases: (await indexedDB.databases()).map((d) => d.name),
  caches: await caches.keys(),
  workers: (await navigator.serviceWorker.getRegistrations()).length,
})`;

describe.skipIf(skip)('browser check isolation', () => {
  let browser: WarmBrowser;
  let web: Loopback;

  beforeAll(async () => {
    [browser, web] = await Promise.all([
      startBrowser(),
      serve((req, res) => {
        if (req.url === '/sw.js') {
          res.setHeader('content-type', 'text/javascript');
          res.end("self.addEventListener('fetch', () => {});");
        } else {
          res.setHeader('content-type', 'text/html; charset=utf-8');
          res.end('<!doctype html><title>Store</title><h1>Store</h1>');
        }
      }),
    ]);
  });

  afterAll(async () => {
    await web?.close();
    await browser?.close();
  });

  afterEach(() => {
    if (RUN_AS !== null) expect(processesOf(RUN_AS.uid)).toEqual([]);
  });

  it('a check sees no cookie, storage, database, cache or service worker another check left', async () => {
    const write = [
      `await page.goto('${web.origin}/');`,
      'await page.evaluate(async () => {',
      `  document.cookie = 'session=check-a; max-age=3600; path=/';`,
      `  localStorage.setItem('kept', 'check-a');`,
      '  await new Promise((resolve, reject) => {',
      `    const open = indexedDB.open('check-a', 1);`,
      `    open.onupgradeneeded = () => open.result.createObjectStore('things');`,
      '    open.onsuccess = () => {',
      `      const tx = open.result.transaction('things', 'readwrite');`,
      `      tx.objectStore('things').put('value', 'key');`,
      '      tx.oncomplete = () => { open.result.close(); resolve(); };',
      '    };',
      '    open.onerror = () => reject(open.error);',
      '  });',
      `  await (await caches.open('check-a')).put('/cached', new Response('cached'));`,
      `  await navigator.serviceWorker.register('/sw.js');`,
      '  await navigator.serviceWorker.ready;',
      '});',
      `console.log(JSON.stringify(await page.evaluate(${READ_STATE})));`,
    ].join('\n');
    const a = await runCheck(payloadFor(browser.wsEndpoint, write));
    expect(a.outcome.report?.status).toBe('PASSED');
    expect(JSON.parse(a.outcome.logs[0]!.msg)).toEqual({
      cookie: 'session=check-a',
      local: 'check-a',
      databases: ['check-a'],
      caches: ['check-a'],
      workers: 1,
    });

    const read = `await page.goto('${web.origin}/');\nconsole.log(JSON.stringify(await page.evaluate(${READ_STATE})));\nconsole.log(JSON.stringify(await context.cookies()));`;
    const b = await runCheck(payloadFor(browser.wsEndpoint, read));
    expect(b.outcome.report?.status).toBe('PASSED');
    expect(b.outcome.logs.map((log) => JSON.parse(log.msg))).toEqual([
      { cookie: '', local: null, databases: [], caches: [], workers: 0 },
      [],
    ]);
  });

  it("a script sees only its payload's environment and reports secrets it sets", async () => {
    process.env.OUTPOST_AGENT_ONLY = 'agent-value';
    const code = [
      'console.log(JSON.stringify(process.env));',
      `process.env.SERVICE_SECRET_MINTED = 'minted-' + 'token';`,
      `Object.assign(process.env, { OUTPOST_SECRET_OTHER: 'other-secret' });`,
    ].join('\n');
    const env = { GREETING: 'hello', SERVICE_SECRET_GIVEN: 'given-secret' };
    const { outcome } = await runCheck(
      payloadFor(browser.wsEndpoint, code, { env, checkType: 'MULTI_STEP' }),
    );
    delete process.env.OUTPOST_AGENT_ONLY;
    expect(outcome.report?.status).toBe('PASSED');
    expect(JSON.parse(outcome.logs[0]!.msg)).toEqual(env);
    expect(outcome.secrets).toEqual(expect.arrayContaining(['minted-token', 'other-secret', 'given-secret']));
  });

  it("a script cannot read /etc/passwd or the agent's files, start a process or signal the agent", async () => {
    const agentFile = join(PACKAGE_ROOT, 'package.json');
    const code = [
      `const fs = require('node:fs');`,
      `const attempt = (what, fn) => { try { fn(); console.log(what + ': allowed'); } catch (e) { console.log(what + ': ' + e.code); } };`,
      `attempt('passwd', () => fs.readFileSync('/etc/passwd', 'utf8'));`,
      `attempt('agent file', () => fs.readFileSync(${JSON.stringify(agentFile)}, 'utf8'));`,
      `attempt('spawn', () => require('node:child_process').execFileSync('/bin/true'));`,
      `attempt('worker', () => new (require('node:worker_threads').Worker)('1', { eval: true }));`,
      `attempt('write outside', () => fs.writeFileSync('/tmp/outpost-escape', 'x'));`,
      `attempt('own temp dir', () => fs.writeFileSync('mine.txt', 'x'));`,
      `attempt('signal the agent', () => process.kill(${process.pid}, 0));`,
      `attempt('inspector', () => require('node:inspector'));`,
      `console.log('uid ' + process.getuid());`,
      `fs.readFileSync('/etc/passwd');`,
    ].join('\n');
    const { outcome } = await runCheck(payloadFor(browser.wsEndpoint, code, { checkType: 'MULTI_STEP' }));
    expect(outcome.logs.map((log) => log.msg)).toEqual([
      'passwd: ERR_ACCESS_DENIED',
      'agent file: ERR_ACCESS_DENIED',
      'spawn: ERR_ACCESS_DENIED',
      'worker: ERR_ACCESS_DENIED',
      'write outside: ERR_ACCESS_DENIED',
      'own temp dir: allowed',
      'signal the agent: ERR_ACCESS_DENIED',
      'inspector: ERR_ACCESS_DENIED',
      `uid ${RUN_AS?.uid ?? process.getuid?.()}`,
    ]);
    const report = outcome.report!;
    expect(report.status).toBe('FAILED');
    expect(report.errors[0]).toMatchObject({ kind: 'SCRIPT', location: { line: 12, column: 4 } });
    expect(report.errorMessage).toMatch(/Access to this API has been restricted/);
  });
});
