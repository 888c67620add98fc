import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fitResultToLimit, jsonSizeBytes } from '../../src/agent/outcomes.js';
import { postResultWithRetry } from '../../src/agent/result-poster.js';
import { ServiceClient } from '../../src/agent/service-client.js';
import { type CheckResult, CheckResultSchema, MAX_RESULT_SIZE_BYTES } from '../../src/protocol/index.js';
import { Value } from '@sinclair/typebox/value';
import { FAST_BACKOFF, memoryLogger, passedOutcome, TEST_API_KEY, TestService } from './helpers.js';

function result(extra: Partial<CheckResult> = {}): CheckResult {
  return {
    ...passedOutcome(),
    runLocation: 'lab',
    attempts: 1,
    resultType: 'FINAL',
    artifacts: [],
    ...extra,
  };
}

function httpPart(
  body: string,
  headers: Record<string, string> = {},
): NonNullable<CheckResult['httpCheckResult']> {
  return {
    response: {
      statusCode: 200,
      statusText: 'OK',
      url: 'http://127.0.0.1/',
      headers,
      bodySizeBytes: body.length,
      bodyTruncated: false,
      body,
    },
  } as unknown as NonNullable<CheckResult['httpCheckResult']>;
}

const MiB = 1024 * 1024;

describe('fitResultToLimit', () => {
  it('leaves a result under the limit untouched (the same object, no flag)', () => {
    const small = result({ logs: [{ time: 't', level: 'INFO', msg: 'x'.repeat(1000) }] });
    expect(fitResultToLimit(small)).toBe(small);
  });

  it.each([
    ['one huge log line', () => result({ logs: [{ time: 't', level: 'INFO', msg: 'a'.repeat(10 * MiB) }] })],
    [
      '200 000 short log lines',
      () =>
        result({
          logs: Array.from({ length: 200_000 }, (_, i) => ({
            time: 't',
            level: 'INFO' as const,
            msg: `line ${i}`,
          })),
        }),
    ],
    [
      'a body of control characters (6 bytes of JSON each)',
      () => result({ httpCheckResult: httpPart('\u0001'.repeat(2 * MiB)) }),
    ],
    ['a body of emoji (surrogate pairs)', () => result({ httpCheckResult: httpPart('😀'.repeat(3 * MiB)) })],
    [
      'a huge response header (not a log or body)',
      () => result({ httpCheckResult: httpPart('ok', { 'x-big': 'h'.repeat(9 * MiB) }) }),
    ],
    ['a huge errorMessage', () => result({ status: 'FAILED', errorMessage: 'e'.repeat(9 * MiB) })],
    [
      '100 000 assertions',
      () =>
        result({
          assertions: Array.from({ length: 100_000 }, () => ({
            source: 'TEXT_BODY',
            property: '',
            comparison: 'CONTAINS',
            target: 't'.repeat(50),
            actual: 'a'.repeat(50),
            regex: null,
            passed: true,
            error: null,
          })) as unknown as CheckResult['assertions'],
        }),
    ],
  ])('%s: fits under 8 MiB, still a valid result, flagged with the reason', (_name, make) => {
    const big = make();
    const before = jsonSizeBytes(big);
    expect(before).toBeGreaterThan(MAX_RESULT_SIZE_BYTES);
    const t0 = performance.now();
    const fitted = fitResultToLimit(big);
    const ms = performance.now() - t0;

    expect(jsonSizeBytes(fitted)).toBeLessThanOrEqual(MAX_RESULT_SIZE_BYTES);
    expect(Value.Check(CheckResultSchema, fitted)).toBe(Value.Check(CheckResultSchema, big));
    expect(fitted.truncated?.originalSizeBytes).toBe(before);
    expect(fitted.truncated?.reason).toContain(`limit of ${MAX_RESULT_SIZE_BYTES} bytes`);
    expect(fitted.truncated?.fields.length).toBeGreaterThan(0);
    // The status and timings are never touched; the input is not changed.
    expect(fitted.status).toBe(big.status);
    expect(fitted.responseTime).toBe(big.responseTime);
    expect(jsonSizeBytes(big)).toBe(before);
    // Keeps most of what fits: no more than needed went (arrays other than logs keep 100 items).
    if (fitted.assertions.length === big.assertions.length) {
      expect(jsonSizeBytes(fitted)).toBeGreaterThan(MAX_RESULT_SIZE_BYTES / 2);
    }
    expect(ms).toBeLessThan(5000);
  });

  it('cuts logs and bodies before other fields, and says in each cut text how much went', () => {
    const big = result({
      logs: [{ time: 't', level: 'INFO', msg: 'L'.repeat(5 * MiB) }],
      httpCheckResult: httpPart('B'.repeat(5 * MiB), { 'x-keep': 'k'.repeat(100_000) }),
    });
    const fitted = fitResultToLimit(big);

    expect(fitted.httpCheckResult?.response?.headers['x-keep']).toHaveLength(100_000);
    expect(fitted.truncated?.fields).toEqual(
      expect.arrayContaining(['logs[0].msg', 'httpCheckResult.response.body']),
    );
    const msg = fitted.logs[0]!.msg;
    const cut = Number(/…\[truncated (\d+) bytes\]$/.exec(msg)?.[1]);
    expect(msg.length - `…[truncated ${cut} bytes]`.length + cut).toBe(5 * MiB);
  });
});

describe('postResultWithRetry and oversized results', () => {
  let service: TestService;
  let client: ServiceClient;

  beforeEach(async () => {
    service = await new TestService().start();
    client = new ServiceClient({ serviceUrl: service.url, apiKey: TEST_API_KEY, agentId: 'agent-1' });
  });
  afterEach(async () => {
    await client.close();
    await service.close();
  });

  it('posts a trimmed result the first time, and on a 413 anyway trims harder and posts once more', async () => {
    // A proxy in front of the service with a 3 MiB limit.
    service.handlers.result = (request) =>
      jsonSizeBytes(request.body) > 3 * MiB ? { status: 413, body: { message: 'too large' } } : 'default';
    const log = memoryLogger();
    const big = result({ logs: [{ time: 't', level: 'INFO', msg: 'x'.repeat(12 * MiB) }] });

    await postResultWithRetry({
      client,
      jobId: 'job-1',
      result: big,
      log: log.logger,
      signal: new AbortController().signal,
      backoff: FAST_BACKOFF,
    });

    const posts = service.received('result');
    expect(posts).toHaveLength(2);
    expect(jsonSizeBytes(posts[0]!.body)).toBeLessThanOrEqual(MAX_RESULT_SIZE_BYTES);
    expect(jsonSizeBytes(posts[1]!.body)).toBeLessThanOrEqual(3 * MiB);
    expect((posts[1]!.body as CheckResult).truncated?.originalSizeBytes).toBe(jsonSizeBytes(big));
    expect(log.lines.some((l) => l.msg === 'result posted')).toBe(true);
  });
});
