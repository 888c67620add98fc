import type { Assertion, AssertionResult, AssertionSource } from '../../protocol/index.js';
import { compare } from './comparisons.js';
import { queryJsonPath } from './json-path.js';

/**
 * Reads what an assertion looks at: every value it selects (a JSONPath may select several,
 * a plain source gives one). An empty array means nothing was found. May throw, for example
 * on an invalid JSONPath; the assertion then fails with the error's message.
 */
export type AssertionSourceReader = (assertion: Assertion) => readonly unknown[];

/** The sources a check type offers, by assertion source name. */
export type AssertionSources = Partial<Record<AssertionSource, AssertionSourceReader>>;

/** The evaluated assertions of a run, in order, and whether all held. */
export type AssertionsOutcome = {
  results: AssertionResult[];
  allPassed: boolean;
};

/** A reader of one value that does not depend on the assertion. */
export function valueSource(value: unknown): AssertionSourceReader {
  return () => [value];
}

/** A reader of a property of `record` named by the assertion's `property` (LATENCY `avg`, a header name, …). */
export function propertySource(record: Record<string, unknown>): AssertionSourceReader {
  return (assertion) => {
    const property = assertion.property ?? '';
    if (!Object.hasOwn(record, property)) {
      throw new Error(
        `unknown property ${JSON.stringify(property)}; expected one of ${Object.keys(record).join(', ')}`,
      );
    }
    return [record[property]];
  };
}

/** A reader that evaluates the assertion's `property` as a JSONPath over `document` (see queryJsonPath). */
export function jsonPathSource(document: unknown): AssertionSourceReader {
  return (assertion) => {
    const path = assertion.property ?? '';
    if (path === '') return [document];
    try {
      return queryJsonPath(document, path);
    } catch (err) {
      throw new Error(`invalid JSONPath ${JSON.stringify(path)}: ${(err as Error).message}`);
    }
  };
}

/** The text a regex runs over: strings as they are, anything else as JSON. */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** How `actual` is reported: one primitive as it is, anything else JSON-encoded, nothing as null. */
function reportActual(values: readonly unknown[]): AssertionResult['actual'] {
  if (values.length === 0) return null;
  if (values.length > 1) return JSON.stringify(values);
  const value = values[0];
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return JSON.stringify(value);
}

function evaluateOne(assertion: Assertion, sources: AssertionSources): AssertionResult {
  const target = assertion.target ?? '';
  const result: AssertionResult = {
    source: assertion.source,
    property: assertion.property ?? '',
    comparison: assertion.comparison,
    target,
    regex: assertion.regex ?? null,
    actual: null,
    error: null,
  };
  const read = sources[assertion.source];
  if (!read) {
    result.error = `source ${assertion.source} is not available for this check type`;
    return result;
  }
  let values: readonly unknown[];
  try {
    values = read(assertion);
    if (assertion.regex) {
      // No global flag: exec finds the first match; the first capture group wins over the whole match.
      const regex = new RegExp(assertion.regex);
      values = values.map((value) => {
        const match = regex.exec(textOf(value));
        return match ? (match[1] ?? match[0]) : null;
      });
    }
  } catch (err) {
    result.error = (err as Error).message;
    return result;
  }
  result.actual = reportActual(values);
  // Nothing found is judged as one missing value: IS_NULL holds, EQUALS fails.
  const judged = values.length === 0 ? [undefined] : values;
  for (const [index, value] of judged.entries()) {
    const failure = compare(assertion.comparison, value, target);
    if (failure !== null) {
      result.error = judged.length > 1 ? `value ${index + 1} of ${judged.length}: ${failure}` : failure;
      break;
    }
  }
  return result;
}

/**
 * Evaluates assertions in order against the sources of a check type (reference/check-types.md,
 * "Assertions"). When a source gives several values, the comparison must hold for every one.
 * With a `regex`, each value (as text) is replaced by the regex's first capture group, or its
 * whole match, or null when it does not match. Never throws: a bad JSONPath, regex or source
 * becomes that assertion's `error`.
 */
export function evaluateAssertions(
  assertions: readonly Assertion[],
  sources: AssertionSources,
): AssertionsOutcome {
  const results = assertions.map((assertion) => evaluateOne(assertion, sources));
  return { results, allPassed: results.every((result) => result.error === null) };
}
