import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import { ScriptSandbox } from '../../src/sandbox/sandbox.js';
import type { ScriptRunRequest, ScriptRunResult } from '../../src/sandbox/types.js';
import { missingRequirement } from '../helpers/requirements.js';

/**
 * Scripts run in warm processes reused for the scripts of one account: each run sees a fresh
 * global state, a process never runs two accounts' scripts, and a run that leaves anything
 * behind or hits a limit ends its process. Reuse is asserted through the pids the scripts print,
 * so a sandbox that silently started every script cold would fail here.
 */

const RUNTIME = '2026.04';
const runtimeDepsMissing = missingRequirement([
  {
    ok: existsSync(join(PACKAGE_ROOT, 'runtimes', RUNTIME, 'node_modules', 'lodash', 'package.json')),
    what: `the dependencies of runtime ${RUNTIME}`,
    install: `npm ci --prefix runtimes/${RUNTIME}`,
  },
]);

/** The build's sandbox, which starts the bundle the agent runs (dist/src/sandbox/child.cjs). */
const BUILT_SANDBOX = join(PACKAGE_ROOT, 'dist', 'src', 'sandbox', 'sandbox.js');
const builtMissing = missingRequirement([
  {
    ok: existsSync(BUILT_SANDBOX) && existsSync(join(PACKAGE_ROOT, 'dist', 'src', 'sandbox', 'child.cjs')),
    what: 'the build of the sandbox (dist/src/sandbox)',
    install: 'npm run build',
  },
]);

let root: string;
let tmpRoot: string;
const sandboxes: ScriptSandbox[] = [];

/**
 * A sandbox with a pool of one that keeps one idle process per account: an account's back-to-back scripts then
 * run in one process (the next waits for the check of the last), which is what most cases here look into. With
 * more, a script arriving while its account's process checks takes a warm one of the pool instead (the case
 * 'runs back-to-back scripts of an account in processes of its own…' below).
 */
function sandboxOf(options: ConstructorParameters<typeof ScriptSandbox>[0] = {}): ScriptSandbox {
  const sandbox = new ScriptSandbox({ tmpRoot, poolSize: 1, maxIdlePerAccount: 1, ...options });
  sandboxes.push(sandbox);
  return sandbox;
}

/** A request of `accountId` whose script first prints its pid (the first log line). */
function script(accountId: string, code: string, extra: Partial<ScriptRunRequest> = {}): ScriptRunRequest {
  return {
    code: `console.log(String(process.pid));\n${code}`,
    name: 'setup script',
    accountId,
    runtimeId: RUNTIME,
    env: {},
    context: { request: { method: 'GET', url: 'https://example.test/', headers: [] } },
    ...extra,
  };
}

/** The pid the script printed first. */
function pidOf(result: ScriptRunResult): number {
  const pid = Number(result.logs[0]?.msg);
  if (!Number.isInteger(pid)) throw new Error(`no pid in ${JSON.stringify(result)}`);
  return pid;
}

/** The log lines after the pid. */
function said(result: ScriptRunResult): string[] {
  return result.logs.slice(1).map((line) => line.msg);
}

function ok(result: ScriptRunResult): ScriptRunResult {
  if (!result.ok) throw new Error(`expected ok, got ${result.code}: ${result.reason}`);
  return result;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'outpost-warm-test-'));
  tmpRoot = join(root, 'scripts');
  // Run users must reach their temp dirs below it.
  await chmod(root, 0o711);
  await mkdir(tmpRoot, { mode: 0o711 });
  await chmod(tmpRoot, 0o711);
});

afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.close()));
  await rm(root, { recursive: true, force: true });
});

