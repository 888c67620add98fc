import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiExecutor } from '../../../src/checks/api/index.js';
import type { ExecutorContext } from '../../../src/checks/executor.js';
import type { Job, JobScript, RunOutcome } from '../../../src/protocol/index.js';
import { ScriptSandbox } from '../../../src/sandbox/sandbox.js';
import { MAX_SECRET_LENGTH, MAX_SECRETS } from '../../../src/common/scrub.js';
import { expectNoSecret } from '../../helpers/secrets.js';
import { jobOf } from '../../helpers/jobs.js';
import { apiRequest } from '../../helpers/api-request.js';

// A run with more secrets than the scrubber holds, or one too long for it, withholds its output
// (src/checks/outcome.ts releaseOutcome): nothing of any secret leaves, and the result says why.

/** A context whose logger writes every agent log line into `lines`. */
function recordingContext(): { context: ExecutorContext; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { context: { signal: new AbortController().signal, log: pino({ level: 'debug' }, stream) }, lines };
}

const setupScript = (code: string): JobScript => ({
  source: 'LOCAL',
  snippetId: null,
  name: 'setup script',
  code,
});

/** 300 distinct secrets, none a prefix of another's first 13 characters. */
const secrets = Array.from(
  { length: 300 },
  (_, i) => `s${String(i).padStart(3, '0')}-Overflow~Secret-${randomBytes(6).toString('hex')}`,
);

/** Expects the outcome to be the withheld failure, and no secret in it or in the agent log. */
function expectWithheld(outcome: RunOutcome, lines: string[], values: readonly string[], why: RegExp): void {
  // The leak first: on code that fails open, this is what fails.
  const json = JSON.stringify(outcome);
  const log = lines.join('\n');
  for (const value of values) {
    expectNoSecret(json, value);
    expectNoSecret(log, value);
  }
  expect(outcome.status).toBe('FAILED');
  expect(outcome.hasErrors).toBe(true);
  expect(outcome.errorMessage).toMatch(/output withheld/);
  expect(outcome.errorMessage).toMatch(why);
  expect(outcome.httpCheckResult).toBeUndefined();
  expect(outcome.assertions).toEqual([]);
  expect(outcome.logs.map((l) => l.msg)).toEqual([outcome.errorMessage]);
  expect(log).toMatch(/run log withheld/);
}

describe('an API run with more secrets than the scrubber holds', () => {
  let server: Server;
  let origin: string;
  let sandbox: ScriptSandbox;
  // Closing an executor closes its script runner: one for the runs with scripts.
  let executor: ReturnType<typeof createApiExecutor>;
  const echoed: string[] = [];

  beforeAll(async () => {
    // Echoes every secret in the body (as written, percent-encoded, base64, upper-cased) and in
    // headers, plus the request's body, URL and headers as received.
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const extra = echoed.splice(0);
        const all = [...secrets, ...extra];
        for (const [i, value] of all.slice(MAX_SECRETS - 10, MAX_SECRETS + 30).entries()) {
          res.setHeader(`x-echo-${i}`, value);
        }
        res.setHeader('set-cookie', `sid=${secrets[299]}; Path=/`);
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(
          [
            req.url,
            JSON.stringify(req.headers),
            Buffer.concat(chunks).toString(),
            ...all,
            ...all.map((v) => encodeURIComponent(v)),
            ...all.map((v) => Buffer.from(v).toString('base64')),
            ...all.map((v) => v.toUpperCase()),
          ].join('\n'),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    sandbox = new ScriptSandbox({ poolSize: 1 });
    await sandbox.warm('2026.04');
    executor = createApiExecutor({ scripts: sandbox, scriptTimeoutMs: 5000 });
  });
  afterAll(async () => {
    await executor.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('300 secret variables echoed in body, headers and a setup script output: none leaks, the result says why', async () => {
    const job: Job = {
      ...jobOf(
        'API',
        apiRequest(`${origin}/echo?last={{S299}}&first={{S0}}`, {
          method: 'POST',
          bodyType: 'RAW',
          body: '{{S299}} {{S280}} {{S1}}',
          headers: [{ key: 'x-sent', value: '{{S299}}' }],
        }),
        { timeoutMs: 15_000 },
      ),
      environmentVariables: secrets.map((value, i) => ({ key: `S${i}`, value, secret: true })),
      setupScript: setupScript(
        'for (const [k, v] of Object.entries(process.env)) if (/^S\\d+$/.test(k)) console.log(k, v, encodeURIComponent(v));',
      ),
    };
    const { context, lines } = recordingContext();
    const outcome = await executor.run(job, context);
    expectWithheld(outcome, lines, secrets, new RegExp(`more than ${MAX_SECRETS} secret values`));
  });

  it('a script setting 300 SERVICE_SECRET_* values and printing them leaks none of them', async () => {
    const minted = Array.from(
      { length: 300 },
      (_, i) => `m${String(i).padStart(3, '0')}-Minted~Secret-value`,
    );
    const job: Job = {
      ...jobOf('API', apiRequest(`${origin}/minted`), { timeoutMs: 15_000 }),
      setupScript: setupScript(
        `for (let i = 0; i < 300; i++) { const v = 'm' + String(i).padStart(3, '0') + '-Minted~Secret-value'; process.env['SERVICE_SECRET_' + i] = v; console.log('minted', v, Buffer.from(v).toString('base64')); }
         request.headers['x-last'] = process.env.SERVICE_SECRET_299;`,
      ),
    };
    echoed.push(...minted);
    const { context, lines } = recordingContext();
    const outcome = await executor.run(job, context);
    expectWithheld(outcome, lines, minted, new RegExp(`more than ${MAX_SECRETS} secret values`));
  });

  it('a 200 KiB secret echoed back leaves no part of it, its tail included', async () => {
    const plain = createApiExecutor();
    try {
      const big = randomBytes(150 * 1024).toString('base64');
      expect(big.length).toBeGreaterThan(MAX_SECRET_LENGTH);
      const job: Job = {
        ...jobOf(
          'API',
          apiRequest(`${origin}/big`, { method: 'POST', bodyType: 'RAW', body: 'big={{BIG}}' }),
          { timeoutMs: 15_000 },
        ),
        environmentVariables: [{ key: 'BIG', value: big, secret: true }],
      };
      const { context, lines } = recordingContext();
      const outcome = await plain.run(job, context);
      const slices = [
        big.slice(-1024),
        big.slice(MAX_SECRET_LENGTH - 512, MAX_SECRET_LENGTH + 512),
        big.slice(0, 1024),
      ];
      expectWithheld(
        outcome,
        lines,
        slices,
        new RegExp(`a secret value longer than ${MAX_SECRET_LENGTH} characters`),
      );
    } finally {
      await plain.close();
    }
  });
});
