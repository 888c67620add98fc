import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBaselineDataMb, ScriptSandbox } from '../../src/sandbox/sandbox.js';
import type { ScriptRunRequest, ScriptRunResult } from '../../src/sandbox/types.js';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import { missingRequirement } from '../helpers/requirements.js';

const RUNTIME = '2026.04';
const runtimeDepsMissing = missingRequirement([
  {
    ok: existsSync(join(PACKAGE_ROOT, 'runtimes', RUNTIME, 'node_modules', 'lodash', 'package.json')),
    what: `the dependencies of runtime ${RUNTIME}`,
    install: `npm ci --prefix runtimes/${RUNTIME}`,
  },
]);

let root: string;
let tmpRoot: string;
let sandbox: ScriptSandbox;
const savedApiKey = process.env.API_KEY;

function script(code: string, extra: Partial<ScriptRunRequest> = {}): ScriptRunRequest {
  return {
    code,
    name: 'setup script',
    accountId: 'acct-sandbox',
    runtimeId: RUNTIME,
    env: { CHECK_NAME: 'sandbox test', REGION: 'eu-west-1' },
    context: {
      request: { method: 'GET', url: 'https://example.test/', body: '', headers: [], queryParameters: [] },
    },
    ...extra,
  };
}

function failure(result: ScriptRunResult) {
  if (result.ok) throw new Error(`expected a failure, got ok with logs ${JSON.stringify(result.logs)}`);
  return result;
}

/** The pid a script printed first (`console.log(process.pid)`). */
function printedPid(result: ScriptRunResult): number {
  return Number(result.logs[0]?.msg);
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (err) {
    expect((err as NodeJS.ErrnoException).code).toBe('ESRCH');
    return false;
  }
}

/** Pids of this process's children whose command line mentions `text` (Linux /proc). */
function childPids(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (ppid === process.pid && cmdline.includes(text)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'outpost-sandbox-test-'));
  tmpRoot = join(root, 'scripts');
  // A root agent runs scripts as another uid: the parent of their temp dirs must be reachable.
  await chmod(root, 0o711);
  await mkdir(tmpRoot, { mode: 0o711 });
  // The agent's own secret: a script must never see it.
  process.env.API_KEY = 'pl_agent_secret_0123456789abcdef';
  sandbox = new ScriptSandbox({ tmpRoot, poolSize: 2 });
  await sandbox.warm(RUNTIME);
});

afterAll(async () => {
  await sandbox?.close();
  if (savedApiKey === undefined) delete process.env.API_KEY;
  else process.env.API_KEY = savedApiKey;
  await rm(root, { recursive: true, force: true });
});

