import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptSandbox } from '../../src/sandbox/sandbox.js';
import { MAX_LOG_LINES, oneLine } from '../../src/sandbox/script-run.js';
import type { ScriptRunRequest, ScriptRunResult } from '../../src/sandbox/types.js';

// What a hostile script makes the agent (this test process) do: its event loop must stay free
// (issue rule: no user payload holds it for more than 50 ms) and its memory bounded.

const RUNTIME = '2026.04';
const MAX_OUTPUT_BYTES = 1_048_576;
/**
 * Worst gap allowed between ticks of a 5 ms interval while a hostile script runs, ms: the
 * 50 ms budget plus 30 ms for the scheduler of a loaded 2-core CI machine (other test files run
 * beside this one). The quadratic code this guards against held the loop for 30 s.
 */
const MAX_LOOP_GAP_MS = 80;

let root: string;
let sandbox: ScriptSandbox;

function script(code: string, extra: Partial<ScriptRunRequest> = {}): ScriptRunRequest {
  return {
    code,
    name: 'setup script',
    accountId: 'acct-hostile',
    runtimeId: RUNTIME,
    env: {},
    context: { request: { method: 'GET', url: 'https://example.test/', body: '', headers: [] } },
    ...extra,
  };
}

function failure(result: ScriptRunResult) {
  if (result.ok) throw new Error(`expected a failure, got ok with ${result.logs.length} log lines`);
  return result;
}

/** Runs `work` while a 5 ms interval records the worst gap between its ticks and the peak RSS. */
async function measured<T>(
  work: () => Promise<T>,
): Promise<{ value: T; maxGapMs: number; rssGrowthMb: number }> {
  global.gc?.();
  const rssBefore = process.memoryUsage.rss();
  let peakRss = rssBefore;
  let last = performance.now();
  let maxGapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 5);
  try {
    const value = await work();
    return { value, maxGapMs, rssGrowthMb: (peakRss - rssBefore) / 1_048_576 };
  } finally {
    clearInterval(timer);
  }
}

const logBytes = (result: ScriptRunResult) =>
  result.logs.reduce((sum, l) => sum + Buffer.byteLength(l.msg), 0);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'outpost-hostile-test-'));
  await chmod(root, 0o711);
  await mkdir(join(root, 'scripts'), { mode: 0o711 });
  sandbox = new ScriptSandbox({
    tmpRoot: join(root, 'scripts'),
    poolSize: 2,
    maxOutputBytes: MAX_OUTPUT_BYTES,
  });
  await sandbox.warm(RUNTIME);
});

afterAll(async () => {
  await sandbox?.close();
  await rm(root, { recursive: true, force: true });
});

