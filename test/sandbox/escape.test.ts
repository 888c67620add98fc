import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SCRIPT_UIDS, ScriptSandbox } from '../../src/sandbox/sandbox.js';
import type { ScriptRunRequest, ScriptRunResult } from '../../src/sandbox/types.js';
import { PACKAGE_ROOT } from '../../src/common/paths.js';

const RUNTIME = '2026.04';
const isRoot = process.getuid?.() === 0;

let root: string;
let sandbox: ScriptSandbox;
/** SIGUSR2s this process received: a script reaching the agent with a signal counts here. */
let sigusr2 = 0;
const onSigusr2 = () => {
  sigusr2++;
};

function script(code: string, extra: Partial<ScriptRunRequest> = {}): ScriptRunRequest {
  return {
    code,
    name: 'setup script',
    accountId: 'acct-escape',
    runtimeId: RUNTIME,
    env: {},
    context: {},
    ...extra,
  };
}

function failure(result: ScriptRunResult) {
  if (result.ok) throw new Error(`expected a failure, got ok with logs ${JSON.stringify(result.logs)}`);
  return result;
}

/** True when something accepts TCP connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'outpost-escape-test-'));
  // Script processes of a root agent run as another uid: their temp dirs' parent must be reachable.
  await chmod(root, 0o711);
  await mkdir(join(root, 'scripts'), { mode: 0o711 });
  process.on('SIGUSR2', onSigusr2);
  sandbox = new ScriptSandbox({ tmpRoot: join(root, 'scripts'), poolSize: 2 });
  await sandbox.warm(RUNTIME);
});

afterAll(async () => {
  await sandbox?.close();
  process.off('SIGUSR2', onSigusr2);
  await rm(root, { recursive: true, force: true });
});

/**
 * Every way a script could name the agent's pid (this test process is its parent): numbers,
 * strings, floats, negative pids and -1, and objects that answer the guard one pid and the
 * kill another (valueOf, toString, Symbol.toPrimitive, getters, Proxies).
 */
const HOSTILE_PIDS = [
  'process.ppid',
  'String(process.ppid)',
  "' ' + process.ppid",
  "process.ppid + '.0'",
  "'0x' + process.ppid.toString(16)",
  'process.ppid + 0.5',
  '-process.ppid',
  '-1',
  "'-1'",
  'process.pid + 0.000001',
  'Number.NaN',
  'null',
  'undefined',
  'true',
  '[process.ppid]',
  '{ n: 0, valueOf() { return this.n++ === 0 ? process.pid : process.ppid; } }',
  '{ n: 0, toString() { return String(this.n++ === 0 ? process.pid : process.ppid); } }',
  '{ n: 0, [Symbol.toPrimitive]() { return this.n++ === 0 ? process.pid : process.ppid; } }',
  '{ n: 0, [Symbol.toPrimitive]() { return this.n++ === 0 ? 0 : -1; } }',
  '{ n: 0, valueOf() { return this.n++ === 0 ? -process.pid : -process.ppid; } }',
  "Object.defineProperty({}, 'valueOf', { get() { return () => process.ppid; } })",
  'new Proxy({}, { get: (t, k) => (k === Symbol.toPrimitive || k === "valueOf" ? () => process.ppid : undefined) })',
  'new Number(process.ppid)',
  'new String(String(process.pid))',
  'Object(BigInt(process.ppid))',
  'BigInt(process.ppid)',
];

/** The calls a script could signal with, `PID` standing for one of HOSTILE_PIDS. */
const SIGNAL_CALLS = [
  "process.kill(PID, 'SIGUSR2')",
  'process.kill(PID, 12)',
  'process._kill(PID, 12)',
  "Reflect.apply(process.kill, null, [PID, 'SIGUSR2'])",
  "require('node:process').kill(PID, 'SIGUSR2')",
  "process.getBuiltinModule?.('process').kill(PID, 'SIGUSR2') ?? process.kill(PID, 'SIGUSR2')",
  "require('os').setPriority(PID, 19)",
];