describe('ScriptSandbox: what a script sees and returns', () => {
  it('returns the request as a setup script changed it', async () => {
    const result = await sandbox.run(
      script(`
        request.method = 'POST';
        request.url = request.url + 'login?x=' + encodeURIComponent(process.env.REGION);
        request.body = JSON.stringify({ user: 'u' });
        request.headers.push({ key: 'Authorization', value: 'Bearer t' });
        request.queryParameters = [{ key: 'page', value: '2' }];
      `),
    );

    expect(result.ok).toBe(true);
    expect(result.ok && result.context.request).toEqual({
      method: 'POST',
      url: 'https://example.test/login?x=eu-west-1',
      body: '{"user":"u"}',
      headers: [{ key: 'Authorization', value: 'Bearer t' }],
      queryParameters: [{ key: 'page', value: '2' }],
    });
  });

  it('lets a teardown script change the response body and awaits its promises', async () => {
    const response = { statusCode: 200, statusText: 'OK', body: '{"n":1}', headers: {} };

    const result = await sandbox.run(
      script(
        `await new Promise((resolve) => setTimeout(resolve, 20));
         const data = JSON.parse(response.body);
         response.body = JSON.stringify({ n: data.n + 1 });`,
        { name: 'teardown script', context: { response } },
      ),
    );

    expect(result.ok && result.context.response).toEqual({ ...response, body: '{"n":2}' });
  });

  it('turns console output and process.stdout/stderr writes into logs, in order, with levels', async () => {
    const result = await sandbox.run(
      script(`
        console.log('one', 1);
        console.info({ two: 2 });
        console.warn('three');
        console.error('four');
        console.debug('five');
        process.stdout.write('six\\n');
        process.stderr.write('seven');
      `),
    );

    expect(result.ok).toBe(true);
    expect(result.logs.map((l) => [l.level, l.msg])).toEqual([
      ['INFO', 'one 1'],
      ['INFO', '{ two: 2 }'],
      ['WARN', 'three'],
      ['ERROR', 'four'],
      ['DEBUG', 'five'],
      ['INFO', 'six'],
      ['ERROR', 'seven'],
    ]);
    expect(Date.parse(result.logs[0]!.time)).not.toBeNaN();
  });

  it('returns the values the script put in SERVICE_SECRET_* variables', async () => {
    const result = await sandbox.run(
      script(`
        process.env.SERVICE_SECRET_TOKEN = 'tok-' + 'abc123';
        process.env['SERVICE_SECRET_OTHER'] = 'other-secret';
        process.env.NOT_SECRET = 'plain';
      `),
    );

    expect(result.ok).toBe(true);
    expect([...result.secrets].sort()).toEqual(['other-secret', 'tok-abc123']);
  });

  it('returns secrets set before the script timed out', async () => {
    const result = await sandbox.run(
      script(`process.env.SERVICE_SECRET_EARLY = 'early-secret'; for (;;) {}`, { timeoutMs: 500 }),
    );

    expect(failure(result).code).toBe('TIMEOUT');
    expect(result.secrets).toEqual(['early-secret']);
  });

  it('gives the script exactly the request env (plus HOME and TMPDIR in its temp dir), never the agent env', async () => {
    expect(process.env.API_KEY).toBeDefined();

    const result = await sandbox.run(
      script(`
        console.log(JSON.stringify(process.env));
        console.log(String(process.env.API_KEY));
        console.log(process.cwd());
      `),
    );

    expect(result.ok).toBe(true);
    const env = JSON.parse(result.logs[0]!.msg) as Record<string, string>;
    const cwd = result.logs[2]!.msg;
    expect(env).toEqual({ CHECK_NAME: 'sandbox test', REGION: 'eu-west-1', HOME: cwd, TMPDIR: cwd });
    expect(result.logs[1]!.msg).toBe('undefined');
    expect(cwd.startsWith(tmpRoot)).toBe(true);
  });

  it('lets the script write and read files in its temp dir, and removes the dir afterwards', async () => {
    const result = await sandbox.run(
      script(`
        const fs = require('node:fs');
        const path = require('node:path');
        const file = path.join(require('node:os').tmpdir(), 'note.txt');
        fs.writeFileSync(file, 'kept for the run');
        console.log(process.cwd());
        console.log(fs.readFileSync(file, 'utf8'));
      `),
    );

    expect(result.ok).toBe(true);
    expect(result.logs[1]!.msg).toBe('kept for the run');
    expect(existsSync(result.logs[0]!.msg)).toBe(false);
  });

  it('resolves require from the runtime dependencies, and import() too', async ({ skip }) => {
    if (runtimeDepsMissing !== null) skip(runtimeDepsMissing);

    const result = await sandbox.run(
      script(`
        const _ = require('lodash');
        const { v4 } = require('uuid');
        const { default: lodash } = await import('lodash');
        console.log(JSON.stringify(_.chunk([1, 2, 3], 2)), typeof v4(), lodash.chunk([1, 2], 1).length);
      `),
    );

    expect(result.ok ? result.logs.map((l) => l.msg) : result.reason).toEqual(['[[1,2],[3]] string 2']);
  });

  it('loads every dependency of the runtime', async ({ skip }) => {
    if (runtimeDepsMissing !== null) skip(runtimeDepsMissing);
    const manifest = join(PACKAGE_ROOT, 'runtimes', RUNTIME, 'package.json');
    const names = Object.keys(
      (JSON.parse(readFileSync(manifest, 'utf8')) as { dependencies: Record<string, string> }).dependencies,
    );

    const result = await sandbox.run(
      script(`for (const name of ${JSON.stringify(names)}) console.log(name, typeof require(name));`),
    );

    expect(result.ok ? result.logs.map((l) => l.msg) : result.reason).toEqual(
      names.map((name) => expect.stringMatching(new RegExp(`^${name} (object|function)$`))),
    );
  });

  it('reaches the network with fetch and axios, like a setup script fetching a token', async ({ skip }) => {
    if (runtimeDepsMissing !== null) skip(runtimeDepsMissing);
    const server = createServer((req, res) => res.end(JSON.stringify({ token: `t-${req.url}` })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const result = await sandbox.run(
        script(`
          const axios = require('axios');
          const a = await axios.get('http://127.0.0.1:${port}/axios');
          const f = await (await fetch('http://127.0.0.1:${port}/fetch')).json();
          request.headers.push({ key: 'Authorization', value: 'Bearer ' + a.data.token + ' ' + f.token });
        `),
      );

      expect(result.ok ? result.context.request : result.reason).toMatchObject({
        headers: [{ key: 'Authorization', value: 'Bearer t-/axios t-/fetch' }],
      });
    } finally {
      server.close();
    }
  });

  it('does not resolve the agent dependencies', async () => {
    const result = await sandbox.run(script(`require('fastify');`));

    expect(failure(result).code).toBe('THREW');
    expect(failure(result).reason).toMatch(/^setup script threw Error: Cannot find module 'fastify'/);
  });
});

describe('ScriptSandbox: what a script may not do', () => {
  let secretFile: string;

  beforeAll(async () => {
    secretFile = join(root, 'agent-secret.txt');
    await writeFile(secretFile, 'API_KEY=pl_agent_secret');
  });

  it('denies reading the agent files', async () => {
    for (const file of [secretFile, join(PACKAGE_ROOT, 'package.json')]) {
      const result = await sandbox.run(
        script(`console.log(require('fs').readFileSync(${JSON.stringify(file)}, 'utf8'));`),
      );

      expect(failure(result).code).toBe('PERMISSION_DENIED');
      expect(failure(result).reason).toBe(`setup script was denied FileSystemRead: ${file}`);
      expect(result.logs).toEqual([]);
    }
  });

  it('denies writing outside its temp dir', async () => {
    const target = join(root, 'written-by-script.txt');

    const result = await sandbox.run(
      script(`await require('fs/promises').writeFile(${JSON.stringify(target)}, 'x');`),
    );

    expect(failure(result).code).toBe('PERMISSION_DENIED');
    expect(failure(result).reason).toBe(`setup script was denied FileSystemWrite: ${target}`);
    expect(existsSync(target)).toBe(false);
  });

  it('denies child processes, workers, node:sqlite, and signals to other processes', async () => {
    const cases = [
      // Node 24 names the program (`ChildProcess: /bin/sh`); Node 20 does not.
      [`require('child_process').exec('id', () => {});`, /^setup script was denied ChildProcess(: \S+)?$/],
      [
        `require('node:child_process').spawnSync('/bin/sh', ['-c', 'id']);`,
        /^setup script was denied ChildProcess(: \/bin\/sh)?$/,
      ],
      [
        `new (require('worker_threads').Worker)('1', { eval: true });`,
        'setup script was denied WorkerThreads',
      ],
      [`require('node:sqlite');`, 'setup script was denied Module: node:sqlite'],
      // Signal 0 only probes: should the guard fail, the test process is unharmed.
      [`process.kill(process.ppid, 0);`, `setup script was denied Signal: pid ${process.pid}`],
      [`process._debugProcess(process.ppid);`, `setup script was denied Inspector: pid ${process.pid}`],
      [`require('os').setPriority(process.ppid, 19);`, `setup script was denied Signal: pid ${process.pid}`],
    ] as const;
    for (const [code, reason] of cases) {
      const result = await sandbox.run(script(code));

      expect(failure(result).code, code).toBe('PERMISSION_DENIED');
      if (typeof reason === 'string') expect(failure(result).reason, code).toBe(reason);
      else expect(failure(result).reason, code).toMatch(reason);
    }
  });

  it('kills an endless loop at its time limit, with its whole process group', async () => {
    const t0 = performance.now();

    const result = await sandbox.run(script('console.log(process.pid); for (;;) {}', { timeoutMs: 1_000 }));

    const elapsedMs = performance.now() - t0;
    expect(failure(result).code).toBe('TIMEOUT');
    expect(failure(result).reason).toBe('setup script timed out after 1000 ms');
    expect(elapsedMs).toBeGreaterThanOrEqual(1_000);
    expect(elapsedMs).toBeLessThan(2_000);
    expect(groupAlive(printedPid(result))).toBe(false);
  });

  it('stops a script when the caller aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200).unref();

    const result = await sandbox.run(
      script('console.log(process.pid); await new Promise(() => setInterval(() => {}, 1000));', {
        signal: controller.signal,
      }),
    );

    expect(failure(result).code).toBe('ABORTED');
    expect(failure(result).reason).toBe('setup script was aborted');
    expect(groupAlive(printedPid(result))).toBe(false);
  });

  it('fails a flood of output at the output limit, keeping the output up to it', async () => {
    const result = await sandbox.run(
      script(`for (let i = 0; ; i++) console.log(i + ' ' + 'x'.repeat(1000));`),
    );

    expect(failure(result).code).toBe('OUTPUT_LIMIT');
    expect(failure(result).reason).toBe('setup script wrote more than 1048576 bytes of output');
    const bytes = result.logs.reduce((sum, l) => sum + Buffer.byteLength(l.msg), 0);
    expect(bytes).toBe(1_048_576);
    expect(result.logs[0]!.msg).toBe(`0 ${'x'.repeat(1000)}`);
  });

  it('reports process.exit, a throw with its line, a syntax error and an unhandled rejection', async () => {
    const cases = [
      ['console.log("bye");\nprocess.exit(3);', 'EXITED', 'setup script called process.exit(3)'],
      [
        'const a = 1;\n\nthrow new TypeError("bad input " + a);',
        'THREW',
        'setup script threw TypeError: bad input 1 (line 3, column 7)',
      ],
      ['const x = ;', 'THREW', "setup script has a syntax error: SyntaxError: Unexpected token ';' (line 1)"],
      [
        'setTimeout(() => { throw new Error("later"); }, 1);\nawait new Promise((r) => setTimeout(r, 1000));',
        'THREW',
        'setup script threw Error: later (line 1, column 26)',
      ],
      ['throw "plain";', 'THREW', 'setup script threw plain'],
      [
        'await new Promise(() => {});',
        'EXITED',
        'setup script ended before it finished (exit code 0): nothing was left to run while it awaited a promise',
      ],
    ] as const;
    for (const [code, expected, reason] of cases) {
      const result = await sandbox.run(script(code));

      expect(failure(result).code, code).toBe(expected);
      expect(failure(result).reason, code).toBe(reason);
    }
  });
});

