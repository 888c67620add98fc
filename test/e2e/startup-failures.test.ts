import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, freePort } from '../helpers/cli.js';
import { missingRequirement } from '../helpers/requirements.js';

/** Runs `outpost <args>` to its end; stdout and stderr apart. */
function run(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`outpost ${args.join(' ')} still runs after ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Asserts one explaining line on stderr, naming `name`, without a stack trace. */
function expectOneLine(stderr: string, ...names: (string | RegExp)[]): void {
  const lines = stderr.trimEnd().split('\n');
  expect(lines, stderr).toHaveLength(1);
  for (const name of names) expect(lines[0]).toMatch(name);
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(stderr).not.toMatch(/cannot rollback|malformed/);
}

function listenOn(port: number, host?: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port, ...(host ? { host } : {}) }, () => resolve(server));
  });
}

const canMount = (() => {
  const probe = mkdtempSync(join(tmpdir(), 'outpost-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
})();

describe('start-up failures explain themselves in one line (issue 9 item 2.10)', () => {
  const apiKey = `op_e2e_${'s'.repeat(40)}`;
  const mounts: string[] = [];
  let base: string;
  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'outpost-e2e-startup-'));
  });
  afterAll(() => {
    for (const dir of mounts) {
      // Lazy: a process a failed test left on the mount must not turn the clean-up into a second failure.
      execFileSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    }
    rmSync(base, { recursive: true, force: true });
  });

  it.each(['service', 'up'])(
    '%s: a taken PORT',
    async (command) => {
      const port = await freePort();
      const taken = await listenOn(port, '127.0.0.1');
      const dataDir = join(base, `port-${command}`);
      try {
        const res = await run([command], {
          PORT: String(port),
          OUTPOST_DATA_DIR: dataDir,
          AGENT_HEALTH_PORT: String(await freePort()),
        });
        expect(res.code).toBe(1);
        expectOneLine(res.stderr, `PORT=${port}`, /already in use/, /set PORT to a free port/);
        expect(res.stdout).not.toMatch(/API key/);
      } finally {
        taken.close();
      }
      // The key was not spent on the failed start: the next start prints it.
      const port2 = await freePort();
      const child = spawn(process.execPath, [CLI, 'service'], {
        env: { PATH: process.env.PATH ?? '', PORT: String(port2), OUTPOST_DATA_DIR: dataDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString('utf8');
      });
      await expect.poll(() => out, { timeout: 20_000 }).toMatch(/service is listening/);
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      expect(out).toMatch(/API key: {4}op_/);
    },
    60_000,
  );

  it('service: a HOST that does not resolve is named as HOST, not as a PORT problem', async () => {
    const res = await run(['service'], {
      HOST: 'outpost-no-such-host.invalid',
      PORT: String(await freePort()),
      OUTPOST_DATA_DIR: join(base, 'host'),
    });
    expect(res.code).toBe(1);
    expectOneLine(res.stderr, 'HOST=outpost-no-such-host.invalid', /does not resolve/);
    expect(res.stderr).not.toMatch(/PORT=/);
  });

  it('up: a taken AGENT_HEALTH_PORT is found before the API key is printed', async () => {
    const healthPort = await freePort();
    const taken = await listenOn(healthPort);
    try {
      const res = await run(['up'], {
        PORT: String(await freePort()),
        OUTPOST_DATA_DIR: join(base, 'up-health'),
        AGENT_HEALTH_PORT: String(healthPort),
      });
      expect(res.code).toBe(1);
      expectOneLine(res.stderr, `AGENT_HEALTH_PORT=${healthPort}`, /already in use/);
      expect(res.stdout).not.toMatch(/API key|is up/);
      // Nothing was created either.
      expect(existsSync(join(base, 'up-health', 'outpost.db'))).toBe(false);
    } finally {
      taken.close();
    }
  });

  it('agent: a taken AGENT_HEALTH_PORT', async () => {
    const healthPort = await freePort();
    const taken = await listenOn(healthPort);
    try {
      const res = await run(['agent'], {
        API_KEY: apiKey,
        SERVICE_URL: 'http://127.0.0.1:9',
        AGENT_HEALTH_PORT: String(healthPort),
      });
      expect(res.code).toBe(1);
      expectOneLine(res.stderr, /^outpost agent: /, `AGENT_HEALTH_PORT=${healthPort}`, /already in use/);
    } finally {
      taken.close();
    }
  });

  it('a missing data directory is created, parents too', async () => {
    const dataDir = join(base, 'missing', 'a', 'b');
    const child = spawn(process.execPath, [CLI, 'service'], {
      env: { PATH: process.env.PATH ?? '', PORT: String(await freePort()), OUTPOST_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
    });
    await expect.poll(() => out, { timeout: 20_000 }).toMatch(/service is listening/);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    expect(existsSync(join(dataDir, 'outpost.db'))).toBe(true);
  }, 30_000);

  it.each([
    ['the data directory is a file', (dir: string) => writeFileSync(dir, 'not a folder'), ''],
    ['a parent of the data directory is a file', (dir: string) => writeFileSync(dir, 'x'), 'sub/data'],
  ])('%s', async (_name, prepare, below) => {
    const file = join(base, `file-${below ? 'parent' : 'self'}`);
    prepare(file);
    const dataDir = below ? join(file, below) : file;
    const res = await run(['service'], { PORT: String(await freePort()), OUTPOST_DATA_DIR: dataDir });
    expect(res.code).toBe(1);
    expectOneLine(res.stderr, 'OUTPOST_DATA_DIR', dataDir, /E(NOTDIR|EXIST)/);
  });

  describe.skipIf(
    missingRequirement([{ ok: canMount, what: 'tmpfs mounts', install: 'run the tests as root' }]),
  )('on real mounts', () => {
    function mount(options: string): string {
      const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-mount-'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir]);
      mounts.push(dir);
      return dir;
    }

    it.each([
      ['the data directory', ''],
      ['a missing data directory below', 'below/data'],
    ])('read-only: %s', async (_name, below) => {
      const dir = mount('ro,size=1m');
      const dataDir = below ? join(dir, below) : dir;
      const res = await run(['service'], { PORT: String(await freePort()), OUTPOST_DATA_DIR: dataDir });
      expect(res.code).toBe(1);
      expectOneLine(res.stderr, 'OUTPOST_DATA_DIR', dataDir, /read-only/, /EROFS|SQLITE_READONLY/);
    });

    it('full: an empty 64 KiB disk', async () => {
      const dir = mount('size=64k');
      const res = await run(['service'], { PORT: String(await freePort()), OUTPOST_DATA_DIR: dir });
      expect(res.code).toBe(1);
      expectOneLine(res.stderr, 'OUTPOST_DATA_DIR', dir, /is full/, /SQLITE_FULL|ENOSPC/);
    });

    /** Starts `outpost service` on `dataDir` until it listens; returns it and its output so far. */
    async function startListening(dataDir: string, apiKey?: string) {
      const port = await freePort();
      const child = spawn(process.execPath, [CLI, 'service'], {
        env: {
          PATH: process.env.PATH ?? '',
          PORT: String(port),
          OUTPOST_DATA_DIR: dataDir,
          ...(apiKey ? { OUTPOST_API_KEY: apiKey } : {}),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      const collect = (c: Buffer) => {
        out += c.toString('utf8');
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      const exited = new Promise<number | string>((resolve) =>
        child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
      );
      await expect.poll(() => out, { timeout: 20_000 }).toMatch(/service is listening/);
      return { child, port, exited, output: () => out };
    }

    /** Fills the disk of `dir` with a file, leaving `leaveKiB` KiB free. */
    function fill(dir: string, leaveKiB: number): void {
      const free = Number(
        execFileSync('df', ['-k', '--output=avail', dir], { encoding: 'utf8' }).split('\n')[1],
      );
      execFileSync(
        'dd',
        ['if=/dev/zero', `of=${join(dir, 'filler')}`, 'bs=1k', `count=${Math.max(0, free - leaveKiB)}`],
        {
          stdio: 'ignore',
        },
      );
    }

    // A store made earlier, the disk then filled: the store opens (nothing to migrate), so before the write
    // probe the service said "service listening" and failed every write after (or died of SIGBUS).
    it.each([0, 64, 1024])(
      'full: a store made earlier, its disk then filled to %i KiB free',
      async (leaveKiB) => {
        const dir = mount('size=16m');
        const first = await startListening(dir);
        first.child.kill('SIGTERM');
        expect(await first.exited).toBe(0);
        fill(dir, leaveKiB);
        const res = await run(['service'], { PORT: String(await freePort()), OUTPOST_DATA_DIR: dir });
        expect(res.code).toBe(1);
        expectOneLine(res.stderr, 'OUTPOST_DATA_DIR', dir, /is full/, /SQLITE_FULL|SQLITE_IOERR|ENOSPC/);
        expect(res.stdout).not.toMatch(/listening/);
        // Nothing of the probe is left behind; with room again the same store starts.
        rmSync(join(dir, 'filler'));
        const again = await startListening(dir);
        again.child.kill('SIGTERM');
        expect(await again.exited).toBe(0);
      },
      60_000,
    );

    it('full while running: writes are refused with SQLITE_FULL, the service lives on', async () => {
      const dir = mount('size=16m');
      const key = `op_e2e_${'f'.repeat(40)}`;
      const service = await startListening(dir, key);
      try {
        fill(dir, 0);
        // The write-ahead log already on disk takes writes until it is used up (a few MB): then SQLITE_FULL.
        // 128 KB values (the largest a variable takes): the 16 MB mount is used up within about 130 writes. A
        // deadline keeps a slow machine from running into the test's timeout with the service still up.
        const statuses: number[] = [];
        const deadline = Date.now() + 45_000;
        for (let i = 0; i < 1000 && !statuses.includes(500) && Date.now() < deadline; i++) {
          const res = await fetch(`http://127.0.0.1:${service.port}/v1/variables`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ key: `FULL_${i}`, value: 'x'.repeat(131_072) }),
          });
          statuses.push(res.status);
        }
        expect(statuses).toContain(500);
        expect(new Set(statuses)).toEqual(new Set([201, 500]));
        await expect.poll(() => service.output(), { timeout: 5_000 }).toMatch(/"code":"SQLITE_FULL"/);
        expect(service.output()).not.toMatch(/cannot rollback/);
        // Reads still work, and the process did not die (SIGBUS would end it with exit 135).
        const read = await fetch(`http://127.0.0.1:${service.port}/v1/variables`, {
          headers: { authorization: `Bearer ${key}` },
        });
        expect(read.status).toBe(200);
        rmSync(join(dir, 'filler'));
        const after = await fetch(`http://127.0.0.1:${service.port}/v1/variables`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ key: 'ROOM_AGAIN', value: 'y' }),
        });
        expect(after.status).toBe(201);
      } finally {
        service.child.kill('SIGTERM');
      }
      expect(await service.exited).toBe(0);
    }, 90_000);
  });
});

