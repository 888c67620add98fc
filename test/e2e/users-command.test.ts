import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, type CliProcess, freePort, spawnCli, stopCli } from '../helpers/cli.js';

/**
 * The first person of a fresh store (printed once by the service's first start, OUTPOST_ADMIN_EMAIL) and
 * `outpost users create` on the store the service uses, with a generated or a piped password; both sign in
 * by password over HTTP, and no password is in the service's log lines.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'outpost-users-cli-'));
let service: CliProcess | undefined;
afterAll(async () => {
  await stopCli(service);
  rmSync(dataDir, { recursive: true, force: true });
});

/** Runs `outpost users …` with `input` on stdin; its exit status and output. */
function users(args: string[], input = '') {
  const run = spawnSync(process.execPath, [CLI, 'users', ...args], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      OUTPOST_DATA_DIR: dataDir,
    },
    input,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** POST /auth/session with an email and password; the status. */
async function signIn(url: string, email: string, password: string): Promise<number> {
  const res = await fetch(`${url}/auth/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return res.status;
}

describe('people from the command line', () => {
  it('the first start prints the first person; outpost users create adds more', async () => {
    const refused = users(['create', '--email', 'early@example.test']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('start the service once first');

    const port = await freePort();
    service = spawnCli(['service'], {
      PORT: String(port),
      HOST: '127.0.0.1',
      OUTPOST_DATA_DIR: dataDir,
      OUTPOST_ADMIN_EMAIL: 'Ops@Example.test',
    });
    await service.waitFor(/service is listening/);
    const line = await service.waitFor(/^ {2}password: {3}\S+$/);
    const adminPassword = line.trim().split(/\s+/)[1]!;
    expect(service.output()).toContain('sign in as: ops@example.test (OWNER)');
    const url = `http://127.0.0.1:${port}`;
    expect(await signIn(url, 'ops@example.test', adminPassword)).toBe(200);

    const made = users(['create', '--email', 'Ada@Example.test', '--name', 'Ada', '--role', 'READ_ONLY']);
    expect(made.status, made.stderr).toBe(0);
    expect(made.stdout).toContain('created ada@example.test (READ_ONLY)');
    const generated = /password: (\S+)/.exec(made.stdout)![1]!;
    expect(await signIn(url, 'ada@example.test', generated)).toBe(200);

    const piped = users(
      ['create', '--email', 'bo@example.test', '--password-stdin'],
      'a piped long password\n',
    );
    expect(piped.status, piped.stderr).toBe(0);
    expect(piped.stdout).not.toContain('password:');
    expect(await signIn(url, 'bo@example.test', 'a piped long password')).toBe(200);

    expect(users(['create', '--email', 'ada@example.test']).status).toBe(1);
    expect(users(['create', '--email', 'cy@example.test', '--password-stdin'], 'short\n').status).toBe(1);
    expect(users(['create', '--email', 'cy@example.test', '--role', 'KING']).status).toBe(2);
    expect(users(['create']).status).toBe(2);

    // The service's output (its banner and JSON log lines) shows the first password once, in the banner.
    const output = service.output();
    expect(output.split(adminPassword)).toHaveLength(2);
    for (const secret of [generated, 'a piped long password']) expect(output).not.toContain(secret);
  });
});
