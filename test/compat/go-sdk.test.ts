import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQLite } from '../../src/service/platform/store/sqlite.js';
import { type CliProcess, freePort, spawnCli, stopCli } from '../helpers/cli.js';
import { commandWorks, missingRequirement } from '../helpers/requirements.js';

/**
 * The Go SDK's own integration suite (github.com/checkly/checkly-go-sdk, `checkly_integration_test.go`, build
 * tag `integration`), unmodified, against a fresh `outpost service`: every one of its tests must pass.
 *
 * The suite reads `CHECKLY_API_URL`, `CHECKLY_API_KEY` and `CHECKLY_ACCOUNT_ID`. It is built with Debian's Go
 * (`golang-go`) and go-cmp (`golang-github-google-go-cmp-dev`) and no module proxy: its go.mod is given the
 * Go version Debian has and a `replace` of go-cmp to Debian's copy, nothing else.
 *
 * The SDK's source comes from `CHECKLY_GO_SDK_DIR` (a clone, bare or not, of the repository). No package
 * registry serves it, so without it the suite is skipped with a message saying how to get it, in CI as well
 * (docs/api.md, "Compatibility with Checkly's clients").
 *
 * Beside the suite, go-sdk/outpost_monitors_integration_test.go (Outpost's, built with it) creates, reads,
 * updates and deletes SSL and traceroute monitors through the SDK's methods, which its suite does not test.
 *
 * The service runs with OUTPOST_API_CREDENTIALS=clear, as a user of these clients runs it. One fixture, as the
 * suite expects of the account it runs in: an alert channel with id 2996 (its group tests
 * subscribe their groups to it by that id). Outpost refuses a subscription to a channel that does not exist,
 * so the store is made to hand out that id.
 */
const SDK_DIR = process.env.CHECKLY_GO_SDK_DIR ?? '';
const DEBIAN_GO_CMP = '/usr/share/gocode/src/github.com/google/go-cmp';
/** Go test files of Outpost's own, built into the suite's binary beside the SDK's (they use its setupClient). */
const EXTRA_TESTS = join(import.meta.dirname, 'go-sdk-extra');

const missing = missingRequirement([
  { ok: commandWorks('go', ['version']), what: 'go', install: 'apt-get install golang-go' },
  {
    ok: existsSync(join(DEBIAN_GO_CMP, 'go.mod')),
    what: 'go-cmp for Go',
    install: 'apt-get install golang-github-google-go-cmp-dev',
  },
]);
const noSource =
  SDK_DIR === '' || !existsSync(SDK_DIR)
    ? 'CHECKLY_GO_SDK_DIR is not set to a clone of github.com/checkly/checkly-go-sdk (git clone https://github.com/checkly/checkly-go-sdk; no package registry serves it)'
    : null;
if (noSource && missing === null) console.warn(`skipping the Go SDK suite: ${noSource}`);

/** The test functions of the suite, by name (`func TestX(t *testing.T)`). */
function suiteTests(source: string): string[] {
  return [...source.matchAll(/^func (Test\w+)\(t \*testing\.T\)/gm)].map((m) => m[1]!);
}

