import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMIT_MS, overloaded, worstLoopGap } from '../../helpers/event-loop.js';
import { jsonPathSource } from '../../../src/checks/assertions/engine.js';
import {
  JsonPathLimitError,
  MAX_JSONPATH_REGEX_WORK,
  queryJsonPath,
} from '../../../src/checks/assertions/json-path.js';
import { createDnsExecutor } from '../../../src/checks/dns/index.js';
import { createIcmpExecutor } from '../../../src/checks/icmp/index.js';
import type { Assertion, Job, RunOutcome } from '../../../src/protocol/index.js';
import { type Dnsmasq, dnsmasqWorks, startDnsmasq } from '../../helpers/dns-servers.js';
import { icmpAddonBuilt } from '../../helpers/icmp.js';
import { missingRequirement } from '../../helpers/requirements.js';
import { context, dnsJob, expectValidOutcome } from '../dns/helpers.js';

// Rule: no user-controlled regex, JSONPath, payload or output holds the agent's event loop for
// more than 50 ms. RFC 9535's match() and search() take an I-Regexp; jsonpath-rfc9535 ran it
// with JavaScript's backtracking RegExp, and DNS (JSON_ANSWER) and ICMP (JSON_RESPONSE)
// evaluate JSONPath on the agent's thread. Each hostile pattern below takes JavaScript's RegExp
// one to a few seconds on the value given (and doubles with each character more); in RE2 it is
// linear. A 5 ms interval measures the worst gap of this (the agent's) event loop.
// Slack: on a machine whose load average is above its core count, scheduling alone delays
// timers; then 100 ms of slack is added and said so.

const measured: string[] = [];
afterAll(() => {
  if (measured.length > 0) {
    console.info(
      `worst event-loop gaps (limit ${LIMIT_MS} ms${overloaded ? ', +100 ms: load above core count' : ''}):\n  ${measured.join('\n  ')}`,
    );
  }
});

/** 24 'a's then '!': (a+)+ and (a*)* take 2^24 steps to fail on it in a backtracking engine. */
const NESTED = `${'a'.repeat(24)}!`;
/** 34 'a's then '!': (a|aa)+ takes fib(34) steps to fail on it. */
const ALTERNATED = `${'a'.repeat(34)}!`;

/** Hostile match()/search() calls: the function, its pattern, and the text it runs over. */
const HOSTILE = [
  ['match', '(a+)+$', NESTED],
  ['search', '(a+)+$', NESTED],
  ['match', '(a|aa)+$', ALTERNATED],
  ['search', '(a|aa)+$', ALTERNATED],
  ['match', '(a*)*b', NESTED],
  ['search', '(a*)*b', NESTED],
] as const;

const jsonAssertion = (
  source: Assertion['source'],
  property: string,
  comparison: Assertion['comparison'],
  target = '',
): Assertion => ({ source, property, comparison, target, regex: null });