describe('script sandbox: no escape through signals, bindings or the inspector', () => {
  it('denies every signal path to the agent, whatever form the pid takes, and the agent gets nothing', async () => {
    // One script per form of the pid (a denial ends a run, whose process is then replaced: a script per call
    // took 200 processes). It makes every call but the first inside a try/catch and logs what each threw, as a
    // script that tries them all would, and then the first one uncaught: the run itself must end denied.
    const source = (pid: string) =>
      [
        ...SIGNAL_CALLS.slice(1).map(
          (call) =>
            `try { ${call.replace('PID', pid)}; console.log('not denied'); } catch (err) { console.log(JSON.stringify([err.code, err.permission, String(err.message)])); }`,
        ),
        `${(SIGNAL_CALLS[0] as string).replace('PID', pid)};`,
      ].join('\n');
    const results = [];
    for (let at = 0; at < HOSTILE_PIDS.length; at += 8) {
      const batch = HOSTILE_PIDS.slice(at, at + 8);
      results.push(...(await Promise.all(batch.map((pid) => sandbox.run(script(source(pid)))))));
    }

    expect(results).toHaveLength(HOSTILE_PIDS.length);
    for (const [index, result] of results.entries()) {
      const pid = HOSTILE_PIDS[index];
      expect(failure(result).code, pid).toBe('PERMISSION_DENIED');
      expect(failure(result).reason, pid).toMatch(/^setup script was denied Signal: pid /);
      const caught = result.logs.map((log) => log.msg);
      expect(caught, pid).toHaveLength(SIGNAL_CALLS.length - 1);
      for (const [at, line] of caught.entries()) {
        const call = SIGNAL_CALLS[at + 1];
        expect(line, `${call} with ${pid}`).not.toBe('not denied');
        const [code, permission, message] = JSON.parse(line) as [string, string, string];
        expect([code, permission], `${call} with ${pid}`).toEqual(['ERR_ACCESS_DENIED', 'Signal']);
        expect(message, `${call} with ${pid}`).toMatch(/^Access to pid .* is not allowed in scripts$/);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sigusr2).toBe(0);
  }, 120_000);

  it('denies the inspector and the raw bindings, and SIGUSR1 to the agent opens no inspector', async () => {
    const cases = [
      ['process._debugProcess(process.ppid);', 'Inspector'],
      ['process._debugProcess(process.pid);', 'Inspector'],
      ['process._debugEnd(process.pid);', 'Inspector'],
      ["require('inspector').open(0);", 'Module: node:inspector'],
      ["require('node:inspector/promises');", 'Module: node:inspector/promises'],
      ["process.getBuiltinModule?.('inspector') ?? require('inspector');", 'Module: node:inspector'],
      ["await import('node:inspector');", 'Module: node:inspector'],
      ["process.binding('process_methods').kill(process.ppid, 10);", 'Binding: process.binding'],
      ["process._linkedBinding('process_methods');", 'Binding: process._linkedBinding'],
      ["process.kill(process.ppid, 'SIGUSR1');", `Signal: pid ${process.pid}`],
    ] as const;
    for (const [code, denied] of cases) {
      const result = await sandbox.run(script(code));

      expect(failure(result).code, code).toBe('PERMISSION_DENIED');
      expect(
        failure(result).reason.startsWith(`setup script was denied ${denied}`),
        failure(result).reason,
      ).toBe(true);
    }
    expect(await listening(9229)).toBe(false);
  });

  it('starts scripts without the agent’s inspector flags or NODE_OPTIONS', async () => {
    const saved = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = '--inspect=127.0.0.1:9230';
    try {
      const result = await sandbox.run(
        script(
          'console.log(JSON.stringify([process.execArgv.filter((f) => /inspect|debug/.test(f)), process.env.NODE_OPTIONS ?? null]));',
        ),
      );
      expect(result.ok).toBe(true);
      expect(result.logs.map((l) => l.msg)).toEqual(['[[],null]']);
      expect(await listening(9230)).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = saved;
    }
  });

  it('still lets a script signal itself and its own process group', async () => {
    const result = await sandbox.run(
      script(
        'console.log([process.kill(process.pid, 0), process.kill(String(process.pid), 0), process.kill(-process.pid, 0), process.kill(0, 0)].join());',
      ),
    );

    expect(result.ok).toBe(true);
    expect(result.logs.map((l) => l.msg)).toEqual(['true,true,true,true']);
  });

  it.skipIf(!isRoot)(
    'runs scripts as a uid and gid of their own when the agent is root: the kernel refuses their signals to the agent',
    async () => {
      const result = await sandbox.run(
        script('console.log(JSON.stringify([process.getuid(), process.getgid(), process.getgroups()]));'),
      );
      expect(result.ok).toBe(true);
      const [uid, gid, groups] = JSON.parse(result.logs[0]?.msg ?? '[]') as [number, number, number[]];
      expect(uid).toBeGreaterThanOrEqual(DEFAULT_SCRIPT_UIDS.first);
      expect(uid).toBeLessThan(DEFAULT_SCRIPT_UIDS.first + DEFAULT_SCRIPT_UIDS.count);
      expect(gid).toBe(uid);
      expect(groups.filter((g) => g !== gid)).toEqual([]);

      // The JS guard cannot be bypassed from inside, so bypass it from outside: a plain Node
      // process of the script's uid and gid calls kill(agent pid, 0) itself.
      const probe = spawnSync(
        process.execPath,
        [
          '-e',
          `try { process.kill(${process.pid}, 0); console.log('SENT'); } catch (e) { console.log(e.code); }`,
        ],
        { uid, gid, encoding: 'utf8', cwd: '/', env: {} },
      );
      expect(probe.stdout.trim()).toBe('EPERM');

      // Two scripts at once never share a uid: they cannot signal each other either.
      const pair = await Promise.all(
        [1, 2].map(() =>
          sandbox.run(script('console.log(process.getuid()); await new Promise((r) => setTimeout(r, 300));')),
        ),
      );
      expect(new Set(pair.map((r) => r.logs[0]?.msg)).size).toBe(2);
    },
  );

  /** Starts `args` under Node with tsx, waits for `ready` on stdout, sends SIGUSR1 twice, asserts no inspector. */
  async function noInspectorOnSigusr1(args: string[], ready: string, env: NodeJS.ProcessEnv): Promise<void> {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      cwd: PACKAGE_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          stdout += d.toString();
          if (stdout.includes(ready)) resolve();
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
      });
      for (let n = 0; n < 2; n++) {
        child.kill('SIGUSR1');
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      expect(child.exitCode).toBe(null);
      expect(child.signalCode).toBe(null);
      expect(stderr).not.toContain('Debugger listening');
      expect(await listening(9229)).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  }

  it('leaves no inspector to open with SIGUSR1 in a process that runs scripts', async () => {
    // A real Node process constructs a ScriptSandbox: without the guard, SIGUSR1 would open
    // its inspector on 127.0.0.1:9229.
    await noInspectorOnSigusr1(
      [
        '-e',
        `import('${join(PACKAGE_ROOT, 'src/sandbox/sandbox.ts')}').then((m) => { new m.ScriptSandbox({ poolSize: 0 }); console.log('up'); setTimeout(() => {}, 60_000); });`,
      ],
      'up',
      {},
    );
  }, 30_000);

  it('opens no inspector when a real agent gets SIGUSR1', async () => {
    // `outpost agent` against a service that refuses connections: it keeps polling, and runs.
    await noInspectorOnSigusr1(['src/cli.ts', 'agent'], '"msg":"health server listening"', {
      API_KEY: 'pl_escape_test_key',
      SERVICE_URL: 'http://127.0.0.1:9',
      AGENT_HEALTH_PORT: '0',
    });
  }, 30_000);
});
