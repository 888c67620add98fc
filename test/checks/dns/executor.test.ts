import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsExecutor } from '../../../src/checks/dns/index.js';
import type { JobCheck } from '../../../src/protocol/index.js';
import { type Dnsmasq, dnsmasqWorks, EXAMPLE_ZONE, startDnsmasq } from '../../helpers/dns-servers.js';
import { missingRequirement } from '../../helpers/requirements.js';
import { assertion, context, dnsJob, expectValidOutcome } from './helpers.js';

const missing = missingRequirement([
  { ok: dnsmasqWorks(), what: 'dnsmasq', install: 'apt-get install dnsmasq' },
]);

describe.skipIf(missing !== null)('DNS executor against dnsmasq', () => {
  let dnsmasq: Dnsmasq;
  const executor = createDnsExecutor();
  beforeAll(async () => {
    dnsmasq = await startDnsmasq(EXAMPLE_ZONE);
  });
  afterAll(async () => {
    await executor.close();
    await dnsmasq?.stop();
  });
  const run = (request: Record<string, unknown>, check: Partial<JobCheck> = {}) =>
    executor.run(dnsJob({ port: dnsmasq.port, ...request }, check), context());

  it('passes an A check and reports the answer as text and JSON', async () => {
    const outcome = await run({
      assertions: [assertion('JSON_ANSWER', 'EQUALS', '192.0.2.10', { property: '$.Answer[0].data' })],
    });
    expectValidOutcome(outcome);
    expect(outcome).toMatchObject({
      status: 'PASSED',
      hasFailures: false,
      hasErrors: false,
      errorMessage: null,
    });
    expect(outcome.dnsCheckResult).toMatchObject({
      returnCode: 'NOERROR',
      answer: 'www.example.test.\t300\tIN\tA\t192.0.2.10',
      json: { Status: 0, Answer: [{ name: 'www.example.test.', type: 1, TTL: 300, data: '192.0.2.10' }] },
      nameServerInfo: { host: '127.0.0.1', port: dnsmasq.port, protocol: 'UDP' },
      truncatedRetriedOverTcp: false,
    });
    expect(outcome.responseTime).toBe(outcome.dnsCheckResult?.responseTime);
    expect(outcome.responseTime).toBeGreaterThan(0);
    expect(outcome.responseTime).toBeLessThan(500);
  });

  it.each([
    [
      'RESPONSE_TIME',
      assertion('RESPONSE_TIME', 'LESS_THAN', '1000'),
      assertion('RESPONSE_TIME', 'GREATER_THAN', '1000'),
      /is not greater than 1000/,
    ],
    [
      'RESPONSE_CODE',
      assertion('RESPONSE_CODE', 'EQUALS', 'NOERROR'),
      assertion('RESPONSE_CODE', 'EQUALS', 'NXDOMAIN'),
      /"NOERROR" does not equal "NXDOMAIN"/,
    ],
    [
      'TEXT_ANSWER',
      assertion('TEXT_ANSWER', 'CONTAINS', 'IN\tMX\t10 mail.example.test.'),
      assertion('TEXT_ANSWER', 'CONTAINS', 'backup.example.test'),
      /does not contain "backup.example.test"/,
    ],
    [
      'TEXT_ANSWER with regex',
      assertion('TEXT_ANSWER', 'EQUALS', 'mail.example.test.', { regex: 'MX\\s+\\d+\\s+(\\S+)' }),
      assertion('TEXT_ANSWER', 'EQUALS', '20', { regex: 'MX\\s+(\\d+)' }),
      /"10" does not equal "20"/,
    ],
    [
      'JSON_ANSWER',
      assertion('JSON_ANSWER', 'EQUALS', '10 mail.example.test.', { property: '$.Answer[*].data' }),
      assertion('JSON_ANSWER', 'GREATER_THAN', '1', { property: '$.Answer.length' }),
      /1 is not greater than 1/,
    ],
  ] as const)('judges %s: the holding assertion passes, the other fails', async (_, holds, breaks, why) => {
    const passed = await run({ recordType: 'MX', query: 'example.test', assertions: [holds] });
    expect(passed.status).toBe('PASSED');
    expect(passed.assertions).toEqual([expect.objectContaining({ source: holds.source, error: null })]);

    const failed = await run({ recordType: 'MX', query: 'example.test', assertions: [holds, breaks] });
    expectValidOutcome(failed);
    expect(failed).toMatchObject({ status: 'FAILED', hasFailures: true, hasErrors: false });
    expect(failed.assertions[0]?.error).toBeNull();
    expect(failed.assertions[1]?.error).toMatch(why);
    expect(failed.errorMessage).toMatch(new RegExp(`^assertion ${breaks.source}.* failed: `));
  });

  it('fails NXDOMAIN without a RESPONSE_CODE assertion, and passes it when one expects it', async () => {
    const plain = await run({ query: 'nope.example.test' });
    expect(plain).toMatchObject({
      status: 'FAILED',
      errorMessage: 'return code NXDOMAIN is not NOERROR (a RESPONSE_CODE assertion can expect it)',
    });
    expect(plain.dnsCheckResult).toMatchObject({
      returnCode: 'NXDOMAIN',
      answer: '',
      json: { Status: 3, Answer: [] },
    });

    const expected = await run({
      query: 'nope.example.test',
      assertions: [assertion('RESPONSE_CODE', 'EQUALS', 'NXDOMAIN')],
    });
    expect(expected).toMatchObject({ status: 'PASSED', errorMessage: null });
    expect(expected.assertions[0]).toMatchObject({ actual: 'NXDOMAIN', error: null });
  });

  it('inverts the verdict with shouldFail', async () => {
    const outcome = await run({ query: 'nope.example.test' }, { shouldFail: true });
    expect(outcome).toMatchObject({ status: 'PASSED', hasFailures: false });
  });

  it('asks over TCP when the check says so', async () => {
    const outcome = await run({ protocol: 'TCP', recordType: 'TXT', query: 'example.test' });
    expect(outcome.status).toBe('PASSED');
    expect(outcome.dnsCheckResult?.nameServerInfo.protocol).toBe('TCP');
    expect(outcome.dnsCheckResult?.json?.Answer[0]?.data).toBe('v=spf1 -allsecond');
  });
});
