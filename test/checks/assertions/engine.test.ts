import { describe, expect, it } from 'vitest';
import {
  evaluateAssertions,
  jsonPathSource,
  propertySource,
  queryJsonPath,
  valueSource,
} from '../../../src/checks/assertions/index.js';
import type { Assertion, AssertionComparison } from '../../../src/protocol/index.js';

const document = {
  hostname: 'example.com',
  packetLoss: 25,
  latency: { avg: 12.5, min: 10, max: 15, stdDev: 2 },
  pingResults: [
    { sequence: 1, rtt: 10, ttl: 64 },
    { sequence: 2, rtt: 15, ttl: 64 },
  ],
  tags: ['edge', 'eu'],
  empty: {},
  nothing: null,
  text: 'version=1.2.3 build 42',
};

/** Evaluates one JSON_RESPONSE assertion over `document`; returns its error (null: it held). */
function judge(
  comparison: AssertionComparison,
  property: string,
  target?: string,
  regex?: string,
): string | null {
  const assertion: Assertion = {
    source: 'JSON_RESPONSE',
    property,
    comparison,
    ...(target === undefined ? {} : { target }),
    ...(regex === undefined ? {} : { regex }),
  };
  const [result] = evaluateAssertions([assertion], { JSON_RESPONSE: jsonPathSource(document) }).results;
  return result!.error;
}

describe('comparisons: each holds and fails', () => {
  it.each([
    // comparison, path, target that holds, target that fails
    ['EQUALS', '$.hostname', 'example.com', 'example.org'],
    ['EQUALS', '$.packetLoss', '25.0', '24'],
    ['EQUALS', '$.tags', '["edge","eu"]', '["eu"]'],
    ['NOT_EQUALS', '$.hostname', 'example.org', 'example.com'],
    ['HAS_KEY', '$.latency', 'avg', 'median'],
    ['NOT_HAS_KEY', '$.latency', 'median', 'avg'],
    ['HAS_VALUE', '$.tags', 'eu', 'us'],
    ['HAS_VALUE', '$.latency', '15', '16'],
    ['NOT_HAS_VALUE', '$.tags', 'us', 'eu'],
    ['GREATER_THAN', '$.packetLoss', '24.9', '25'],
    ['LESS_THAN', '$.latency.avg', '13', '12.5'],
    ['CONTAINS', '$.hostname', 'ample', 'xyz'],
    ['CONTAINS', '$.tags', 'edge', 'ed'],
    ['NOT_CONTAINS', '$.hostname', 'xyz', 'ample'],
  ] as const)('%s %s (holds for %s, fails for %s)', (comparison, path, holds, fails) => {
    expect(judge(comparison, path, holds)).toBeNull();
    expect(judge(comparison, path, fails)).toEqual(expect.any(String));
  });

  it.each([
    // comparison, path where it holds, path where it fails
    ['IS_EMPTY', '$.empty', '$.latency'],
    ['IS_EMPTY', '$.nothing', '$.hostname'],
    ['NOT_EMPTY', '$.tags', '$.empty'],
    ['IS_NULL', '$.nothing', '$.hostname'],
    ['IS_NULL', '$.missing', '$.packetLoss'],
    ['NOT_NULL', '$.hostname', '$.nothing'],
  ] as const)('%s holds at %s and fails at %s', (comparison, holds, fails) => {
    expect(judge(comparison, holds)).toBeNull();
    expect(judge(comparison, fails)).toEqual(expect.any(String));
  });

  it('numeric comparisons explain a target or value that is not a number', () => {
    expect(judge('GREATER_THAN', '$.packetLoss', 'ten')).toMatch(/target "ten" is not a number/);
    expect(judge('LESS_THAN', '$.hostname', '10')).toMatch(/"example.com" is not a number/);
    expect(judge('LESS_THAN', '$.packetLoss', '')).toMatch(/not a number/);
  });
});

describe('several values and JSONPath', () => {
  it('holds only when the comparison holds for every selected value', () => {
    expect(judge('LESS_THAN', '$.pingResults[*].rtt', '16')).toBeNull();
    expect(judge('LESS_THAN', '$.pingResults[*].rtt', '12')).toBe('value 2 of 2: 15 is not less than 12');
  });

  it('reports every selected value as actual, JSON-encoded', () => {
    const { results } = evaluateAssertions(
      [{ source: 'JSON_RESPONSE', property: '$.pingResults[*].ttl', comparison: 'EQUALS', target: '64' }],
      { JSON_RESPONSE: jsonPathSource(document) },
    );
    expect(results[0]).toEqual({
      source: 'JSON_RESPONSE',
      property: '$.pingResults[*].ttl',
      comparison: 'EQUALS',
      target: '64',
      regex: null,
      actual: '[64,64]',
      error: null,
    });
  });

  it('supports a trailing .length on arrays and strings', () => {
    expect(queryJsonPath(document, '$.pingResults.length')).toEqual([2]);
    expect(queryJsonPath(document, '$.hostname.length')).toEqual([11]);
    expect(queryJsonPath({ a: { length: 'member' } }, '$.a.length')).toEqual(['member']);
    expect(judge('EQUALS', '$.tags.length', '2')).toBeNull();
    expect(judge('GREATER_THAN', '$.tags.length', '2')).toEqual(expect.any(String));
  });

  it('fails, without throwing, on an invalid JSONPath and on nothing found', () => {
    expect(judge('EQUALS', '$.[', '1')).toMatch(/^invalid JSONPath "\$\.\["/);
    expect(judge('EQUALS', '$.missing', '1')).toBe('nothing does not equal "1"');
  });
});

describe('regex', () => {
  it('uses the first capture group, without the global flag', () => {
    expect(judge('EQUALS', '$.text', '1.2.3', 'version=([\\d.]+)')).toBeNull();
    expect(judge('GREATER_THAN', '$.text', '41', '(\\d+)$')).toBeNull();
    expect(judge('EQUALS', '$.text', 'build', 'b\\w+')).toBeNull();
  });

  it('gives null when the regex does not match, and an error when it is invalid', () => {
    expect(judge('IS_NULL', '$.text', undefined, 'nomatch(\\d)')).toBeNull();
    expect(judge('EQUALS', '$.text', 'x', '(')).toMatch(/regex "\(" is not supported: .*missing closing \)/);
  });
});

describe('sources', () => {
  it('reads a property source and rejects an unknown property', () => {
    const sources = { LATENCY: propertySource({ avg: 12.5, min: 10 }) };
    const { results, allPassed } = evaluateAssertions(
      [
        { source: 'LATENCY', property: 'avg', comparison: 'LESS_THAN', target: '20' },
        { source: 'LATENCY', property: 'p99', comparison: 'LESS_THAN', target: '20' },
      ],
      sources,
    );
    expect(results.map((r) => [r.actual, r.error])).toEqual([
      [12.5, null],
      [null, 'unknown property "p99"; expected one of avg, min'],
    ]);
    expect(allPassed).toBe(false);
  });

  it('fails an assertion whose source the check type does not offer', () => {
    const { results, allPassed } = evaluateAssertions(
      [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
      { LATENCY: valueSource(1) },
    );
    expect(results[0]?.error).toBe('source STATUS_CODE is not available for this check type');
    expect(allPassed).toBe(false);
  });

  it('passes when there are no assertions', () => {
    expect(evaluateAssertions([], {})).toEqual({ results: [], allPassed: true });
  });
});