describe('match() and search() as RFC 9535 says (I-Regexp in RE2)', () => {
  const words = ['ab', 'xab', 'abx', 'a\nb', 1, null, { ab: 'ab' }];

  it('match() tests the whole string, search() any substring; non-strings are never selected', () => {
    expect(queryJsonPath(words, "$[?match(@, 'ab')]")).toEqual(['ab']);
    expect(queryJsonPath(words, "$[?search(@, 'ab')]")).toEqual(['ab', 'xab', 'abx']);
    expect(queryJsonPath(words, "$[?!search(@, 'ab')]")).toEqual(['a\nb', 1, null, { ab: 'ab' }]);
  });

  it('match() anchors an alternation as a whole', () => {
    expect(queryJsonPath(['a', 'b', 'ab', 'xa', 'bx'], "$[?match(@, 'a|b')]")).toEqual(['a', 'b']);
    expect(queryJsonPath(['a', 'b', 'ab', 'xa', 'bx'], "$[?search(@, 'a|b')]")).toEqual([
      'a',
      'b',
      'ab',
      'xa',
      'bx',
    ]);
  });

  it('every dot outside a class matches any character but \\n and \\r', () => {
    const texts = ['a-b-c', 'a\rb-c', 'a-b\nc', 'a\u{1F600}b\u00e9c', 'a\u2028b\u2029c'];
    expect(queryJsonPath(texts, "$[?match(@, 'a.b.c')]")).toEqual([
      'a-b-c',
      'a\u{1F600}b\u00e9c',
      'a\u2028b\u2029c',
    ]);
    expect(queryJsonPath(['a.b', 'axb'], "$[?match(@, 'a\\\\.b')]")).toEqual(['a.b']);
    expect(queryJsonPath(['a.b', 'axb'], "$[?match(@, 'a[.]b')]")).toEqual(['a.b']);
  });

  it('reads character classes and Unicode categories', () => {
    expect(queryJsonPath(['\u00c0B', '\u00e0b', 'AB1'], "$[?match(@, '\\\\p{Lu}+')]")).toEqual(['\u00c0B']);
    expect(queryJsonPath(['ab', 'a]', 'a^'], "$[?match(@, 'a[]^]')]")).toEqual(['a]', 'a^']);
    expect(queryJsonPath(['2024-01-31', '2024-1-31'], "$[?match(@, '[0-9]{4}-[0-9]{2}-[0-9]{2}')]")).toEqual([
      '2024-01-31',
    ]);
  });

  it('takes the pattern from the document too, and an invalid pattern selects nothing', () => {
    const rows = [
      { text: 'v=spf1 -all', pattern: 'spf1' },
      { text: 'v=spf1 -all', pattern: 'dkim' },
      { text: 'x', pattern: '(' },
    ];
    expect(queryJsonPath(rows, '$[?search(@.text, @.pattern)].pattern')).toEqual(['spf1']);
    expect(queryJsonPath(['(', 'a'], "$[?match(@, '(')]")).toEqual([]);
    expect(queryJsonPath(['aa'], "$[?match(@, '(a)\\\\1')]")).toEqual([]);
  });

  it('leaves the other functions, selectors and .length as they were', () => {
    const doc = { items: [{ a: 1, tags: ['x'] }, { a: 2, tags: ['x', 'y', 'z'] }, { name: 'abc' }] };
    expect(queryJsonPath(doc, '$.items[?length(@.tags) > 2].a')).toEqual([2]);
    expect(queryJsonPath(doc, '$.items[?count(@.*) == 1].name')).toEqual(['abc']);
    expect(queryJsonPath(doc, '$.items[?value(@.a) == 1].tags.length')).toEqual([1]);
    expect(queryJsonPath(doc, "$..[?match(@, '[xyz]')]")).toEqual(['x', 'x', 'y', 'z']);
    expect(queryJsonPath(doc, "$.items[?search(@.name, 'b')].name.length")).toEqual([3]);
    expect(queryJsonPath(doc, '$.items[?match(@.name)]')).toEqual([]);
  });

  it.each(HOSTILE)('%s(@, %j) over its hostile text takes no time', (fn, pattern, text) => {
    const started = performance.now();
    expect(queryJsonPath([text, `${text}b`], `$[?${fn}(@, '${pattern}')]`)).toEqual(
      pattern === '(a*)*b' ? (fn === 'match' ? [] : [`${text}b`]) : [],
    );
    expect(performance.now() - started).toBeLessThan(LIMIT_MS);
  });

  it('stops regex work past its bound with a JsonPathLimitError, as an assertion error', async () => {
    const long = 'a'.repeat(MAX_JSONPATH_REGEX_WORK);
    const { result, worstMs } = await worstLoopGap(async () => {
      expect(() => queryJsonPath([long], "$[?search(@, '(a|b)+c')]")).toThrow(JsonPathLimitError);
      return jsonPathSource([long])(jsonAssertion('JSON_ANSWER', "$[?search(@, 'b')]", 'IS_NULL'));
    }).catch((err: Error) => ({ result: err, worstMs: 0 }));
    expect(result).toBeInstanceOf(JsonPathLimitError);
    expect((result as Error).message).toMatch(/^match\(\) and search\(\) in this JSONPath need more than/);
    expect(worstMs).toBeLessThan(LIMIT_MS);
    // A pattern that compiles to much more than its length (counted repetitions), from the path or the document.
    const repeated = 'a{1000}'.repeat(140);
    for (const [doc, path] of [
      [['x'], `$[?match(@, '${repeated}')]`],
      [[{ text: 'x', pattern: 'a{1000}'.repeat(5000) }], '$[?search(@.text, @.pattern)]'],
    ] as const) {
      const started = performance.now();
      expect(() => queryJsonPath(doc, path)).toThrow(JsonPathLimitError);
      expect(performance.now() - started).toBeLessThan(LIMIT_MS);
    }
    // Off the agent's thread (the API body worker, under its deadline) there is no bound.
    expect(queryJsonPath([long], "$[?search(@, 'b')]", { maxRegexWork: Number.POSITIVE_INFINITY })).toEqual(
      [],
    );
  });
});