describe('script output never holds the agent’s event loop', () => {
  it('makes a reason of one line in linear time, whatever the whitespace', () => {
    for (const text of [
      `${' '.repeat(150_000)}x`,
      `${'\t \r'.repeat(100_000)}x`,
      `x${' '.repeat(150_000)}\n${' '.repeat(150_000)}y`,
      `${' \n'.repeat(150_000)}z`,
      `${'a \n'.repeat(150_000)}`,
    ]) {
      const t0 = performance.now();
      const line = oneLine(text);
      expect(performance.now() - t0).toBeLessThan(MAX_LOOP_GAP_MS);
      expect(line).not.toMatch(/\n/);
      expect(line.length).toBeLessThanOrEqual(1_000);
    }
    expect(oneLine('  TypeError: bad\n    at  x \n\n  at y  ')).toBe('TypeError: bad at  x at y');
  });

  const cases: [string, string, RegExp][] = [
    [
      'throws an error of 150 kB of spaces',
      "throw new Error(' '.repeat(150_000) + 'end');",
      /^setup script threw Error:/,
    ],
    [
      'throws an error of spaces and tabs without end',
      "throw new Error(' \\t'.repeat(2_000_000));",
      /^setup script threw Error/,
    ],
    ['throws a 20 MB error', "throw new Error('e'.repeat(20_000_000));", /^setup script threw Error: e+…$/],
    [
      'floods stdout without newlines (fd 1)',
      "const fs = require('fs'); const b = 'x'.repeat(65_536); for (;;) try { fs.writeSync(1, b); } catch {}",
      /^setup script wrote more than 1048576 bytes of output$/,
    ],
    [
      'floods stderr without newlines (fd 2)',
      "const fs = require('fs'); const b = 'y'.repeat(65_536); for (;;) try { fs.writeSync(2, b); } catch {}",
      /^setup script wrote more than 1048576 bytes of output$/,
    ],
    [
      'writes to process.stdout without newlines',
      "const b = 'z'.repeat(10_000); for (;;) process.stdout.write(b);",
      /^setup script wrote more than 1048576 bytes of output$/,
    ],
    [
      "console.log's a 50 MB string",
      "console.log('g'.repeat(50_000_000));",
      /^setup script wrote more than 1048576 bytes of output$/,
    ],
    [
      'writes many tiny lines',
      "for (;;) console.log('');",
      new RegExp(`^setup script wrote more than ${MAX_LOG_LINES} lines of output$`),
    ],
    [
      'writes many empty lines on fd 1',
      "const fs = require('fs'); const b = '\\n'.repeat(65_536); for (;;) try { fs.writeSync(1, b); } catch {}",
      new RegExp(`^setup script wrote more than (${MAX_LOG_LINES} lines|1048576 bytes) of output$`),
    ],
    [
      'floods the result channel without newlines (fd 3)',
      "const fs = require('fs'); const b = 'w'.repeat(65_536); for (;;) fs.writeSync(3, b);",
      /^setup script sent a message larger than \d+ bytes$/,
    ],
    [
      'floods the result channel with empty lines (fd 3)',
      "const fs = require('fs'); const b = '\\n'.repeat(65_536); for (;;) fs.writeSync(3, b);",
      /^setup script (wrote more than \d+ lines of output|sent more than \d+ bytes to the sandbox)$/,
    ],
    [
      'floods the result channel with tiny well-formed messages (fd 3)',
      'const fs = require(\'fs\'); const b = \'{"t":"ready"}\\n{"t":"exit","code":0,"called":false}\\n\'.repeat(2_000); for (;;) fs.writeSync(3, b);',
      /^setup script (sent more than \d+ bytes to the sandbox|timed out after 8000 ms)$/,
    ],
    [
      'floods the result channel with lines that are not messages (fd 3)',
      "const fs = require('fs'); const b = '{\\n'.repeat(32_768); for (;;) fs.writeSync(3, b);",
      /^setup script wrote more than 100 lines that are not messages to the sandbox$/,
    ],
  ];

  for (const [what, code, reason] of cases) {
    // One more try when a gap is over: on 2 cores the hostile child spins at full speed beside this process, and
    // the scheduler alone once stretched a gap to 86 ms (CI, 2026-11-29). The code this guards against held the
    // loop for 30 s, which no retry hides.
    it(`keeps the event loop free while a script ${what}`, { timeout: 30_000, retry: 1 }, async () => {
      // The pool full first: the previous case's process was replaced after its run, and that start
      // (child_process.spawn, which forks this large process and blocks its loop for tens of ms on Node 24)
      // would otherwise land in this case's window and be counted as the script's output handling.
      await sandbox.warm(RUNTIME);
      const { value: result, maxGapMs } = await measured(() =>
        sandbox.run(script(code, { timeoutMs: 8_000 })),
      );

      expect(failure(result).reason).toMatch(reason);
      expect(failure(result).reason.length).toBeLessThanOrEqual(1_000);
      expect(logBytes(result)).toBeLessThanOrEqual(MAX_OUTPUT_BYTES);
      expect(result.logs.length).toBeLessThanOrEqual(MAX_LOG_LINES);
      expect(maxGapMs, `worst event-loop gap ${maxGapMs.toFixed(1)} ms`).toBeLessThan(MAX_LOOP_GAP_MS);
    });
  }

  it('keeps the output up to the limit of a giant console.log', async () => {
    const result = await sandbox.run(script("console.log('h'.repeat(5_000_000));"));

    expect(failure(result).code).toBe('OUTPUT_LIMIT');
    expect(result.logs.map((l) => l.msg)).toEqual(['h'.repeat(MAX_OUTPUT_BYTES)]);
  });
});

