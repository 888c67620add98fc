import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbRow, ROWS } from '../helpers/analytics-data.js';
import { type TestService, testService } from '../helpers/service.js';

/**
 * The Checkly CLI, unmodified, against Outpost (issue 24; docs/api.md, "Projects (monitoring as code)"): its
 * first calls, its read commands, and `deploy` / `destroy` of the fixture project in test/compat/cli-project.
 * The package is installed with npm once per version under the OS temp dir; without a registry the suite is
 * skipped, naming the package (a failure under CI=true). Nothing is sent off the machine: the CLI talks to the
 * service on loopback only, its update check is off (CHECKLY_SKIP_NEW_VERSION_CHECK).
 */
const CLI_PACKAGE = 'checkly@8.9.0';
const CLI_DIR = join(tmpdir(), 'outpost-checkly-cli', CLI_PACKAGE.replace('@', '-'));
const CLI_BIN = join(CLI_DIR, 'node_modules', 'checkly', 'bin', 'run');
const FIXTURE = join(import.meta.dirname, 'cli-project');
const PROJECT = 'outpost-cli-fixture';
/** The webhook secret the fixture plants: no answer and no CLI output may show it. */
const PLANTED_SECRET = 'fixture-webhook-secret-PLANTED-7f3a';

const run = promisify(execFile);

/** Installs the CLI into its cache folder unless it is there; the reason when npm could not. */
async function installCli(): Promise<string | null> {
  if (existsSync(CLI_BIN)) return null;
  await mkdir(CLI_DIR, { recursive: true });
  try {
    await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--no-save',
        '--loglevel=error',
        '--prefix',
        CLI_DIR,
        CLI_PACKAGE,
      ],
      { timeout: 240_000 },
    );
  } catch (err) {
    return (err as Error).message.split('\n')[0] ?? 'npm install failed';
  }
  return existsSync(CLI_BIN) ? null : `${CLI_BIN} missing after npm install`;
}

const installFailure = await installCli();
if (installFailure !== null) {
  const message = `${CLI_PACKAGE} could not be installed with npm (${installFailure}): the Checkly CLI suite is skipped`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(message);
}