const missingDns = missingRequirement([
  { ok: dnsmasqWorks(), what: 'dnsmasq', install: 'apt-get install dnsmasq' },
]);

describe.skipIf(missingDns !== null)(
  'DNS JSON_ANSWER with hostile match()/search() keeps the event loop free',
  () => {
    let dnsmasq: Dnsmasq;
    const executor = createDnsExecutor();
    beforeAll(async () => {
      dnsmasq = await startDnsmasq([
        '--local=/test/',
        '--local-ttl=300',
        `--txt-record=nested.redos.test,${NESTED}`,
        `--txt-record=alternated.redos.test,${ALTERNATED}`,
        '--txt-record=spf.redos.test,v=spf1 include:_spf.example.test -all',
        ...Array.from({ length: 8 }, (_, i) => `--txt-record=many.redos.test,record ${i}`),
      ]);
    });
    afterAll(async () => {
      await executor.close();
      await dnsmasq?.stop();
    });
    const runTxt = (query: string, assertions: Assertion[]) =>
      executor.run(
        dnsJob({ port: dnsmasq.port, recordType: 'TXT', query, assertions }, { maxResponseTime: 5000 }),
        context(),
      );

    it.each(HOSTILE)('%s(@.data, %j) over a TXT record the target controls', async (fn, pattern, text) => {
      const query = text === NESTED ? 'nested.redos.test' : 'alternated.redos.test';
      const selects = `$.Answer[?${fn}(@.data, '${pattern}')].data`;
      const { result: outcome, worstMs } = await worstLoopGap(() =>
        runTxt(query, [
          jsonAssertion('JSON_ANSWER', selects, 'IS_NULL'),
          jsonAssertion('JSON_ANSWER', selects, 'EQUALS', text),
        ]),
      );
      measured.push(`DNS ${fn}(@.data, '${pattern}'): ${worstMs.toFixed(1)} ms`);
      expectValidOutcome(outcome);
      expect(outcome.dnsCheckResult?.json?.Answer[0]?.data).toBe(text);
      // Neither pattern matches (the text ends in '!'): nothing is selected, and that is the verdict.
      expect(outcome.assertions).toMatchObject([
        { actual: null, error: null },
        { actual: null, error: expect.stringMatching(/does not equal/) },
      ]);
      expect(outcome).toMatchObject({ status: 'FAILED', hasFailures: true });
      expect(worstMs).toBeLessThan(LIMIT_MS);
    });

    it('stops a JSONPath of nested filters (its work grows as the size to the power of its depth) at its deadline, in order with the other assertions, the loop free', async () => {
      // Held the agent's event loop 32 s over these 8 answers when JSONPath ran on it.
      const nested = '$..[?$..[?$..[?$..[?$..*]]]]';
      const code = (target: string): Assertion => ({
        source: 'RESPONSE_CODE',
        property: '',
        comparison: 'EQUALS',
        target,
        regex: null,
      });
      const { result: outcome, worstMs } = await worstLoopGap(() =>
        runTxt('many.redos.test', [
          code('NOERROR'),
          jsonAssertion('JSON_ANSWER', nested, 'IS_NULL'),
          code('NXDOMAIN'),
        ]),
      );
      measured.push(`DNS nested filters ${nested}: ${worstMs.toFixed(1)} ms`);
      expectValidOutcome(outcome);
      expect(outcome.dnsCheckResult?.json?.Answer).toHaveLength(8);
      expect(outcome.assertions).toMatchObject([
        { source: 'RESPONSE_CODE', error: null },
        {
          source: 'JSON_ANSWER',
          actual: null,
          error: expect.stringMatching(/did not finish within 5000 ms/),
        },
        { source: 'RESPONSE_CODE', error: expect.stringMatching(/does not equal/) },
      ]);
      expect(outcome).toMatchObject({ status: 'FAILED', hasFailures: true });
      expect(worstMs).toBeLessThan(LIMIT_MS);
    }, 30_000);

    it('selects and rejects TXT records as RFC 9535 match() and search() say', async () => {
      const outcome = await runTxt('spf.redos.test', [
        jsonAssertion('JSON_ANSWER', "$.Answer[?search(@.data, 'include:[^ ]+')].type", 'EQUALS', '16'),
        jsonAssertion('JSON_ANSWER', "$.Answer[?match(@.data, 'include:[^ ]+')].data", 'IS_NULL'),
        jsonAssertion('JSON_ANSWER', "$.Answer[?match(@.data, 'v=spf1 .*-all')].data", 'CONTAINS', '_spf'),
        jsonAssertion('JSON_ANSWER', "$.Answer[?match(@.data, 'v=spf1|-all')].data", 'IS_NULL'),
      ]);
      expectValidOutcome(outcome);
      expect(outcome.assertions.map((a) => [a.actual, a.error])).toEqual([
        [16, null],
        [null, null],
        ['v=spf1 include:_spf.example.test -all', null],
        [null, null],
      ]);
      expect(outcome.status).toBe('PASSED');
    });
  },
);