describe('ScriptSandbox: memory', () => {
  let small: ScriptSandbox;

  beforeAll(() => {
    small = new ScriptSandbox({ tmpRoot, poolSize: 0, memoryLimitMb: 32 });
  });

  afterAll(() => small.close());

  it('fails a script that fills its JavaScript heap with OUT_OF_MEMORY', async () => {
    const result = await small.run(
      script('const keep = []; for (let i = 0; ; i++) keep.push({ i, s: "x" + i });'),
    );

    expect(failure(result).code).toBe('OUT_OF_MEMORY');
    expect(failure(result).reason).toBe('setup script ran out of memory: its JavaScript heap may use 32 MiB');
    expect(result.logs.every((l) => !l.msg.includes('FATAL'))).toBe(true);
  });

  it('fails a script that allocates Buffers without bound with OUT_OF_MEMORY', async () => {
    const result = await small.run(
      script('const keep = []; for (;;) keep.push(Buffer.alloc(16 * 1024 * 1024, 1));', { timeoutMs: 5_000 }),
    );

    expect(failure(result).code).toBe('OUT_OF_MEMORY');
    // Whichever allocation meets RLIMIT_DATA first fails: the Buffer's, or one of V8's own.
    // The limit: what Node maps before any script (version-dependent) + 32 MiB heap + 128 MiB off-heap.
    const limitMb = (await nodeBaselineDataMb(32)) + 32 + 128;
    expect(failure(result).reason).toMatch(
      new RegExp(
        `^setup script ran out of memory: its process may use ${limitMb} MiB( \\(RangeError: (Array buffer allocation failed|Failed to allocate memory)\\))?$`,
      ),
    );
  });
});

