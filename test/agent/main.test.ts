import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AGENT_EXIT_CODES, runAgent } from '../../src/agent/main.js';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import type { CheckResult } from '../../src/protocol/index.js';
import { makeJob, TEST_API_KEY, TestService, TimerExecutor } from './helpers.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/agent-process.ts', import.meta.url));

/** A memory sink for logs and stderr. */
function sink() {
  const chunks: string[] = [];
  return { write: (text: string) => void chunks.push(text), text: () => chunks.join('') };
}

describe('runAgent', () => {
  let service: TestService;
  beforeEach(async () => {
    service = await new TestService().start();
  });
  afterEach(async () => {
    await service.close();
  });

  it('returns 2 and prints every bad variable on a bad configuration, never the key', async () => {
    const stderr = sink();

    const code = await runAgent({ API_KEY: 'pl_with space', JOB_CONCURRENCY: 'lots' }, { stderr });

    expect(code).toBe(AGENT_EXIT_CODES.config);
    expect(stderr.text()).toMatch(/^outpost agent: invalid agent configuration:\n/);
    expect(stderr.text()).toContain('- API_KEY must be');
    expect(stderr.text()).toContain('- SERVICE_URL must be');
    expect(stderr.text()).toContain(
      '- JOB_CONCURRENCY must be an integer from 1 to 1000 (default 10); it was "lots"',
    );
    expect(stderr.text()).not.toContain('with space');
  });

  it('returns 1 when the service answers 401, and logs the configuration once, redacted', async () => {
    service.handlers.claim = () => ({
      status: 401,
      body: { statusCode: 401, error: 'Unauthorized', message: 'x' },
    });
    const logs = sink();

    const code = await runAgent(
      { API_KEY: TEST_API_KEY, SERVICE_URL: service.url, AGENT_HEALTH_PORT: '0' },
      {
        executors: new Map([['ICMP', new TimerExecutor('ICMP', 10)]]),
        logDestination: logs,
        handleProcessEvents: false,
        healthHost: '127.0.0.1',
      },
    );

    const lines = logs
      .text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(code).toBe(AGENT_EXIT_CODES.fatal);
    expect(lines.filter((l) => l.msg === 'agent configuration')).toHaveLength(1);
    expect(lines.find((l) => l.msg === 'agent configuration')?.config).toMatchObject({ apiKey: '*****' });
    expect(lines.find((l) => l.msg === 'agent stopped on a fatal error')).toMatchObject({
      level: 60,
      err: { code: 'OUTPOST_ERR_UNAUTHORIZED' },
    });
    expect(logs.text()).not.toContain(TEST_API_KEY);
  });
});

describe('outpost agent as a process', () => {
  let service: TestService;
  let child: ChildProcess | undefined;
  beforeEach(async () => {
    service = await new TestService().start();
  });
  afterEach(async () => {
    if (child?.exitCode === null && child.pid !== undefined) child.kill('SIGKILL');
    await service.close();
  });

  function startAgent(jobDelayMs: number) {
    const lines: Record<string, unknown>[] = [];
    child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
      cwd: PACKAGE_ROOT,
      env: {
        PATH: process.env.PATH,
        API_KEY: TEST_API_KEY,
        SERVICE_URL: service.url,
        AGENT_HEALTH_PORT: '0',
        AGENT_CLAIM_WAIT_SECONDS: '1',
        TEST_JOB_DELAY_MS: String(jobDelayMs),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const part of parts) if (part.trim()) lines.push(JSON.parse(part) as Record<string, unknown>);
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child?.once('exit', (code, signal) => resolve({ code, signal })),
    );
    return { child, lines, exited };
  }

  it('drains on SIGTERM: the running job finishes, its result is posted, exit 0', async () => {
    const job = makeJob();
    service.push(job);
    const agent = startAgent(800);
    await expect.poll(() => agent.lines.some((l) => l.msg === 'job started'), { timeout: 20_000 }).toBe(true);

    agent.child.kill('SIGTERM');
    const exit = await agent.exited;

    expect(exit).toEqual({ code: 0, signal: null });
    expect(service.received('result').map((r) => r.path)).toEqual([`/v1/agent/jobs/${job.jobId}/result`]);
    expect((service.received('result')[0]?.body as CheckResult | undefined)?.status).toBe('PASSED');
    expect(
      agent.lines.some(
        (l) => l.msg === 'shutdown requested; draining running jobs (signal again to exit at once)',
      ),
    ).toBe(true);
  });

  it.each([
    ['SIGTERM', AGENT_EXIT_CODES.sigterm],
    ['SIGINT', AGENT_EXIT_CODES.sigint],
  ] as const)('exits at once with %s twice, leaving the running job', async (signal, expectedCode) => {
    service.push(makeJob());
    const agent = startAgent(60_000);
    await expect.poll(() => agent.lines.some((l) => l.msg === 'job started'), { timeout: 20_000 }).toBe(true);

    agent.child.kill(signal);
    await expect.poll(() => agent.lines.some((l) => l.msg === 'agent stopping')).toBe(true);
    const t0 = performance.now();
    agent.child.kill(signal);
    const exit = await agent.exited;

    expect(exit).toEqual({ code: expectedCode, signal: null });
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(service.received('result')).toHaveLength(0);
  });
});
