import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
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
 * docs/ci.md's script, taken from the doc as written and run with sh against a real `outpost service` on
 * loopback with a real `outpost agent` of a private location: a TCP check of an open port tagged `ci,pass`
 * and one of a closed port tagged `ci,fail`. Its exit code is 0 when every tagged check passed, 1 when one
 * failed, 2 when no check has the tags; it prints each session's status and name, and never the API key.
 */
const skip = missingRequirement([
  { ok: commandWorks('jq', ['--version']), what: 'jq', install: 'apt-get install jq' },
  { ok: commandWorks('curl', ['--version']), what: 'curl', install: 'apt-get install curl' },
]);

/** Runs the script with `env`; resolves with its exit code and output. */
function runScript(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', [script], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe.skipIf(skip)('docs/ci.md: the CI script against a real service and agent', () => {
  const apiKey = `op_ci_${'c'.repeat(40)}`;
  const work = mkdtempSync(join(tmpdir(), 'outpost-ci-doc-'));
  const script = join(work, 'outpost-ci.sh');
  let service: ServiceProcess;
  let agent: CliProcess | undefined;
  let open: Server;
  let env: Record<string, string>;

  beforeAll(async () => {
    writeFileSync(script, codeBlockUnder('ci.md', 'The script'));
    open = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => open.listen(0, '127.0.0.1', resolve));
    const openPort = (open.address() as { port: number }).port;
    const closedPort = await freePort();

    service = await startServiceProcess(apiKey);
    const location = await service.api('POST', '/v1/private-locations', {
      name: 'CI',
      slugName: 'ci-runner',
    });
    expect(location.status, JSON.stringify(location.json)).toBe(201);
    agent = spawnCli(['agent'], {
      API_KEY: location.json.keys[0].rawKey,
      SERVICE_URL: service.url,
      AGENT_HEALTH_PORT: String(await freePort()),
      AGENT_PROFILE: 'uptime',
    });
    for (const [name, port, tag] of [
      ['reachable port', openPort, 'pass'],
      ['closed port', closedPort, 'fail'],
    ] as const) {
      const check = await service.api('POST', '/v1/checks/tcp', {
        name,
        tags: ['ci', tag],
        locations: [],
        privateLocations: ['ci-runner'],
        request: { hostname: '127.0.0.1', port },
      });
      expect(check.status, JSON.stringify(check.json)).toBe(201);
    }
    // A check without the tag must not be started by the script.
    await service.api('POST', '/v1/checks/tcp', {
      name: 'untagged',
      locations: [],
      privateLocations: ['ci-runner'],
      request: { hostname: '127.0.0.1', port: closedPort },
    });
    env = { OUTPOST_URL: service.url, OUTPOST_API_KEY: apiKey };
  }, 60_000);

  afterAll(async () => {
    await stopCli(agent);
    await service?.stop();
    await new Promise((resolve) => open?.close(resolve));
    rmSync(work, { recursive: true, force: true });
  });

  it('exits 0 when every check with the tags passed', async () => {
    const run = await runScript(script, { ...env, OUTPOST_TAGS: 'ci,pass' });
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/^PASSED\s+reachable port\s+http:\/\/localhost:\d+\/accounts\//m);
    expect(run.output).not.toMatch(/closed port|untagged/);
    expect(run.output).not.toContain(apiKey);
  });

  it('exits 1 when one of them failed, after printing every session', async () => {
    const run = await runScript(script, { ...env, OUTPOST_TAGS: 'ci' });
    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(/^PASSED\s+reachable port/m);
    expect(run.output).toMatch(/^FAILED\s+closed port/m);
    expect(run.output).not.toMatch(/untagged/);
    expect(run.output).not.toContain(apiKey);
  });

  it('exits 2 when no check has the tags, or the key is wrong', async () => {
    const none = await runScript(script, { ...env, OUTPOST_TAGS: 'no-such-tag' });
    expect(none.code, none.output).toBe(2);
    expect(none.output).toContain('no activated check has the tags no-such-tag');
    const wrongKey = `op_wrong_${'w'.repeat(40)}`;
    const refused = await runScript(script, { ...env, OUTPOST_API_KEY: wrongKey });
    expect(refused.code, refused.output).toBe(2);
    expect(refused.output).not.toContain(wrongKey);
  });
});