/** What a later script checks: none of what the cases below leave may be visible. */
const SEES_NOTHING = `
  const seen = [];
  if (typeof leaked !== 'undefined' || 'leaked' in globalThis) seen.push('global');
  if (({}).polluted !== undefined) seen.push('Object.prototype');
  if ([].polluted !== undefined || [1].map((x) => x + 1)[0] !== 2) seen.push('Array.prototype');
  if (Buffer.prototype.polluted !== undefined) seen.push('Buffer.prototype');
  if (Buffer.constructor('return globalThis')().leaked !== undefined) seen.push('the process global');
  if (require('lodash').polluted !== undefined || require('lodash').chunk([1, 2], 1).length !== 2) seen.push('lodash');
  if (require('fs').polluted !== undefined || require('fs').readFileSync.name !== 'readFileSync') seen.push('fs');
  if (require('events').defaultMaxListeners !== 10) seen.push('events');
  if (require.cache.polluted !== undefined) seen.push('require.cache');
  if (globalThis.late !== undefined) seen.push('late callback');
  console.log(JSON.stringify(seen));
`;

describe.skipIf(runtimeDepsMissing !== null)('warm script processes', () => {
  it('reuses the process of an account for its next script', async () => {
    const sandbox = sandboxOf();
    const first = ok(await sandbox.run(script('acct-a', 'request.n = 1;')));
    const second = ok(await sandbox.run(script('acct-a', 'request.n = 2;')));
    const third = ok(await sandbox.run(script('acct-a', 'request.n = 3;')));

    // Nothing of the process's start (a deprecation warning of a built-in it loads) reaches a run.
    expect(said(first)).toEqual([]);
    expect(pidOf(second)).toBe(pidOf(first));
    expect(pidOf(third)).toBe(pidOf(first));
    expect(third.ok && third.context.request).toMatchObject({ n: 3 });
  });

  it('runs back-to-back scripts of an account in processes of its own, each checked while another runs', async () => {
    const sandbox = sandboxOf({ poolSize: 2, maxIdlePerAccount: 3 });
    await sandbox.warm(RUNTIME);
    const pids: number[] = [];
    for (let i = 0; i < 40; i++) {
      const result = ok(
        await sandbox.run(
          script('acct-alternate', `${SEES_NOTHING}\nglobalThis.leaked = 1; Object.prototype.polluted = 1;`),
        ),
      );
      expect(said(result), `run ${i}`).toEqual(['[]']);
      pids.push(pidOf(result));
    }
    const used = new Set(pids);
    // The next script did not wait for the last one's check: it took a warm process of the pool, up to the
    // processes the account may keep idle, and each was reused once checked.
    expect(used.size).toBeGreaterThanOrEqual(2);
    expect(used.size).toBeLessThanOrEqual(3);
    expect(sandbox.processesStarted).toBeLessThanOrEqual(2 + 3);
    // None of them runs another account's script.
    const other = pidOf(ok(await sandbox.run(script('acct-alternate-other', ''))));
    expect(used.has(other)).toBe(false);
  });

  it.skipIf(builtMissing !== null)(
    'reuses the process of the built bootstrap, the one the agent runs, and shows a run nothing of its start',
    async () => {
      // Node leaves out the deprecation warnings of built-ins (punycode) loaded by code inside a
      // node_modules folder, where the bundles of the sources above live: the build's does not.
      const built = (await import(pathToFileURL(BUILT_SANDBOX).href)) as {
        ScriptSandbox: typeof ScriptSandbox;
      };
      const sandbox = new built.ScriptSandbox({ tmpRoot, poolSize: 1, maxIdlePerAccount: 1 });
      sandboxes.push(sandbox);
      const first = ok(await sandbox.run(script('acct-built', '')));
      const second = ok(await sandbox.run(script('acct-built', "require('lodash').chunk([1, 2], 1);")));
      const third = ok(await sandbox.run(script('acct-built', '')));

      expect([said(first), said(second), said(third)]).toEqual([[], [], []]);
      expect(pidOf(second)).toBe(pidOf(first));
      expect(pidOf(third)).toBe(pidOf(first));
    },
  );

  // [what the first script does, whether its process may run the next script]
  const cases: [string, string, boolean][] = [
    ['sets a global', 'globalThis.leaked = 1; leakedToo = 2;', true],
    ['patches Object.prototype', 'Object.prototype.polluted = 1;', true],
    ['patches Array.prototype', 'Array.prototype.polluted = 1; Array.prototype.map = () => [];', true],
    [
      'changes a required module (its export and the module cache)',
      "const _ = require('lodash'); _.polluted = 1; _.chunk = () => []; require.cache.polluted = 1; require('fs').polluted = 1; require('fs').readFileSync = () => '';",
      true,
    ],
    ['leaves a pending promise', 'globalThis.pending = new Promise(() => {}); new Promise(() => {});', true],
    ['patches a prototype of the process (Buffer)', 'Buffer.prototype.polluted = 1;', false],
    ['sets a global of the process itself', "Buffer.constructor('return globalThis')().leaked = 1;", false],
    ['changes a setting of a built-in', "require('events').defaultMaxListeners = 1;", false],
    ['leaves a timer', 'setTimeout(() => { globalThis.late = 1; console.log("late"); }, 300);', false],
    ['leaves an unref’d timer', 'setTimeout(() => { console.log("late"); }, 300).unref();', false],
    ['leaves an interval', 'setInterval(() => { console.log("late"); }, 50);', false],
    [
      'leaves an open server',
      "await new Promise((resolve) => require('net').createServer().listen(0, '127.0.0.1', resolve));",
      false,
    ],
    [
      'leaves a promise a timer will settle',
      'new Promise((resolve) => setTimeout(resolve, 300)).then(() => { globalThis.late = 1; console.log("late"); });',
      false,
    ],
  ];

  it.each(cases)('shows the next script nothing when one %s', async (_what, code, reused) => {
    const sandbox = sandboxOf();
    const account = `acct-${Math.random().toString(36).slice(2)}`;
    const warmUp = ok(await sandbox.run(script(account, '')));
    const first = ok(await sandbox.run(script(account, code)));
    const second = ok(await sandbox.run(script(account, SEES_NOTHING)));
    // What a timer of the first would do happens by now; it must not reach a later script.
    await new Promise((resolve) => setTimeout(resolve, 400));
    const third = ok(await sandbox.run(script(account, SEES_NOTHING)));

    expect(pidOf(first)).toBe(pidOf(warmUp));
    expect(said(second)).toEqual(['[]']);
    expect(said(third)).toEqual(['[]']);
    if (reused) expect(pidOf(second)).toBe(pidOf(first));
    else expect(pidOf(second)).not.toBe(pidOf(first));
    expect(pidOf(third)).toBe(pidOf(second));
  });

  it('never shows a secret of one script to the next of the same account', async () => {
    const sandbox = sandboxOf();
    const secret = 'planted-secret-6d1f0a';
    const first = ok(
      await sandbox.run(
        script(
          'acct-secret',
          `
          const fs = require('fs');
          const path = require('path');
          const value = process.env.API_TOKEN;
          globalThis.stash = value;
          require('lodash').stash = value;
          fs.writeFileSync('secret.txt', value);
          fs.writeFileSync(path.join(require('os').tmpdir(), '..', 'beside.txt'), value);
          process.env.SERVICE_SECRET_TOKEN = value;
          console.log(process.cwd());
        `,
          { env: { API_TOKEN: secret } },
        ),
      ),
    );
    const firstDir = said(first)[0] ?? '';
    const second = ok(
      await sandbox.run(
        script(
          'acct-secret',
          `
          const fs = require('fs');
          const path = require('path');
          const found = [];
          const look = (where, text) => { if (String(text).includes(${JSON.stringify(secret)})) found.push(where); };
          for (const key of Object.getOwnPropertyNames(globalThis)) { try { look('global ' + key, globalThis[key]); } catch {} }
          look('lodash', require('lodash').stash);
          look('env', JSON.stringify(process.env));
          const walk = (dir) => {
            for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
              const file = path.join(dir, entry.name);
              if (entry.isDirectory()) walk(file);
              else look(file, fs.readFileSync(file, 'utf8'));
            }
          };
          walk(path.join(process.cwd(), '..'));
          if (fs.existsSync(${JSON.stringify(firstDir)})) found.push('the first run dir');
          console.log(JSON.stringify(found), process.cwd());
        `,
        ),
      ),
    );

    expect(first.secrets).toEqual([secret]);
    expect(pidOf(second)).toBe(pidOf(first));
    expect(second.secrets).toEqual([]);
    expect(said(second)[0]?.startsWith('[] ')).toBe(true);
    expect(said(second)[0]).not.toContain(firstDir);
  });

  it('never shows the next script what a regular expression of the process matched in a secret', async () => {
    const sandbox = sandboxOf();
    const secret = 'planted-secret-51c9e2';
    // The process's own RegExp (reached through a Node object's constructor) keeps its last
    // match in RegExp.input, $1, lastMatch…; built-ins match with it too, and the statics are settable.
    const hostRegExp = "const R = Buffer.constructor('return RegExp')();";
    const leaves = [
      `${hostRegExp} new R('token=(\\w+-\\w+-(\\w+))').exec('token=' + process.env.API_TOKEN + ' end');`,
      `${hostRegExp} R.input = process.env.API_TOKEN;`,
    ];
    for (const code of leaves) {
      const first = ok(await sandbox.run(script('acct-regexp', code, { env: { API_TOKEN: secret } })));
      const second = ok(
        await sandbox.run(
          script(
            'acct-regexp',
            `${hostRegExp}
            const names = ['input', 'lastMatch', 'lastParen', 'leftContext', 'rightContext', '$_', '$&', '$+', '$\x60', "$'",
              '$1', '$2', '$3', '$4', '$5', '$6', '$7', '$8', '$9'];
            console.log(JSON.stringify(names.filter((name) => String(R[name]).includes('secret'))));`,
          ),
        ),
      );
      expect(said(second)).toEqual(['[]']);
      // Cleared, not merely noticed: the process runs the next script.
      expect(pidOf(second)).toBe(pidOf(first));
    }
  });

  it('says at debug level why a process is not reused, and never what the script chose', async () => {
    const lines: { msg: string; reason?: string; accountId?: string; runs?: number }[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const sandbox = sandboxOf({ logger, maxRunsPerProcess: 3 });
    const secret = 'planted-secret-0b7a44';
    const reasons = () => lines.filter((l) => l.msg === 'script process not reused').map((l) => l.reason);
    const runs: [string, Partial<ScriptRunRequest>][] = [
      ['', {}],
      ['', {}],
      ['setTimeout(() => {}, 60_000);', {}],
      ['Buffer.prototype[process.env.API_TOKEN] = 1;', { env: { API_TOKEN: secret } }],
      ["require('fs').readFileSync('/etc/hostname');", {}],
      ['', {}],
      ['', {}],
      ['', {}],
    ];
    const pids: number[] = [];
    for (const [code, extra] of runs) {
      const result = await sandbox.run(script('acct-log', code, extra));
      pids.push(result.ok ? pidOf(result) : Number.NaN);
      // The reason of a process found changed after its result comes a moment later.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    expect(pids[1]).toBe(pids[0]);
    expect(reasons()).toEqual([
      'it left a timer pending',
      'it changed Buffer.prototype.(a property added since)',
      'it failed with PERMISSION_DENIED',
      'maxRunsPerProcess reached',
    ]);
    expect(lines.find((l) => l.reason === 'maxRunsPerProcess reached')).toMatchObject({
      accountId: 'acct-log',
      runs: 3,
    });
    expect(JSON.stringify(lines)).not.toContain(secret);
  });

  it('never runs scripts of two accounts in one process, one after the other or at once', async () => {
    const sandbox = sandboxOf({ poolSize: 2, maxIdlePerAccount: 4, maxIdle: 8 });
    const a = ok(await sandbox.run(script('acct-one', '')));
    const b = ok(await sandbox.run(script('acct-two', '')));
    const a2 = ok(await sandbox.run(script('acct-one', '')));
    expect(pidOf(b)).not.toBe(pidOf(a));
    expect(pidOf(a2)).toBe(pidOf(a));

    const accountsOf = new Map<number, Set<string>>();
    for (let round = 0; round < 3; round++) {
      const accounts = ['acct-one', 'acct-two', 'acct-three', 'acct-one', 'acct-two', 'acct-three'];
      const results = await Promise.all(
        accounts.map((account) =>
          sandbox.run(script(account, 'await new Promise((resolve) => setTimeout(resolve, 50));')),
        ),
      );
      results.forEach((result, i) => {
        const pid = pidOf(ok(result));
        const seen = accountsOf.get(pid) ?? new Set();
        seen.add(accounts[i] as string);
        accountsOf.set(pid, seen);
      });
    }
    for (const accounts of accountsOf.values()) expect(accounts.size).toBe(1);
    // Reuse happened under concurrency too: fewer processes than runs.
    expect(accountsOf.size).toBeLessThan(18);
  });

  it('keeps a process that came only after the script waiting for it timed out, for the next script', async () => {
    const sandbox = sandboxOf({ poolSize: 0, maxProcessesPerAccount: 1 });
    const hold = 'await new Promise((resolve) => setTimeout(resolve, 1_000));';
    const holding = sandbox.run(script('acct-late', hold));
    // The account's one process is busy: this one waits for it past its time limit.
    const waited = await sandbox.run(script('acct-late', '', { timeoutMs: 300 }));
    const held = ok(await holding);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const next = ok(await sandbox.run(script('acct-late', '')));

    expect(waited.ok ? 'ok' : waited.code).toBe('TIMEOUT');
    expect(pidOf(next)).toBe(pidOf(held));
    expect([pidOf(next), sandbox.processesStarted]).toEqual([pidOf(held), 1]);
  });

  it('gives a freed process to the script of the account that waited first', async () => {
    const sandbox = sandboxOf({ poolSize: 0, maxProcessesPerAccount: 1 });
    const order: string[] = [];
    const run = (name: string, code: string) =>
      sandbox.run(script('acct-fifo', code)).then((result) => {
        order.push(name);
        return ok(result);
      });
    const holding = run('first', 'await new Promise((resolve) => setTimeout(resolve, 500));');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const waiting = run('waiting', '');
    await holding;
    // Comes while the freed process is checked: it queues behind the one that waited.
    const next = run('next', '');
    const pids = (await Promise.all([holding, waiting, next])).map(pidOf);

    expect(order).toEqual(['first', 'waiting', 'next']);
    expect(new Set(pids).size).toBe(1);
  });

  it('refuses a request without an account', async () => {
    const sandbox = sandboxOf({ poolSize: 0 });
    const { accountId: _, ...request } = script('x', '');
    const result = await sandbox.run(request as ScriptRunRequest);
    expect(result.ok ? 'ok' : result.reason).toBe(
      'setup script could not run: accountId must name the account whose script this is (1 to 200 characters)',
    );
    expect(sandbox.processesStarted).toBe(0);
  });

  // [the limit, the script, extra request fields, the options of its sandbox]
  const limits: [
    string,
    string,
    () => Partial<ScriptRunRequest>,
    ConstructorParameters<typeof ScriptSandbox>[0],
  ][] = [
    ['TIMEOUT', 'for (;;) {}', () => ({ timeoutMs: 1_000 }), {}],
    ['OUTPUT_LIMIT', "console.log('x'.repeat(5000));", () => ({}), { maxOutputBytes: 1_000 }],
    [
      'OUT_OF_MEMORY',
      'const keep = []; for (;;) keep.push(new Array(100000).fill(1));',
      () => ({}),
      { memoryLimitMb: 32 },
    ],
    ['EXITED', 'process.exit(0);', () => ({}), {}],
    ['PERMISSION_DENIED', "require('fs').readFileSync('/etc/hostname');", () => ({}), {}],
    [
      'ABORTED',
      'await new Promise((resolve) => setTimeout(resolve, 60_000));',
      () => ({ signal: AbortSignal.timeout(500) }),
      {},
    ],
  ];

  it.each(limits)(
    'replaces the process of a script that hits %s, and the next runs normally',
    async (code, body, extra, options) => {
      const sandbox = sandboxOf(options);
      const account = `acct-limit-${code}`;
      const before = ok(await sandbox.run(script(account, '')));
      const hit = await sandbox.run(script(account, body, extra()));
      const after = ok(await sandbox.run(script(account, 'console.log("fine");')));

      expect(hit.ok ? 'ok' : hit.code).toBe(code);
      expect(said(after)).toEqual(['fine']);
      expect(pidOf(after)).not.toBe(pidOf(before));
    },
  );

  it('does not reuse a process after a line the script forged claimed it clean', async () => {
    const sandbox = sandboxOf();
    const before = ok(await sandbox.run(script('acct-forge', '')));
    const forged = await sandbox.run(
      script(
        'acct-forge',
        `require('fs').writeSync(3, '{"t":"done","durationMs":1,"context":{},"run":"guess","reuse":true}\\n');
         setInterval(() => { globalThis.late = 1; }, 10);
         await new Promise(() => {});`,
      ),
    );
    const after = ok(await sandbox.run(script('acct-forge', SEES_NOTHING)));

    expect(forged.ok).toBe(true);
    expect(pidOf(forged)).toBe(pidOf(before));
    expect(pidOf(after)).not.toBe(pidOf(before));
    expect(said(after)).toEqual(['[]']);
  });

  it('replaces a process after maxRunsPerProcess runs', async () => {
    const sandbox = sandboxOf({ maxRunsPerProcess: 3 });
    const pids: number[] = [];
    for (let i = 0; i < 4; i++) pids.push(pidOf(ok(await sandbox.run(script('acct-k', '')))));
    expect(pids.slice(0, 3)).toEqual([pids[0], pids[0], pids[0]]);
    expect(pids[3]).not.toBe(pids[0]);
  });

  it('ends idle processes after idleTimeoutMs, and keeps at most maxIdlePerAccount', async () => {
    const sandbox = sandboxOf({ idleTimeoutMs: 300, maxIdlePerAccount: 1 });
    const first = pidOf(ok(await sandbox.run(script('acct-idle', ''))));
    await new Promise((resolve) => setTimeout(resolve, 700));
    const later = pidOf(ok(await sandbox.run(script('acct-idle', ''))));
    expect(later).not.toBe(first);

    const bounded = sandboxOf({ maxIdlePerAccount: 1 });
    const hold = 'await new Promise((resolve) => setTimeout(resolve, 200));';
    const together = await Promise.all([1, 2, 3].map(() => bounded.run(script('acct-idle', hold))));
    // Each says it is clean a moment after its result; then at most one is kept idle.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const again = await Promise.all([1, 2, 3].map(() => bounded.run(script('acct-idle', hold))));
    const before = new Set(together.map((r) => pidOf(ok(r))));
    expect(before.size).toBe(3);
    expect(again.map((r) => pidOf(ok(r))).filter((pid) => before.has(pid))).toHaveLength(1);
  });

  it('starts far fewer processes than it runs scripts', async () => {
    const sandbox = sandboxOf({ poolSize: 1 });
    for (let i = 0; i < 20; i++) ok(await sandbox.run(script('acct-count', `request.i = ${i};`)));
    // The pool's one spare plus its refills: never one per script.
    expect(sandbox.processesStarted).toBeLessThanOrEqual(4);
  });
});
