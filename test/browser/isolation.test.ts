import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type * as PlaywrightCore from '../../runtimes/2026.04/node_modules/playwright-core/index.js';
import { BrowserPool } from '../../src/browser/pool.js';
import { BrowserRunner } from '../../src/browser/runner-process.js';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import { until } from '../helpers/processes.js';
import { chromiumRequirement, missingRequirement, runtimeRequirement } from '../helpers/requirements.js';
import { cdpCommands, isPathLike, pathParams } from './cdp-protocol.js';
import { unzip } from './formats.js';
import {
  AS_ROOT,
  type CheckRun,
  type Loopback,
  payloadFor,
  processesOf,
  RUN_AS,
  RUNTIME_DIR,
  RUNTIME_ID,
  runCheck,
  serve,
  startBrowser,
  type WarmBrowser,
} from './runner-harness.js';

type Any = any;

/**
 * Isolation of browser checks: two checks run by two runners on the same warm browser share no
 * browser state, a check's script sees nothing of the agent (its environment, its files, its
 * processes) beyond what its payload gives it, and checks of different accounts run on different
 * browsers and read nothing of each other (the host's CDP allow-list, its refused channel calls and
 * its folder per connection: host-child.cts).
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

/** Forms a secret can take in what a run produced: plain, base64 (each alignment), hex, URL-encoded. */
function encodings(secret: string): string[] {
  const forms = [
    secret,
    Buffer.from(secret).toString('hex'),
    Buffer.from(secret).toString('hex').toUpperCase(),
  ];
  forms.push(encodeURIComponent(secret), encodeURIComponent(secret).replace(/%20/g, '+'));
  for (let skip = 0; skip < 3; skip++) {
    const bytes = Buffer.from(secret.slice(skip));
    forms.push(bytes.subarray(0, bytes.length - (bytes.length % 3)).toString('base64'));
  }
  return [...new Set(forms)];
}

/** Where any form of any secret appears in a run's outcome, logs, errors and artifacts (trace entries unzipped). */
function leaks(run: { outcome: unknown; files: Map<string, Buffer> }, secrets: string[]): string[] {
  const haystacks: [string, Buffer][] = [['the outcome', Buffer.from(JSON.stringify(run.outcome))]];
  for (const [name, bytes] of run.files) {
    haystacks.push([name, bytes]);
    if (name.endsWith('.zip'))
      for (const [entry, data] of unzip(bytes)) haystacks.push([`${name}/${entry}`, data]);
  }
  const found: string[] = [];
  for (const secret of secrets) {
    for (const form of encodings(secret)) {
      for (const [where, bytes] of haystacks) if (bytes.includes(form)) found.push(`${form} in ${where}`);
    }
  }
  return found;
}

/** The uid a process runs as, from /proc. */
function uidOf(pid: number): number {
  return Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1]);
}

/** Every folder under `root` two levels deep (the hosts' and runners' temp dirs and what they hold). */
function foldersUnder(root: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(root)) {
    const dir = join(root, name);
    if (!statSync(dir).isDirectory()) continue;
    found.push(dir);
    for (const inner of readdirSync(dir)) {
      const sub = join(dir, inner);
      if (statSync(sub, { throwIfNoEntry: false })?.isDirectory()) found.push(sub);
    }
  }
  return found;
}

const DOWNLOAD_BODY = 'the downloaded file';

/**
 * Checks of different accounts: each account's checks get a browser host of their own (its own
 * Chromium and uid), and a check's script, however it abuses Playwright's channel and CDP, reads
 * nothing of another account's checks, concurrent or finished: not what was typed, sent in a
 * header or a cookie, or shown in a page.
 */