describe('ScriptSandbox: the agent keeps working', () => {
  it('runs a normal script while others flood, loop and exhaust memory', async () => {
    const small = new ScriptSandbox({ tmpRoot, poolSize: 1, memoryLimitMb: 32 });
    try {
      const [flood, loop, oom, normal] = await Promise.all([
        small.run(script('for (;;) console.log("x".repeat(4096));')),
        small.run(script('for (;;) {}', { timeoutMs: 1_500 })),
        small.run(script('const keep = []; for (;;) keep.push(new Array(1e5).fill(1));')),
        small.run(script('await new Promise((r) => setTimeout(r, 100)); request.url = "https://ok.test/";')),
      ]);

      expect(failure(flood).code).toBe('OUTPUT_LIMIT');
      expect(failure(loop).code).toBe('TIMEOUT');
      expect(failure(oom).code).toBe('OUT_OF_MEMORY');
      expect(normal.ok && (normal.context.request as { url: string }).url).toBe('https://ok.test/');
    } finally {
      await small.close();
    }
  });

  it('reports an unknown runtime and bad options without starting anything', async () => {
    const result = await sandbox.run(script('1', { runtimeId: '../etc' }));

    expect(failure(result).code).toBe('SANDBOX_ERROR');
    expect(failure(result).reason).toBe(
      'setup script could not run: runtime id "../etc" is not a runtime name',
    );
    expect(() => new ScriptSandbox({ poolSize: -1 })).toThrow(
      'ScriptSandbox option poolSize must be an integer from 0 to 32, got -1',
    );
  });

  it('runs scripts of a runtime without installed dependencies, and says how to install them', async () => {
    const runtimesDir = join(root, 'runtimes');
    await mkdir(join(runtimesDir, '2099.01'), { recursive: true });
    const bare = new ScriptSandbox({ runtimesDir, tmpRoot, poolSize: 0 });
    try {
      const builtins = await bare.run(
        script('console.log(require("node:path").join("a", "b"));', { runtimeId: '2099.01' }),
      );
      const lodash = await bare.run(script('require("lodash");', { runtimeId: '2099.01' }));

      expect(builtins.ok && builtins.logs.map((l) => l.msg)).toEqual(['a/b']);
      expect(failure(lodash).reason).toBe(
        `setup script threw Error: Cannot find module 'lodash': the dependencies of runtime 2099.01 are not installed (run npm ci --prefix ${join(runtimesDir, '2099.01')}) (line 1, column 1)`,
      );
    } finally {
      await bare.close();
    }
  });

  it('runs scripts in its warm processes, kills them and removes every temp dir on close', async () => {
    const ownRoot = await mkdtemp(join(root, 'pool-'));
    const pooled = new ScriptSandbox({ tmpRoot: ownRoot, poolSize: 2 });
    await pooled.warm(RUNTIME);
    const pids = childPids(ownRoot);
    expect(pids).toHaveLength(2);
    const ran = await pooled.run(script('console.log(process.pid);'));
    expect(pids).toContain(printedPid(ran));

    await pooled.close();

    for (const pid of pids) expect(groupAlive(pid)).toBe(false);
    expect(childPids(ownRoot)).toEqual([]);
    expect(await readdir(ownRoot)).toEqual([]);
    const after = await pooled.run(script('1'));
    expect(failure(after).reason).toBe('setup script could not run: the script sandbox is closed');
  });
});