describe('the result channel cannot amplify the agent’s memory', () => {
  it('fails a forged done line past its cap, with a clear reason', async () => {
    const result = await sandbox.run(
      script(
        `const fs = require('fs'); fs.writeSync(3, '{"t":"done","durationMs":0,"context":{"request":"');
         const b = 'd'.repeat(1 << 20); for (;;) fs.writeSync(3, b);`,
      ),
    );

    expect(failure(result).code).toBe('OUTPUT_LIMIT');
    expect(failure(result).reason).toMatch(/^setup script sent a message larger than \d+ bytes$/);
  });

  it('still returns a large context a teardown legitimately changed', async () => {
    const body = 'b'.repeat(5_000_000);
    const result = await sandbox.run(
      script("response.body = response.body.toUpperCase() + 'tail';", {
        context: { response: { statusCode: 200, body, headers: {} } },
      }),
    );

    expect(result.ok, result.ok ? '' : result.reason).toBe(true);
    expect((result.ok && (result.context.response as { body: string }).body.length) || 0).toBe(5_000_004);
  });

  it('stays under 150 MB of agent RSS growth with five hostile scripts at once', async () => {
    const hostile = [
      `const fs = require('fs'); fs.writeSync(3, '{"t":"done","durationMs":0,"context":{"request":"');
       const b = 'd'.repeat(1 << 20); for (;;) fs.writeSync(3, b);`,
      "const fs = require('fs'); const b = 'w'.repeat(1 << 20); for (;;) fs.writeSync(3, b);",
      "console.log('g'.repeat(60_000_000));",
      "const fs = require('fs'); const b = 'x'.repeat(1 << 20); for (;;) try { fs.writeSync(1, b); fs.writeSync(2, b); } catch {}",
      `const fs = require('fs'); const b = '{"t":"log","level":"INFO","msg":"' + '\\\\u0000'.repeat(200_000); for (;;) fs.writeSync(3, b);`,
    ];
    const {
      value: results,
      rssGrowthMb,
      maxGapMs,
    } = await measured(() =>
      Promise.all(hostile.map((code) => sandbox.run(script(code, { timeoutMs: 8_000 })))),
    );

    console.log(
      `five hostile scripts: agent RSS ${(process.memoryUsage.rss() / 1_048_576).toFixed(0)} MB after, growth ${rssGrowthMb.toFixed(1)} MB, worst loop gap ${maxGapMs.toFixed(1)} ms`,
    );
    for (const result of results) expect(failure(result).code).toBe('OUTPUT_LIMIT');
    expect(rssGrowthMb).toBeLessThan(150);
  }, 60_000);
});

describe('secrets a script sets are known even when it is killed', () => {
  it('returns every SERVICE_SECRET_* value of a script that timed out, however it was set', async () => {
    const result = await sandbox.run(
      script(
        `process.env.SERVICE_SECRET_A = 'sec-assign-1';
         Reflect.set(process.env, 'SERVICE_SECRET_B', 'sec-reflect-2');
         Object.defineProperty(process.env, 'SERVICE_SECRET_C', { value: 'sec-define-3', enumerable: true, configurable: true, writable: true });
         Object.assign(process.env, { SERVICE_SECRET_D: 'sec-assign-4' });
         process.env.SERVICE_SECRET_E = 'old'; delete process.env.SERVICE_SECRET_E; process.env.SERVICE_SECRET_E = 'sec-reset-5';
         process.env = { ...process.env, SERVICE_SECRET_F: 'sec-replace-6' };
         process.env.SERVICE_SECRET_G = 'sec-after-replace-7';
         console.log(Object.entries(process.env).filter(([k]) => k.startsWith('SERVICE_SECRET_')).map(([, v]) => v).join());
         for (;;) {}`,
        { timeoutMs: 1_000 },
      ),
    );

    expect(failure(result).code).toBe('TIMEOUT');
    const values = [
      'sec-assign-1',
      'sec-reflect-2',
      'sec-define-3',
      'sec-assign-4',
      'sec-reset-5',
      'sec-replace-6',
      'sec-after-replace-7',
    ];
    for (const value of values) expect(result.secrets, value).toContain(value);
  });

  it('returns a secret set just before the output limit stopped the script', async () => {
    const result = await sandbox.run(
      script(
        `process.env.SERVICE_SECRET_BIG = 's'.repeat(2_000_000);
         const fs = require('fs'); fs.writeSync(1, process.env.SERVICE_SECRET_BIG); for (;;) {}`,
        { timeoutMs: 2_000 },
      ),
    );

    expect(result.ok).toBe(false);
    // One character past the scrubber's cap (128 KB): its scrubber refuses it and withholds the output.
    expect(result.secrets).toEqual(['s'.repeat(131_073)]);
  });
});
