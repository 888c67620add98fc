import { Writable } from 'node:stream';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiExecutor } from '../../../src/checks/api/index.js';
import type { Job, JobScript } from '../../../src/protocol/index.js';
import { ScriptSandbox } from '../../../src/sandbox/sandbox.js';
import { PACKAGE_ROOT } from '../../../src/common/paths.js';
import { startApiServer, type TestApiServer } from '../../helpers/api-server.js';
import { contextOf, jobOf } from '../../helpers/jobs.js';
import { apiRequest } from '../../helpers/api-request.js';

// Setup and teardown scripts of API checks, run in the real sandbox (child processes).

const local = (code: string, name = 'setup script'): JobScript => ({
  source: 'LOCAL',
  snippetId: null,
  name,
  code,
});

describe('API checks with setup and teardown scripts', () => {
  let server: TestApiServer;
  let sandbox: ScriptSandbox;
  const executor = () => createApiExecutor({ scripts: sandbox, scriptTimeoutMs: 2000 });
  beforeAll(async () => {
    server = await startApiServer();
    sandbox = new ScriptSandbox({ poolSize: 2 });
    await sandbox.warm('2026.04');
  });
  afterAll(async () => {
    await sandbox.close();
    await server.close();
  });

  const job = (extra: Partial<Job>, request: Record<string, unknown> = {}): Job => ({
    ...jobOf('API', apiRequest(`${server.origin}/echo`, request), { timeoutMs: 15_000 }),
    ...extra,
  });

  it('setup changes method, url, body, headers and query parameters; runtime variables are there', async () => {
    const outcome = await executor().run(
      job({
        setupScript: local(`
          request.method = 'PUT';
          request.url = request.url + '?from=setup';
          request.body = JSON.stringify({ check: process.env.CHECK_ID, region: process.env.REGION });
          request.headers['x-set-by'] = 'setup';
          request.queryParameters.page = '7';
          console.log('setup ran for', process.env.CHECK_NAME);
        `),
      }),
      contextOf(),
    );
    expect(outcome.status, outcome.errorMessage ?? '').toBe('PASSED');
    const seen = server.requests.at(-1)!;
    expect(seen).toMatchObject({ method: 'PUT', query: { from: 'setup', page: '7' } });
    expect(JSON.parse(seen.body)).toEqual({ check: 'check-1', region: 'test-location' });
    expect(seen.headers['x-set-by']).toBe('setup');
    expect(outcome.logs.map((l) => l.msg)).toContain('[setup] setup ran for API check');
  });

  it('teardown sees the response and its change of body is what assertions judge', async () => {
    const outcome = await executor().run(
      job(
        {
          tearDownScript: local(
            `
            if (response.statusCode !== 200 || !response.headers['content-type'].includes('json')) throw new Error('bad response');
            if (typeof response.timings.end !== 'number' || typeof response.timingPhases.total !== 'number') throw new Error('no timings');
            const body = JSON.parse(response.body);
            response.body = JSON.stringify({ method: body.method, rewritten: true });
          `,
            'teardown script',
          ),
        },
        {
          assertions: [
            { source: 'JSON_BODY', property: '$.rewritten', comparison: 'EQUALS', target: 'true' },
          ],
        },
      ),
      contextOf(),
    );
    expect(outcome.status, outcome.errorMessage ?? '').toBe('PASSED');
    expect(JSON.parse(outcome.httpCheckResult!.response!.body!)).toEqual({ method: 'GET', rewritten: true });
  });

  it('scrubs secrets from script output, including SERVICE_SECRET_* values the script sets', async () => {
    const lines: string[] = [];
    const log = pino(
      { level: 'debug' },
      new Writable({
        write(chunk, _e, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const outcome = await executor().run(
      job({
        environmentVariables: [{ key: 'PASSWORD', value: 'Pl4nted-pa55word', secret: true }],
        setupScript: local(`
          console.log('password is', process.env.PASSWORD);
          process.env.SERVICE_SECRET_TOKEN = 'minted-' + 'T0ken-xyz';
          console.log('token is', process.env.SERVICE_SECRET_TOKEN);
          request.headers['x-token'] = process.env.SERVICE_SECRET_TOKEN;
          request.body = 'pw=' + encodeURIComponent(process.env.PASSWORD);
        `),
      }),
      { signal: new AbortController().signal, log },
    );
    expect(outcome.status).toBe('PASSED');
    expect(server.requests.at(-1)!.headers['x-token']).toBe('minted-T0ken-xyz');
    const everything = JSON.stringify(outcome) + lines.join('');
    for (const planted of ['Pl4nted-pa55word', 'minted-T0ken-xyz']) expect(everything).not.toContain(planted);
    expect(outcome.logs.some((l) => l.msg === '[setup] password is *****')).toBe(true);
  });

  const failures: [string, string, RegExp][] = [
    [
      'reads the agent API_KEY',
      "if (process.env.API_KEY !== undefined) throw new Error('leaked ' + process.env.API_KEY); throw new Error('no key');",
      /no key/,
    ],
    [
      'reads an agent file',
      `require('node:fs').readFileSync(${JSON.stringify(join(PACKAGE_ROOT, 'package.json'))}, 'utf8');`,
      /denied.*FileSystemRead|FileSystemRead.*denied|permission/i,
    ],
    ['loops for ever', 'for (;;) {}', /timed out after \d+ ms/],
    [
      'allocates without bound',
      'const all = []; for (;;) all.push(new Array(1e6).fill(Math.random()));',
      /memory/i,
    ],
    [
      'spawns a child process',
      "require('node:child_process').execSync('id');",
      /denied|permission|ChildProcess/i,
    ],
    ['exits', 'process.exit(3);', /exit/i],
    ['throws', "throw new Error('boom from setup');", /boom from setup/],
    ['floods its output', "for (;;) console.log('x'.repeat(10000));", /output/i],
  ];
  it.each(failures)(
    'a script that %s fails the run with a clear reason',
    async (_what, code, reason) => {
      process.env.API_KEY = 'agent-api-key-must-not-leak';
      try {
        const outcome = await executor().run(job({ setupScript: local(code) }), contextOf());
        expect(outcome).toMatchObject({ status: 'FAILED', hasFailures: true });
        expect(outcome.errorMessage).toMatch(/^setup script/);
        expect(outcome.errorMessage).toMatch(reason);
        expect(JSON.stringify(outcome)).not.toContain('agent-api-key-must-not-leak');
      } finally {
        delete process.env.API_KEY;
      }
    },
    20_000,
  );

  it('scrubs a SERVICE_SECRET_* value from the result and logs of a script that timed out, in every encoding', async () => {
    const lines: string[] = [];
    const log = pino(
      { level: 'debug' },
      new Writable({
        write(chunk, _e, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const value = 'T1med out/secret-val';
    const outcome = await executor().run(
      job({
        setupScript: local(`
          process.env = { ...process.env, SERVICE_SECRET_X: ${JSON.stringify(value)} };
          const v = process.env.SERVICE_SECRET_X;
          console.log('x is', v, Buffer.from(v).toString('base64'), encodeURIComponent(v));
          require('node:fs').writeSync(1, 'raw ' + v + '\\n');
          for (;;) {}
        `),
      }),
      { signal: new AbortController().signal, log },
    );
    expect(outcome.errorMessage ?? '').toMatch(/timed out after \d+ ms/);
    const everything = JSON.stringify(outcome) + lines.join('');
    for (const form of [value, Buffer.from(value).toString('base64'), encodeURIComponent(value)]) {
      expect(everything).not.toContain(form);
    }
    expect(outcome.logs.some((l) => l.msg.includes('x is *****'))).toBe(true);
  });

  it('keeps serving other checks while a script hangs', async () => {
    const api = executor();
    const hanging = api.run(job({ setupScript: local('for (;;) {}') }), contextOf());
    const started = performance.now();
    const others = await Promise.all(Array.from({ length: 5 }, () => api.run(job({}), contextOf())));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(others.map((o) => o.status)).toEqual(['PASSED', 'PASSED', 'PASSED', 'PASSED', 'PASSED']);
    expect((await hanging).errorMessage).toMatch(/timed out/);
  });

  it('fails a job with scripts on an executor without a sandbox, as an agent error', async () => {
    const outcome = await createApiExecutor().run(job({ setupScript: local('1') }), contextOf());
    expect(outcome).toMatchObject({ status: 'FAILED', hasErrors: true });
    expect(outcome.errorMessage).toMatch(/no script sandbox/);
  });
});