describe.skipIf(missing !== null || noSource !== null)("Checkly's Go SDK integration suite", () => {
  const work = mkdtempSync(join(tmpdir(), 'outpost-go-sdk-'));
  const sdk = join(work, 'sdk');
  const dataDir = join(work, 'data');
  const apiKey = `ck_compat_${randomUUID().replaceAll('-', '')}`;
  let service: CliProcess | undefined;
  let url = '';
  let accountId = '';
  let binary = '';
  let tests: string[] = [];

  beforeAll(async () => {
    // The source, its go.mod pinned to what Debian has: no download of anything.
    execFileSync('git', ['clone', '--quiet', SDK_DIR, sdk], { stdio: 'ignore' });
    const goMod = readFileSync(join(sdk, 'go.mod'), 'utf8')
      .replace(/^go \d+\.\d+(\.\d+)?$/m, 'go 1.19')
      .replace(/^toolchain .*$/m, '');
    writeFileSync(join(sdk, 'go.mod'), `${goMod}\nreplace github.com/google/go-cmp => ${DEBIAN_GO_CMP}\n`);
    rmSync(join(sdk, 'go.sum'), { force: true });
    // Outpost's own tests of SDK methods the suite does not exercise (go-sdk-extra/, one file per monitor type).
    for (const name of readdirSync(EXTRA_TESTS)) copyFileSync(join(EXTRA_TESTS, name), join(sdk, name));
    binary = join(work, 'sdk.test');
    const build = spawnSync('go', ['test', '-tags', 'integration', '-c', '-o', binary, '.'], {
      cwd: sdk,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: work,
        GOPATH: join(work, 'gopath'),
        GOCACHE: join(work, 'gocache'),
        GOPROXY: 'off',
        GOFLAGS: '-mod=mod',
        GOTOOLCHAIN: 'local',
      },
      encoding: 'utf8',
      timeout: 300_000,
    });
    expect(build.status, `${build.stdout}${build.stderr}`).toBe(0);
    tests = [
      join(sdk, 'checkly_integration_test.go'),
      ...readdirSync(EXTRA_TESTS).map((n) => join(sdk, n)),
    ].flatMap((file) => suiteTests(readFileSync(file, 'utf8')));

    // A first start makes the store; the channel sequence is then set so the next channel is 2996.
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    // Its group tests compare a basic-auth password with what they sent: the service answers credentials in
    // clear, as the hosted API does (docs/security.md, "Credentials in answers").
    const env = {
      PORT: String(port),
      OUTPOST_DATA_DIR: dataDir,
      OUTPOST_API_KEY: apiKey,
      OUTPOST_API_CREDENTIALS: 'clear',
    };
    const first = spawnCli(['service'], env);
    await first.waitFor(/service is listening/);
    await stopCli(first);
    const db = new SQLite(join(dataDir, 'outpost.db'));
    db.prepare("DELETE FROM sqlite_sequence WHERE name = 'alert_channels'").run();
    db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('alert_channels', 2995)").run();
    db.close();
    service = spawnCli(['service'], env);
    const banner = await service.waitFor(/account id: /);
    accountId = /account id: (\S+)/.exec(banner)?.[1] ?? '';
    await service.waitFor(/service is listening/);
    const channel = await fetch(`${url}/v1/alert-channels`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'EMAIL', config: { address: 'fixture@example.com' } }),
    });
    expect(((await channel.json()) as { id: number }).id).toBe(2996);
  }, 360_000);

  afterAll(async () => {
    await stopCli(service);
    rmSync(work, { recursive: true, force: true });
  });

  it('has the suite of 28 tests this compatibility was measured on, or more, and our own', () => {
    expect(tests.length).toBeGreaterThanOrEqual(28);
    for (const own of [
      'TestOutpostGRPCMonitorCRUD',
      'TestOutpostSSLMonitorCRUD',
      'TestOutpostTracerouteMonitorCRUD',
    ])
      expect(tests).toContain(own);
  });

  it('passes every test of the suite and those beside it, each run on its own', () => {
    const failures: string[] = [];
    for (const name of tests) {
      const run = spawnSync(binary, ['-test.run', `^${name}$`, '-test.count', '1'], {
        cwd: sdk,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          CHECKLY_API_URL: url,
          CHECKLY_API_KEY: apiKey,
          CHECKLY_ACCOUNT_ID: accountId,
        },
        encoding: 'utf8',
        timeout: 60_000,
      });
      if (run.status !== 0) failures.push(`${name}:\n${run.stdout}${run.stderr}`.slice(0, 3000));
    }
    expect(failures, failures.join('\n\n')).toEqual([]);
  }, 600_000);
});