describe.skipIf(installFailure !== null)(`the Checkly CLI (${CLI_PACKAGE}) against Outpost`, () => {
  let svc: TestService;
  let url: string;
  let work: string;
  let projectDir: string;
  /** An alert channel and a check of account A made outside the project: deploys and destroy leave them. */
  let outsideChannel: number;
  let outsideCheck: string;
  /** A check of account B: never touched. */
  let otherAccountCheck: string;

  /** Runs the CLI in the project folder; resolves with its exit code and output (never rejects). */
  const checkly = async (args: string[], env: Record<string, string> = {}) => {
    try {
      const { stdout, stderr } = await run(process.execPath, [CLI_BIN, ...args], {
        cwd: projectDir,
        timeout: 120_000,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: work,
          XDG_CONFIG_HOME: join(work, 'config'),
          CHECKLY_ENV: 'local',
          CHECKLY_API_URL: url,
          CHECKLY_API_KEY: svc.accountA.key,
          CHECKLY_ACCOUNT_ID: svc.accountA.id,
          CHECKLY_SKIP_NEW_VERSION_CHECK: 'true',
          CHECKLY_NON_INTERACTIVE: '1',
          NO_COLOR: '1',
          ...env,
        },
      });
      return { code: 0, out: `${stdout}${stderr}` };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
    }
  };
  const get = async (path: string, account: 'A' | 'B' = 'A') => {
    const res = await svc.request('GET', path, undefined, account);
    return { status: res.statusCode, body: res.json() as never, text: res.body };
  };
  /** The account's checks by name (id, group, subscriptions). */
  const checksByName = async () => {
    const { body } = await get('/v1/checks?limit=100');
    const list = body as {
      id: string;
      name: string;
      groupId: number | null;
      alertChannelSubscriptions: { alertChannelId: number }[];
    }[];
    return new Map(list.map((check) => [check.name, check]));
  };

  beforeAll(async () => {
    svc = await testService();
    await svc.app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(svc.app.server.address() as AddressInfo).port}`;
    work = await mkdtemp(join(tmpdir(), 'outpost-checkly-cli-'));
    projectDir = join(work, 'project');
    await cp(FIXTURE, projectDir, { recursive: true });
    await symlink(join(CLI_DIR, 'node_modules'), join(projectDir, 'node_modules'), 'dir');
    const channel = await svc.request('POST', '/v1/alert-channels', {
      type: 'EMAIL',
      config: { address: 'outside@example.com' },
    });
    expect(channel.statusCode, channel.body).toBe(201);
    outsideChannel = channel.json().id;
    const check = await svc.request('POST', '/v1/checks/url', {
      name: 'Outside the project',
      request: { url: 'https://example.com' },
    });
    expect(check.statusCode, check.body).toBe(201);
    outsideCheck = check.json().id;
    const other = await svc.request(
      'POST',
      '/v1/checks/url',
      { name: 'Account B', request: { url: 'https://example.com' } },
      'B',
    );
    expect(other.statusCode, other.body).toBe(201);
    otherAccountCheck = other.json().id;
  }, 120_000);

  afterAll(async () => {
    await svc?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('whoami: the key authenticates (GET /next/accounts/{id}) and names the account and the key', async () => {
    const { code, out } = await checkly(['whoami']);
    expect(out).toContain(`You are currently on account "A" (${svc.accountA.id}) as API key`);
    expect(code).toBe(0);
    const wrong = await checkly(['whoami'], { CHECKLY_ACCOUNT_ID: svc.accountB.id });
    expect(wrong.code).not.toBe(0);
  });

  it('deploy --preview changes nothing and lists every construct to create', async () => {
    const before = (await checksByName()).size;
    const { code, out } = await checkly(['deploy', '--preview']);
    expect(out, out).toContain('Create:');
    for (const construct of [
      'ApiCheck: fixture-api',
      'UrlMonitor: fixture-url',
      'CheckGroupV2: fixture-group',
      'StatusPage: fixture-status-page',
    ]) {
      expect(out).toContain(construct);
    }
    expect(code, out).toBe(0);
    expect((await checksByName()).size).toBe(before);
    expect((await get(`/next/projects/${PROJECT}`)).status).toBe(404);
  });

  it('deploy --force creates every construct, with its references resolved', async () => {
    const { code, out } = await checkly(['deploy', '--force', '--output']);
    expect(out, out).toContain(`Successfully deployed project "Outpost CLI fixture" to account "A"`);
    expect(code, out).toBe(0);
    expect(out).not.toContain(PLANTED_SECRET);

    const project = await get(`/next/projects/${PROJECT}`);
    expect(project.body).toMatchObject({
      logicalId: PROJECT,
      name: 'Outpost CLI fixture',
      repoUrl: 'https://example.com/outpost/cli-fixture',
    });

    const checks = await checksByName();
    const names = [
      'Fixture API',
      'Fixture browser',
      'Fixture URL',
      'Fixture TCP',
      'Fixture DNS',
      'Fixture ICMP',
      'Fixture heartbeat',
    ];
    for (const name of names) expect(checks.has(name), name).toBe(true);

    const channels = (await get('/v1/alert-channels')).body as {
      id: number;
      type: string;
      config: Record<string, unknown>;
    }[];
    const email = channels.find((c) => c.type === 'EMAIL' && c.config.address === 'oncall@example.com');
    const webhook = channels.find((c) => c.type === 'WEBHOOK');
    expect(email && webhook).toBeTruthy();
    const channelTexts = await Promise.all(
      channels.map(async (c) => (await get(`/v1/alert-channels/${c.id}`)).text),
    );
    for (const text of channelTexts) expect(text).not.toContain(PLANTED_SECRET);

    const groups = (await get('/v1/check-groups')).body as {
      id: number;
      name: string;
      alertChannelSubscriptions: { alertChannelId: number }[];
    }[];
    const group = groups.find((g) => g.name === 'Fixture group');
    expect(group?.alertChannelSubscriptions.map((s) => s.alertChannelId)).toEqual([email!.id]);
    // The API check is in the group and subscribed to the webhook only; a check of the project with no
    // subscription gets none (not every channel of the account, as a plain create would give it).
    expect(checks.get('Fixture API')).toMatchObject({ groupId: group!.id });
    expect(checks.get('Fixture API')!.alertChannelSubscriptions.map((s) => s.alertChannelId)).toEqual([
      webhook!.id,
    ]);
    expect(checks.get('Fixture URL')!.alertChannelSubscriptions).toEqual([]);

    const pages = (await get('/v1/status-pages')).body as { entries?: unknown[] } | unknown[];
    const pageList = (Array.isArray(pages) ? pages : (pages.entries ?? [])) as {
      name: string;
      cards: { services: { name: string }[] }[];
    }[];
    const page = pageList.find((p) => p.name === 'Fixture status');
    expect(page?.cards[0]?.services.map((s) => s.name)).toEqual(['Fixture service']);

    const windows = (await get('/v1/maintenance-windows')).body as { name: string }[];
    expect(windows.map((w) => w.name)).toContain('Fixture maintenance');
  });

  it("the read commands show the project's resources", async () => {
    const checks = await checksByName();
    const list = await checkly(['checks', 'list']);
    expect(list.out).toContain('Fixture API');
    expect(list.out).toContain('Fixture heartbeat');
    expect(list.code, list.out).toBe(0);
    const one = await checkly(['checks', 'get', checks.get('Fixture TCP')!.id]);
    expect(one.out).toContain('Fixture TCP');
    expect(one.code, one.out).toBe(0);
    const channels = await checkly(['alert-channels', 'list']);
    expect(channels.out).toContain('Fixture webhook');
    expect(channels.out).not.toContain(PLANTED_SECRET);
    expect(channels.code, channels.out).toBe(0);
    const webhook = ((await get('/v1/alert-channels')).body as { id: number; type: string }[]).find(
      (c) => c.type === 'WEBHOOK',
    )!;
    const channel = await checkly(['alert-channels', 'get', String(webhook.id)]);
    expect(channel.out).toContain('Fixture webhook');
    expect(channel.out).not.toContain(PLANTED_SECRET);
    expect(channel.code, channel.out).toBe(0);
    const pages = await checkly(['status-pages', 'list']);
    expect(pages.out).toContain('Fixture status');
    expect(pages.out).toContain('Fixture service');
    expect(pages.code, pages.out).toBe(0);
    // `checks stats` (POST /v1/analytics/checks): a row per check, the API check's planted run counted.
    const apiId = checks.get('Fixture API')!.id;
    await svc.context.db
      .insertInto('check_results')
      .values(
        dbRow(apiId, svc.accountA.id, {
          ...ROWS[0]!,
          started: Date.now() - 60_000,
          rt: 250,
          status: 'PASSED',
        }),
      )
      .execute();
    const stats = await checkly(['checks', 'stats']);
    expect(stats.code, stats.out).toBe(0);
    const apiLine = stats.out.split('\n').find((line) => line.includes('Fixture API'));
    expect(apiLine, stats.out).toMatch(/API\s.*100\.00%\s+0\.250s/);
    expect(stats.out).toContain('Fixture TCP');
    expect(stats.out).not.toContain('Account B');
    for (const args of [
      ['env', 'ls'],
      ['incidents', 'list'],
    ]) {
      const { code, out } = await checkly(args);
      expect(code, `${args.join(' ')}: ${out}`).toBe(0);
    }
  });

  it('a changed project redeploys: the renamed check keeps its id, the removed monitor is deleted', async () => {
    const before = await checksByName();
    const apiId = before.get('Fixture API')!.id;
    const dnsId = before.get('Fixture DNS')!.id;
    const { code, out } = await checkly(['deploy', '--force'], {
      OUTPOST_FIXTURE_RENAME: '1',
      OUTPOST_FIXTURE_DROP_DNS: '1',
    });
    expect(code, out).toBe(0);
    const after = await checksByName();
    expect(after.get('Fixture API (renamed)')?.id).toBe(apiId);
    expect(after.has('Fixture API')).toBe(false);
    expect((await get(`/v1/checks/${dnsId}`)).status).toBe(404);
    expect(after.get('Fixture URL')?.id).toBe(before.get('Fixture URL')!.id);
    expect(after.size).toBe(before.size - 1);
  });

  it('destroy --force deletes every resource of the project and nothing else', async () => {
    const { code, out } = await checkly(['destroy', '--force']);
    expect(code, out).toBe(0);
    expect((await get(`/next/projects/${PROJECT}`)).status).toBe(404);
    const checks = await checksByName();
    expect([...checks.keys()]).toEqual(['Outside the project']);
    expect(checks.get('Outside the project')?.id).toBe(outsideCheck);
    const channels = (await get('/v1/alert-channels')).body as { id: number }[];
    expect(channels.map((c) => c.id)).toEqual([outsideChannel]);
    expect((await get('/v1/check-groups')).body).toEqual([]);
    expect(((await get('/v1/maintenance-windows')).body as unknown[]).length).toBe(0);
    const services = (await get('/v1/status-pages/services?paginated=false')).text;
    expect(services).not.toContain('Fixture service');
    expect((await get(`/v1/checks/${otherAccountCheck}`, 'B')).status).toBe(200);
  });
});