const missingIcmp = missingRequirement([
  { ok: icmpAddonBuilt(), what: 'the native ICMP addon', install: 'npm rebuild (needs python3, make, gcc)' },
  { ok: process.getuid?.() === 0, what: 'root (CAP_NET_RAW)', install: 'run the tests as root' },
]);

function icmpJob(assertions: Assertion[]): Job {
  return {
    jobId: 'job-1',
    accountId: 'account-1',
    check: {
      id: 'check-1',
      name: 'ping',
      checkType: 'ICMP',
      request: { hostname: '127.0.0.1', ipFamily: 'IPv4', pingCount: 1, assertions },
      shouldFail: false,
      degradedResponseTime: null,
      maxResponseTime: null,
      degradedPacketLossThreshold: null,
      maxPacketLossThreshold: null,
      runtimeId: null,
    },
    environmentVariables: [],
    runLocation: 'test',
    runSource: 'TRIGGER_API',
    checkSessionId: null,
    attempt: 1,
    timeoutMs: 30_000,
    leaseMs: 300_000,
  };
}

describe.skipIf(missingIcmp !== null)(
  'ICMP JSON_RESPONSE with hostile match()/search() keeps the event loop free',
  () => {
    const executor = createIcmpExecutor({ intervalMs: 10 });
    afterAll(() => executor.close());
    const run = (assertions: Assertion[]): Promise<RunOutcome> =>
      executor.run(icmpJob(assertions), {
        signal: AbortSignal.timeout(35_000),
        log: pino({ level: 'silent' }),
      });

    it.each(HOSTILE)('%s(<text>, %j) over 127.0.0.1', async (fn, pattern, text) => {
      // The value is a literal of the path: what the check's author writes is not trusted either.
      const selects = `$.pingResults[?${fn}('${text}', '${pattern}')]`;
      const { result: outcome, worstMs } = await worstLoopGap(() =>
        run([
          jsonAssertion('JSON_RESPONSE', selects, 'IS_NULL'),
          jsonAssertion('JSON_RESPONSE', `${selects}.ttl`, 'EQUALS', '64'),
        ]),
      );
      measured.push(`ICMP ${fn}('${text.slice(0, 4)}…!', '${pattern}'): ${worstMs.toFixed(1)} ms`);
      expect(outcome.icmpCheckResult?.pingResults).toHaveLength(1);
      expect(outcome.assertions).toMatchObject([
        { actual: null, error: null },
        { actual: null, error: expect.stringMatching(/does not equal/) },
      ]);
      expect(outcome).toMatchObject({ status: 'FAILED', hasFailures: true });
      expect(worstMs).toBeLessThan(LIMIT_MS);
    });

    it('selects and rejects by match() and search() over the ping result', async () => {
      const outcome = await run([
        jsonAssertion('JSON_RESPONSE', "$[?match(@, '127\\\\.0\\\\.0\\\\.1')]", 'NOT_NULL'),
        jsonAssertion('JSON_RESPONSE', "$[?match(@, '127')]", 'IS_NULL'),
        jsonAssertion('JSON_RESPONSE', "$[?search(@, '^127[.]')]", 'NOT_NULL'),
        // A whole-string match of '127' or of 'x': nothing in the result is either.
        jsonAssertion('JSON_RESPONSE', "$[?match(@, '127|x')]", 'IS_NULL'),
      ]);
      expect(outcome.assertions.map((a) => a.error)).toEqual([null, null, null, null]);
      expect(outcome.status).toBe('PASSED');
    });
  },
);
