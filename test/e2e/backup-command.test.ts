import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/protocol/index.js';
import {
  claimOverHttp,
  apiClient,
  CLI,
  type CliProcess,
  freePort,
  type ServiceProcess,
  spawnCli,
  startServiceProcess,
  stopCli,
} from '../helpers/cli.js';
import { codeBlockUnder } from '../docs/doc-blocks.js';

/**
 * `outpost backup <file>`: an online backup of the SQLite store taken while `outpost service` runs and writes,
 * written 0600 and never over an existing file; restored with docs/backup.md's Restore block (with the key
 * file beside it), a service on it answers the same checks and opens the sealed secrets. With
 * OUTPOST_DATABASE_URL it refuses and names pg_dump.
 */
const API_KEY = `op_${randomBytes(20).toString('hex')}`;
const PASSWORD = `pw-${randomUUID()}`;
const BACKUP_BLOCK = codeBlockUnder('backup.md', 'Back up with `outpost backup`');
const RESTORE_BLOCK = codeBlockUnder('backup.md', 'Restore');

/** Runs a doc's shell block with `sh -e`, `env` on top of PATH (with `bin` first); the exit status and output. */
function runBlock(block: string, bin: string, env: Record<string, string>) {
  const run = spawnSync('sh', ['-ec', block], {
    env: { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** Runs `outpost backup <args>` on the data directory `dataDir`; resolves with its exit code and output. */
async function backup(args: string[], env: Record<string, string>) {
  const run = spawnCli(['backup', ...args], env);
  const code = await run.exited;
  return { code, output: run.output() };
}

/** Claims one API job of the account as a data-center agent. */
async function claimApiJob(url: string): Promise<Job> {
  const jobs = await claimOverHttp(url, API_KEY, {
    checkTypes: ['API'],
    freeSlots: { uptime: 0, main: 1 },
    waitSeconds: 5,
  });
  expect(jobs).toHaveLength(1);
  return jobs[0]!;
}

describe('outpost backup', () => {
  const work = mkdtempSync(join(tmpdir(), 'outpost-backup-cmd-'));
  let source: ServiceProcess | undefined;
  let restored: CliProcess | undefined;
  afterAll(async () => {
    await stopCli(restored);
    await source?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('refuses bad arguments (exit 2) and a PostgreSQL store, naming pg_dump (exit 2)', async () => {
    const none = await backup([], { OUTPOST_DATA_DIR: work });
    expect(none.code).toBe(2);
    expect(none.output).toContain('give the backup file to write');
    const two = await backup(['a.db', 'b.db'], { OUTPOST_DATA_DIR: work });
    expect(two.code).toBe(2);
    const postgres = await backup([join(work, 'pg.db')], {
      OUTPOST_DATABASE_URL: 'postgres://outpost:hidden-password@127.0.0.1:5432/outpost',
    });
    expect(postgres.code).toBe(2);
    expect(postgres.output).toContain('pg_dump --format=custom');
    expect(postgres.output).toContain('OUTPOST_ENCRYPTION_KEY');
    expect(postgres.output).not.toContain('hidden-password');
    expect(existsSync(join(work, 'pg.db'))).toBe(false);
    const empty = await backup([join(work, 'none.db')], { OUTPOST_DATA_DIR: join(work, 'no-store') });
    expect(empty.code).toBe(1);
    expect(empty.output).toMatch(/there is no SQLite store/);
    expect(existsSync(join(work, 'no-store'))).toBe(false);
  });

  let checkId = '';
  const backupFile = join(work, 'direct', 'outpost.db');

  it('copies the store of a running service that is writing, into a new 0600 file, and names the key', async () => {
    source = await startServiceProcess(API_KEY);
    const created = await source.api('POST', '/v1/checks/api', {
      name: 'backed up by the command',
      activated: false,
      request: {
        method: 'GET',
        url: 'https://backup.test/',
        basicAuth: { username: 'u', password: PASSWORD },
      },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    checkId = created.json.id as string;
    mkdirSync(join(work, 'direct'), { mode: 0o700 });
    // The service keeps writing while the backup is taken.
    const writes = Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        source!.api('POST', '/v1/checks/icmp', {
          name: `during ${i}`,
          activated: false,
          request: { hostname: '127.0.0.1' },
        }),
      ),
    );
    const taken = await backup([backupFile], { OUTPOST_DATA_DIR: source.dataDir });
    for (const res of await writes) expect(res.status).toBe(201);
    expect(taken.code, taken.output).toBe(0);
    expect(taken.output).toContain(`to ${backupFile} (`);
    expect(taken.output).toMatch(/\(\d+(\.\d)? (kB|MB|bytes), \d+ bytes\)/);
    expect(taken.output).toContain(`Keep the key file ${join(source.dataDir, 'encryption.key')} with it`);
    expect(statSync(backupFile).mode & 0o777).toBe(0o600);
    // One self-contained file: no -wal or -shm beside it.
    expect(existsSync(`${backupFile}-wal`)).toBe(false);
    expect(existsSync(`${backupFile}-shm`)).toBe(false);
    const bytes = readFileSync(backupFile);
    expect(bytes.includes('backed up by the command')).toBe(true);
    expect(bytes.includes(PASSWORD), 'a secret in clear').toBe(false);
    if (spawnSync('sqlite3', ['-version']).status === 0) {
      const check = spawnSync('sqlite3', [backupFile, 'PRAGMA integrity_check'], { encoding: 'utf8' });
      expect(check.stdout.trim()).toBe('ok');
    }
  });

  it('never overwrites an existing file (exit 1), nor writes into a missing folder', async () => {
    const before = readFileSync(backupFile);
    const again = await backup([backupFile], { OUTPOST_DATA_DIR: source!.dataDir });
    expect(again.code).toBe(1);
    expect(again.output).toContain(`${backupFile} exists: it is never overwritten`);
    expect(readFileSync(backupFile).equals(before)).toBe(true);
    const other = join(work, 'not-a-store.txt');
    writeFileSync(other, 'keep me');
    expect((await backup([other], { OUTPOST_DATA_DIR: source!.dataDir })).code).toBe(1);
    expect(readFileSync(other, 'utf8')).toBe('keep me');
    const missingDir = await backup([join(work, 'no', 'such', 'dir.db')], {
      OUTPOST_DATA_DIR: source!.dataDir,
    });
    expect(missingDir.code).toBe(1);
    expect(missingDir.output).toMatch(/cannot be created/);
  });

  it('the doc\'s block backs up the running service with the key; restored (docs/backup.md, "Restore"), a service answers the same check and opens its secrets', async () => {
    // `outpost` on PATH, as after `npm install -g`: a shim running the built CLI.
    const bin = join(work, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'outpost'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`, {
      mode: 0o755,
    });
    const backupDir = join(work, 'doc-backup');
    const taken = runBlock(BACKUP_BLOCK, bin, { OUTPOST_DATA_DIR: source!.dataDir, BACKUP: backupDir });
    expect(taken.status, taken.output).toBe(0);
    expect(taken.output).toContain(`backed up to ${backupDir}`);
    expect(statSync(join(backupDir, 'outpost.db')).mode & 0o777).toBe(0o600);
    expect(
      readFileSync(join(backupDir, 'encryption.key')).equals(
        readFileSync(join(source!.dataDir, 'encryption.key')),
      ),
    ).toBe(true);

    const data = join(work, 'restored');
    const restoring = runBlock(RESTORE_BLOCK, bin, { OUTPOST_DATA_DIR: data, BACKUP: backupDir });
    expect(restoring.status, restoring.output).toBe(0);
    await source!.stop();
    source = undefined;
    const port = await freePort();
    restored = spawnCli(['service'], { PORT: String(port), OUTPOST_DATA_DIR: data });
    await restored.waitFor(/service is listening/);
    const url = `http://127.0.0.1:${port}`;
    const api = apiClient(url, API_KEY);
    const check = await api('GET', `/v1/checks/${checkId}`);
    expect(check.status).toBe(200);
    expect(check.json.name).toBe('backed up by the command');
    expect(check.json.request.basicAuth.password).toBe('*****');
    expect(((await api('GET', '/v1/checks')).json as unknown[]).length).toBe(21);
    const session = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
    expect(session.status, JSON.stringify(session.json)).toBeLessThan(300);
    const job = await claimApiJob(url);
    expect((job.check.request as { basicAuth: { password: string } }).basicAuth.password).toBe(PASSWORD);
  });
});