describe('a SIGTERM as soon as the banner is out', () => {
  it('stops the service cleanly (exit 0), never by the signal: the handlers are in place before the banner', async () => {
    for (let i = 0; i < 5; i++) {
      const dataDir = mkdtempSync(join(tmpdir(), 'outpost-e2e-early-signal-'));
      try {
        const child = spawn(process.execPath, [CLI, 'service'], {
          env: { PATH: process.env.PATH ?? '', PORT: String(await freePort()), OUTPOST_DATA_DIR: dataDir },
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        let sent = false;
        child.stdout.on('data', (chunk: Buffer) => {
          // The moment the banner arrives, as a process manager or a test would.
          if (!sent && chunk.toString('utf8').includes('service is listening')) {
            sent = true;
            child.kill('SIGTERM');
          }
        });
        const exit = await new Promise<number | string>((resolve) =>
          child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
        );
        expect(sent).toBe(true);
        expect(exit).toBe(0);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  }, 60_000);
});

describe('outpost <command> --help', () => {
  it.each(['up', 'service', 'agent'])(
    '%s --help prints what it does and exits 0, starting nothing and creating no data folder',
    async (command) => {
      const cwd = mkdtempSync(join(tmpdir(), 'outpost-help-'));
      try {
        const port = await freePort();
        const held = await listenOn(port, '127.0.0.1');
        try {
          // Were the command started, it would fail on the taken port (and up/service would create ./data).
          const env = {
            PORT: String(port),
            AGENT_HEALTH_PORT: String(port),
            OUTPOST_DATA_DIR: join(cwd, 'data'),
          };
          for (const flag of ['--help', '-h']) {
            const { code, stdout, stderr } = await run([command, flag], env, 10_000);
            expect(code).toBe(0);
            expect(stdout).toMatch(new RegExp(`^outpost ${command}: `));
            expect(stdout).toContain('docs/configuration.md');
            expect(stderr).toBe('');
          }
          const bad = await run([command, '--port=4000'], env, 10_000);
          expect(bad.code).toBe(2);
          expect(bad.stderr).toContain(`outpost ${command} takes no argument, got "--port=4000"`);
          expect(existsSync(join(cwd, 'data'))).toBe(false);
        } finally {
          held.close();
        }
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    },
  );
});
