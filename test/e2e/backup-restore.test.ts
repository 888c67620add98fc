import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/protocol/index.js';
import {
  claimOverHttp,
  apiClient,
  type CliProcess,
  freePort,
  type ServiceProcess,
  spawnCli,
  startServiceProcess,
  stopCli,
} from '../helpers/cli.js';
import { commandWorks, missingRequirement } from '../helpers/requirements.js';
import { codeBlockUnder } from '../docs/doc-blocks.js';

/**
 * docs/backup.md as a reader follows it: its backup block, run as written against the data directory of a
 * running `outpost service` that is writing, and its restore block into a fresh directory. A service started
 * there (with no key given: the keys are in the store) answers the check, keeps the secrets masked in the API
 * and hands them in clear to an agent, so the encryption key came along. Without the key the service refuses
 * the store, as the doc says. No secret is in the backup's store in clear.
 */
const sqlite3 = missingRequirement([
  { ok: commandWorks('sqlite3', ['-version']), what: 'sqlite3', install: 'apt-get install sqlite3' },
]);

const BACKUP_BLOCK = codeBlockUnder('backup.md', 'Back up a running service');
const RESTORE_BLOCK = codeBlockUnder('backup.md', 'Restore');

/** Runs a doc's shell block with `sh -e`, `env` on top of PATH; returns the exit status and output. */
function runBlock(block: string, env: Record<string, string>): { status: number | null; output: string } {
  const run = spawnSync('sh', ['-ec', block], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** Claims one job of the account as a data-center agent would, so the secrets it carries can be read. */
async function claimOne(url: string, apiKey: string): Promise<Job> {
  const jobs = await claimOverHttp(url, apiKey, {
    checkTypes: ['API'],
    freeSlots: { uptime: 0, main: 1 },
    waitSeconds: 5,
  });
  expect(jobs).toHaveLength(1);
  return jobs[0]!;
}

describe.skipIf(sqlite3 !== null)('docs/backup.md: back up a running service, restore, start on it', () => {
  const apiKey = `op_backup_${randomUUID().replaceAll('-', '')}`;
  const password = `pw-${randomUUID()}`;
  const variable = `var-${randomUUID()}`;
  const work = mkdtempSync(join(tmpdir(), 'outpost-backup-doc-'));
  let source: ServiceProcess | undefined;
  let restored: CliProcess | undefined;
  afterAll(async () => {
    await stopCli(restored);
    await source?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('restores the check, the keys and the secrets; without the key the store is refused', async () => {
    source = await startServiceProcess(apiKey);
    const created = await source.api('POST', '/v1/checks/api', {
      name: 'backed up',
      activated: false,
      request: { method: 'GET', url: 'https://backup.test/', basicAuth: { username: 'u', password } },
      environmentVariables: [{ key: 'CHECK_SECRET', value: variable, secret: true }],
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const checkId = created.json.id as string;

    // The backup is taken while the service runs: the check is only in its WAL so far.
    const backup = join(work, 'backup');
    const taken = runBlock(BACKUP_BLOCK, { OUTPOST_DATA_DIR: source.dataDir, BACKUP: backup });
    expect(taken.status, taken.output).toBe(0);
    const db = readFileSync(join(backup, 'outpost.db'));
    expect(db.includes('backed up')).toBe(true);
    for (const secret of [password, variable]) expect(db.includes(secret), 'a secret in clear').toBe(false);
    expect(
      readFileSync(join(backup, 'encryption.key')).equals(
        readFileSync(join(source.dataDir, 'encryption.key')),
      ),
    ).toBe(true);

    // Restored without the key (a backup of the store alone): the service refuses it and says why.
    const keyless = join(work, 'keyless-backup');
    execFileSync('cp', ['-a', backup, keyless]);
    rmSync(join(keyless, 'encryption.key'));
    const keylessData = join(work, 'keyless-data');
    expect(runBlock(RESTORE_BLOCK, { OUTPOST_DATA_DIR: keylessData, BACKUP: keyless }).status).toBe(0);
    const refused = spawnCli(['service'], { PORT: String(await freePort()), OUTPOST_DATA_DIR: keylessData });
    expect(await refused.exited, refused.output()).toBe(2);
    expect(refused.output()).toMatch(/stored secret .* cannot be opened with the key from .*encryption\.key/);
    // It made a key of its own before refusing: the doc says to delete it before putting the right one.
    expect(existsSync(join(keylessData, 'encryption.key'))).toBe(true);

    // Restored as documented, into a fresh directory, and started with no key given.
    const data = join(work, 'restored-data');
    const restoring = runBlock(RESTORE_BLOCK, { OUTPOST_DATA_DIR: data, BACKUP: backup });
    expect(restoring.status, restoring.output).toBe(0);
    await source.stop();
    source = undefined;
    const port = await freePort();
    restored = spawnCli(['service'], { PORT: String(port), OUTPOST_DATA_DIR: data });
    await restored.waitFor(/service is listening/);
    const url = `http://127.0.0.1:${port}`;
    const api = apiClient(url, apiKey);

    const check = await api('GET', `/v1/checks/${checkId}`);
    expect(check.status).toBe(200);
    expect(check.json.name).toBe('backed up');
    // The API masks secrets whatever happened; the agent gets them in clear only if the key came along.
    expect(check.json.request.basicAuth.password).toBe('*****');
    const session = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
    expect(session.status, JSON.stringify(session.json)).toBeLessThan(300);
    const job = await claimOne(url, apiKey);
    expect((job.check.request as { basicAuth: { password: string } }).basicAuth.password).toBe(password);
    expect(job.environmentVariables.find((v) => v.key === 'CHECK_SECRET')?.value).toBe(variable);
    expect(restored.output()).not.toContain(password);
  });
});