describe.skipIf(skip)('browser checks of different accounts', () => {
  let tmpRoot: string;
  let pool: BrowserPool<BrowserRunner>;
  let web: Loopback;
  let chromium: PlaywrightCore.BrowserType;
  const held: ServerResponse[] = [];

  beforeAll(async () => {
    tmpRoot = mkdtempSync(join(tmpdir(), 'outpost-isolation-'));
    // The browser uids must reach their temp dirs inside it.
    chmodSync(tmpRoot, 0o755);
    const runtimeRequire = createRequire(join(RUNTIME_DIR, 'package.json'));
    chromium = (runtimeRequire('playwright-core') as typeof PlaywrightCore).chromium;
    pool = new BrowserPool<BrowserRunner>({
      createRunner: (o) => BrowserRunner.spawn(o),
      tmpRoot,
      readHeadroom: async () => null,
      browserConcurrency: 4,
      spareRunners: 2,
      // Outside the uids of other tests' pools and runners.
      browserUids: { first: 62_600, count: 32 },
    });
    web = await serve((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname === '/hold') {
        held.push(res);
        return;
      }
      if (url.pathname === '/download') {
        res.setHeader('content-disposition', 'attachment; filename="file.txt"');
        res.end(DOWNLOAD_BODY);
        return;
      }
      res.setHeader('content-type', 'text/html; charset=utf-8');
      if (url.pathname === '/victim') {
        res.end(
          `<!doctype html><title>Account</title><p id="s">${url.searchParams.get('html') ?? ''}</p><input id="field">`,
        );
      } else {
        res.end('<!doctype html><title>Files</title><a id="dl" href="/download" download>file</a>');
      }
    });
  });

  afterAll(async () => {
    for (const res of held.splice(0)) res.end();
    await pool?.close();
    await web?.close();
    if (tmpRoot) rmSync(tmpRoot, { recursive: true, force: true });
  });

  /** Runs `payload` on a lease of `accountId`'s host; the artifacts' bytes are read before the lease ends. */
  async function runAs(accountId: string, code: string): Promise<CheckRun> {
    const lease = await pool.acquire(RUNTIME_ID, { accountId });
    try {
      const outcome = await lease.runner.run(payloadFor(lease.wsEndpoint, code, { timeoutMs: 60_000 }));
      const files = new Map<string, Buffer>();
      for (const artifact of outcome.artifacts)
        files.set(artifact.name, readFileSync(join(lease.runner.tmpDir, artifact.name)));
      return { outcome, files, tmpFiles: [] };
    } finally {
      await lease.release({ browserFailed: false });
    }
  }

  /** A victim's check: the four secrets typed, sent as a header and a cookie, shown in the page; held at /hold when asked. */
  function victim(secrets: string[], hold: boolean): string {
    const [typed, header, cookie, html] = secrets;
    return [
      `await context.setExtraHTTPHeaders({ 'x-account-token': ${JSON.stringify(header)} });`,
      `await context.addCookies([{ name: 'session', value: ${JSON.stringify(cookie)}, url: '${web.origin}' }]);`,
      `await page.goto('${web.origin}/victim?html=' + encodeURIComponent(${JSON.stringify(html)}));`,
      `await page.fill('#field', ${JSON.stringify(typed)});`,
      `await page.evaluate(() => fetch('/api', { method: 'POST', body: document.querySelector('#field').value }));`,
      hold ? "await page.evaluate(() => fetch('/hold').then((r) => r.text()));" : '',
    ].join('\n');
  }

  /** Four unique secrets, with characters that URL encoding changes. */
  function newSecrets(): string[] {
    return ['typed', 'header', 'cookie', 'html'].map(
      () => `OUTPOST-SECRET-${randomBytes(8).toString('hex')}+/=@!`,
    );
  }

  it('a check of another account reads no secret of a concurrent or finished check, whatever it tries', {
    timeout: 240_000,
  }, async () => {
    const finished = [newSecrets(), newSecrets()];
    for (const secrets of finished) {
      const run = await runAs('account-victim', victim(secrets, false));
      expect(run.outcome.report?.status, JSON.stringify(run.outcome.report?.errors)).toBe('PASSED');
    }
    const concurrent = newSecrets();
    const holding = held.length;
    const running = runAs('account-victim', victim(concurrent, true));
    await until('the concurrent check holds', () => held.length > holding, 30_000);

    // Every folder of the hosts and runners, as an attacker who guessed them all would try.
    const dirs = foldersUnder(tmpRoot);
    const attacker = `
const DIRS = ${JSON.stringify(dirs)};
const MARK = /OUTPOST-SECRET-[0-9a-f]{16}[^\\s"'<>,;&]{0,5}/g;
const attempt = async (what, fn) => {
  try {
    const text = String((await fn()) ?? '');
    const hits = text.match(MARK);
    console.log(what + ': ' + (hits ? 'FOUND ' + hits.join(' ') : JSON.stringify(text.slice(0, 200))));
  } catch (e) {
    console.log(what + ': refused: ' + String(e && e.message).split('\\n')[0].slice(0, 300));
  }
};
await page.goto('${web.origin}/files');
const [download] = await Promise.all([page.waitForEvent('download'), page.click('#dl')]);
await download.failure();
const learned = [];
const folderOf = (file) => file.slice(0, file.lastIndexOf('/'));
await attempt('initializer path', async () => {
  const file = download._artifact._initializer.absolutePath;
  if (file) learned.push(folderOf(file));
  return JSON.stringify(file);
});
await attempt('pathAfterFinished', async () => {
  const { value } = await download._artifact._channel.pathAfterFinished();
  learned.push(folderOf(value));
  return value;
});
await attempt('saveAs to a server path', async () => {
  await download._artifact._channel.saveAs({ path: '/tmp/outpost-attacker-copy' });
  return 'saved';
});
await attempt('trace chunk entries', async () => JSON.stringify(await context.tracing._channel.tracingStopChunk({ mode: 'entries' })));
await attempt('temp files outside their folder', async () => {
  await context._channel.createTempFiles({ items: [{ name: '../../outpost-escape.txt', lastModifiedMs: 0 }] });
  return 'created';
});
// A page per folder: a file: navigation that went through leaves the next attempts a clean page.
for (const dir of [...new Set([...learned, ...DIRS])]) {
  const tab = await context.newPage();
  const cdp = await context.newCDPSession(tab);
  const inputs = () => tab.setContent('<input type=file id=dir webkitdirectory multiple><input type=file id=files multiple>');
  const nodeOf = async (selector) => {
    const { root } = await cdp.send('DOM.getDocument');
    return (await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector })).nodeId;
  };
  const read = (selector) => tab.evaluate(async ({ selector, mark }) => {
    const found = [];
    const names = [];
    for (const file of document.querySelector(selector).files) {
      names.push(file.webkitRelativePath || file.name);
      found.push(...((await file.text()).match(new RegExp(mark, 'g')) ?? []));
    }
    return names.length + ' files ' + names.slice(0, 5).join(',') + ' ' + found.join(' ');
  }, { selector, mark: MARK.source });
  await attempt('DOM.setFileInputFiles ' + dir, async () => {
    await inputs();
    await cdp.send('DOM.setFileInputFiles', { nodeId: await nodeOf('#dir'), files: [dir] });
    return read('#dir');
  });
  await attempt('localDirectory ' + dir, async () => {
    await inputs();
    await tab.mainFrame()._channel.setInputFiles({ selector: '#dir', localDirectory: dir, timeout: 5000 });
    return read('#dir');
  });
  await attempt('localPaths ' + dir, async () => {
    await inputs();
    await tab.mainFrame()._channel.setInputFiles({ selector: '#files', localPaths: [dir], timeout: 5000 });
    return read('#files');
  });
  await attempt('Page.navigate file: ' + dir, async () => {
    await cdp.send('Page.navigate', { url: 'file://' + dir + '/' });
    await tab.waitForTimeout(300);
    return tab.content();
  });
  await attempt('goto file: ' + dir, async () => {
    await tab.goto('file://' + dir + '/', { timeout: 5000 });
    return tab.content();
  });
  await tab.close();
}
`;
    const attack = await runAs('account-attacker', attacker);
    for (const res of held.splice(0)) res.end('released');
    const concurrentRun = await running;
    expect(concurrentRun.outcome.report?.status).toBe('PASSED');

    const logs = attack.outcome.logs.map((log) => log.msg);
    expect(attack.outcome.report?.status, JSON.stringify(attack.outcome.report?.errors)).toBe('PASSED');
    expect(
      logs.filter((line) => line.includes('FOUND')),
      logs.join('\n'),
    ).toEqual([]);
    expect(leaks(attack, [...finished.flat(), ...concurrent])).toEqual([]);
    // Each way in was refused with an error naming the call (or, for file: URLs, the scheme).
    expect(logs).toContain('initializer path: "\\"\\""');
    expect(logs.find((l) => l.startsWith('pathAfterFinished:'))).toMatch(
      /refused: .*pathAfterFinished.* not available/,
    );
    expect(logs.find((l) => l.startsWith('saveAs to a server path:'))).toMatch(/refused: .*not available/);
    expect(logs.find((l) => l.startsWith('trace chunk entries:'))).toMatch(/refused: .*not available/);
    expect(logs.find((l) => l.startsWith('temp files outside'))).toMatch(/refused: .*not available/);
    for (const dir of dirs) {
      expect(logs.find((l) => l.startsWith(`DOM.setFileInputFiles ${dir}:`))).toMatch(
        /refused: .*DOM\.setFileInputFiles is not available/,
      );
      expect(logs.find((l) => l.startsWith(`localDirectory ${dir}:`))).toMatch(
        /refused: .*localDirectory.* not available/,
      );
      expect(logs.find((l) => l.startsWith(`Page.navigate file: ${dir}:`))).toMatch(
        /refused: .*file: URLs are not available/,
      );
      expect(logs.find((l) => l.startsWith(`goto file: ${dir}:`))).toMatch(
        /refused: .*file: URLs are not available/,
      );
    }
    expect(existsSync('/tmp/outpost-attacker-copy')).toBe(false);
  });

  it("two accounts' checks get different hosts (Chromium, uid); one account's checks share its host", async () => {
    const a = await pool.acquire(RUNTIME_ID, { accountId: 'account-one' });
    const b = await pool.acquire(RUNTIME_ID, { accountId: 'account-two' });
    const again = await pool.acquire(RUNTIME_ID, { accountId: 'account-one' });
    try {
      expect(again.wsEndpoint).toBe(a.wsEndpoint);
      expect(b.wsEndpoint).not.toBe(a.wsEndpoint);
      const hosts = pool.status().runtimes[0]?.hosts ?? [];
      const one = hosts.find((h) => h.accountId === 'account-one' && h.state === 'ready');
      const two = hosts.find((h) => h.accountId === 'account-two' && h.state === 'ready');
      expect(one?.browserPid).toBeGreaterThan(1);
      expect(two?.browserPid).toBeGreaterThan(1);
      expect(one?.browserPid).not.toBe(two?.browserPid);
      expect(one?.runningChecks).toBe(2);
      if (AS_ROOT) {
        const [uidOne, uidTwo] = [uidOf(one?.browserPid as number), uidOf(two?.browserPid as number)];
        expect(uidOne).not.toBe(uidTwo);
        expect(uidOne).toBeGreaterThanOrEqual(62_600);
        expect(uidTwo).toBeGreaterThanOrEqual(62_600);
      }
    } finally {
      await Promise.all([a, b, again].map((lease) => lease.release({ browserFailed: false })));
    }
  });

  it("refuses every CDP method that takes or reveals a path of the browser's machine, and the domains beyond the page", {
    timeout: 240_000,
  }, async () => {
    const commands = cdpCommands(join(RUNTIME_DIR, 'node_modules', 'playwright-core'));
    expect(commands.length).toBeGreaterThan(500);
    /** Path-like names that are no file path: a cookie's path, IndexedDB key paths, a manifest's text direction and share target. */
    const notFilePaths = new Set([
      'Network.setCookie',
      'Network.setCookies',
      'Network.deleteCookies',
      'Network.getCookies',
      'Network.getAllCookies',
      'IndexedDB.requestDatabase',
      'Page.getAppManifest',
    ]);
    const withPaths = commands.filter(
      (c) => !notFilePaths.has(c.method) && (c.params.some(isPathLike) || c.returns.some(isPathLike)),
    );
    expect(withPaths.map((c) => c.method)).toEqual(
      expect.arrayContaining([
        'DOM.setFileInputFiles',
        'Page.setDownloadBehavior',
        'Input.dispatchDragEvent',
      ]),
    );
    const beyondThePage = [
      'Target',
      'Browser',
      'Storage',
      'Tracing',
      'IO',
      'SystemInfo',
      'Extensions',
      'PWA',
      'FileSystem',
      'Memory',
      'Tethering',
      'BackgroundService',
      'Cast',
      'ServiceWorker',
      'Security',
    ];
    const wholeDomains = commands.filter((c) => beyondThePage.includes(c.domain));
    const lease = await pool.acquire(RUNTIME_ID, { accountId: 'account-cdp' });
    const browser = await chromium.connect(lease.wsEndpoint, { timeout: 10_000 });
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.setContent('<input type=file id=f webkitdirectory>');
      const cdp = await context.newCDPSession(page);
      const notRefused: string[] = [];
      for (const command of [...withPaths, ...wholeDomains]) {
        const error = await cdp
          .send(command.method as 'Page.enable', pathParams(command, '/etc') as never)
          .then(
            () => null,
            (e: Error) => e.message,
          );
        if (!/is not available:/.test(error ?? '')) notRefused.push(`${command.method}: ${error ?? 'done'}`);
      }
      expect(notRefused).toEqual([]);
      console.info(
        `${withPaths.length} path methods and ${wholeDomains.length} methods of other domains refused`,
      );
      // file: and the browser's own pages stay out of reach through a URL parameter.
      for (const url of ['file:///etc/passwd', 'chrome://version', 'view-source:file:///etc/passwd']) {
        await expect(cdp.send('Page.navigate', { url })).rejects.toThrow(/URLs are not available/);
      }
      // What checks use keeps working.
      await cdp.send('Performance.enable');
      expect((await cdp.send('Performance.getMetrics')).metrics.length).toBeGreaterThan(5);
      expect(
        (await cdp.send('Runtime.evaluate', { expression: '6 * 7', returnByValue: true })).result.value,
      ).toBe(42);
      await cdp.send('Network.enable');
      await cdp.send('Network.setCookie', { name: 'kept', value: '1', url: web.origin, path: '/' });
      await cdp.send('Emulation.setCPUThrottlingRate', { rate: 2 });
      await cdp.send('Page.navigate', { url: `${web.origin}/files` });
      await context.close();
    } finally {
      await browser.close();
      await lease.release({ browserFailed: false });
    }
  });

  it("refuses the channel calls that take or reveal server paths; downloads, uploads, traces and videos still work; each connection's files live and die with it", async () => {
    const lease = await pool.acquire(RUNTIME_ID, { accountId: 'account-channel' });
    const hosts = pool.status().runtimes[0]?.hosts ?? [];
    const hostPid = (
      hosts.find((h) => h.accountId === 'account-channel') ?? hosts.find((h) => h.state === 'ready')
    )?.pid;
    const hostDir = readlinkSync(`/proc/${hostPid}/cwd`);
    const connectionFolders = () => readdirSync(hostDir).filter((name) => name.startsWith('connection-'));
    const local = mkdtempSync(join(tmpRoot, 'client-'));
    const before = connectionFolders();
    const browser = await chromium.connect(lease.wsEndpoint, { timeout: 10_000 });
    try {
      // Videos need Debian's ffmpeg (the host links Playwright's lookup to it).
      const video = existsSync('/usr/bin/ffmpeg');
      const context = await browser.newContext({
        acceptDownloads: true,
        ...(video ? { recordVideo: { dir: join(local, 'videos') } } : {}),
      });
      await context.tracing.start({ screenshots: true, snapshots: true });
      const page = await context.newPage();
      await page.goto(`${web.origin}/files`);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#dl')]);
      const artifact = (download as unknown as { _artifact: Any })._artifact;
      expect(artifact._initializer.absolutePath).toBe('');
      await expect(artifact._channel.pathAfterFinished()).rejects.toThrow(
        /pathAfterFinished .* not available:/,
      );
      await expect(artifact._channel.saveAs({ path: join(local, 'server-copy') })).rejects.toThrow(
        /saveAs .* not available:/,
      );
      await download.saveAs(join(local, 'download.txt'));
      expect(readFileSync(join(local, 'download.txt'), 'utf8')).toBe(DOWNLOAD_BODY);

      await page.setContent('<input type=file id=f multiple>');
      await page.setInputFiles('#f', {
        name: 'a.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('from a buffer'),
      });
      writeFileSync(join(local, 'upload.txt'), 'from a file');
      await page.setInputFiles('#f', join(local, 'upload.txt'));
      expect(await page.evaluate("document.querySelector('#f').files[0].text()")).toBe('from a file');
      const frame = (page.mainFrame() as unknown as { _channel: Any })._channel;
      await expect(
        frame.setInputFiles({ selector: '#f', localPaths: ['/etc/hostname'], timeout: 2000 }),
      ).rejects.toThrow(/localPaths.* not available:/);
      await expect(
        frame.setInputFiles({ selector: '#f', localDirectory: '/etc', timeout: 2000 }),
      ).rejects.toThrow(/not available:/);
      const input = (await page.$('#f')) as unknown as { _channel: Any };
      await expect(
        input._channel.setInputFiles({ localPaths: ['/etc/hostname'], timeout: 2000 }),
      ).rejects.toThrow(/not available:/);
      const contextChannel = (context as unknown as { _channel: Any })._channel;
      await expect(
        contextChannel.createTempFiles({ items: [{ name: '../escape.txt', lastModifiedMs: 0 }] }),
      ).rejects.toThrow(/not available:/);
      const tracing = (context.tracing as unknown as { _channel: Any })._channel;
      await expect(tracing.tracingStopChunk({ mode: 'entries' })).rejects.toThrow(/not available:/);
      await expect(page.goto('file:///etc/passwd')).rejects.toThrow(/file: URLs are not available/);
      await expect(browser.newBrowserCDPSession()).rejects.toThrow(/not available:/);

      // Every connection's own folder is 0700; this one's holds its trace while it is connected. Other
      // connections may have made theirs meanwhile: the host's health probe (no trace) and the spare
      // runner the pool prepares for this account (it opens its traced context while it waits).
      const traced = connectionFolders()
        .filter((name) => !before.includes(name))
        .filter((name) => readdirSync(join(hostDir, name)).some((file) => file.endsWith('.trace')));
      expect(traced.length).toBeGreaterThanOrEqual(1);
      for (const name of traced) expect(statSync(join(hostDir, name)).mode & 0o777).toBe(0o700);
      // Playwright's own artifacts folder, shared by every connection, holds nothing.
      for (const name of readdirSync(hostDir).filter((n) => n.startsWith('playwright-artifacts-')))
        expect(readdirSync(join(hostDir, name))).toEqual([]);

      await context.tracing.stop({ path: join(local, 'trace.zip') });
      expect(
        [...unzip(readFileSync(join(local, 'trace.zip'))).keys()].some((n) => n.endsWith('.trace')),
      ).toBe(true);
      const recorded = page.video();
      await context.close();
      if (video) {
        await recorded?.saveAs(join(local, 'video.webm'));
        expect(statSync(join(local, 'video.webm')).size).toBeGreaterThan(0);
      } else {
        console.warn('skipping the video part: /usr/bin/ffmpeg is missing (apt-get install ffmpeg)');
      }
      await browser.close();
      // This connection's folder, and only it, goes with the connection; a spare's stays with the spare's.
      await until(
        'the connection folder is removed',
        () => traced.some((name) => !existsSync(join(hostDir, name))),
        10_000,
      );
      expect(traced.filter((name) => !existsSync(join(hostDir, name)))).toHaveLength(1);
    } finally {
      await browser.close().catch(() => {});
      await lease.release({ browserFailed: false });
    }
  });
});
