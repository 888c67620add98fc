import { RE2JS } from 're2js';
import type { Assertion, AssertionResult, AssertionSource } from '../../protocol/index.js';
import type { Scrubber } from '../../common/scrub.js';
import { compare, describeValue, MAX_DESCRIBED_LENGTH } from './comparisons.js';
import { JsonPathLimitError, type JsonPathOptions, queryJsonPath } from './json-path.js';

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

/**
 * A reader that evaluates the assertion's `property` as a JSONPath over `document` (see
 * queryJsonPath; `options` bound its match() and search() work).
 */
export function jsonPathSource(document: unknown, options: JsonPathOptions = {}): AssertionSourceReader {
  return (assertion) => {
    const path = assertion.property ?? '';
    if (path === '') return [document];
    try {
      return queryJsonPath(document, path, options);
    } catch (err) {
      if (err instanceof JsonPathLimitError) throw err;
      throw new Error(`invalid JSONPath ${JSON.stringify(path)}: ${(err as Error).message}`);
    }
  };
}

/** The text a regex runs over: strings as they are, anything else as JSON. */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** Longest `actual` reported, characters (longer is cut, after scrubbing, and ends with `…`). */
export const MAX_ACTUAL_LENGTH = 4096;

/**
 * A user's assertion regex, compiled for RE2 (re2js: linear time in the text, whatever the
 * pattern, so no pattern can hold the event loop; docs/checks.md, "Assertions").
 * @throws Error naming the pattern when RE2 refuses it (backreferences, lookahead, lookbehind).
 */
export function compileRegex(pattern: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (err) {
    throw new Error(
      `regex ${describeValue(pattern)} is not supported: ${(err as Error).message} (regexes run in RE2 syntax: no backreferences, lookahead or lookbehind)`,
    );
  }
}

/** The first capture group of `regex`'s first match in `text`, or its whole match, or null. */
function firstMatch(regex: RE2JS, text: string): string | null {
  const matcher = regex.matcher(text);
  if (!matcher.find()) return null;
  const group = regex.groupCount() >= 1 ? matcher.group(1) : null;
  return group ?? matcher.group(0);
}

/** How `actual` is reported: one primitive as it is, anything else JSON-encoded (bounded, scrubbed), nothing as null. */
function reportActual(values: readonly unknown[], scrubber: Scrubber | undefined): AssertionResult['actual'] {
  if (values.length === 0) return null;
  const value = values.length > 1 ? values : values[0];
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  const text =
    typeof value === 'string' ? value : describeValue(value, { maxLength: MAX_ACTUAL_LENGTH, raw: true });
  if (scrubber) return scrubber.cut(text, MAX_ACTUAL_LENGTH);
  return text.length > MAX_ACTUAL_LENGTH ? `${text.slice(0, MAX_ACTUAL_LENGTH)}…` : text;
}

function evaluateOne(
  assertion: Assertion,
  sources: AssertionSources,
  scrubber: Scrubber | undefined,
): AssertionResult {
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
      const regex = compileRegex(assertion.regex);
      values = values.map((value) => firstMatch(regex, textOf(value)));
    }
  } catch (err) {
    result.error = (err as Error).message;
    return result;
  }
  result.actual = reportActual(values, scrubber);
  const describe = (value: unknown) =>
    scrubber
      ? scrubber.cut(
          describeValue(value, { maxLength: MAX_DESCRIBED_LENGTH * 4, raw: true }),
          MAX_DESCRIBED_LENGTH,
        )
      : describeValue(value);
  // Nothing found is judged as one missing value: IS_NULL holds, EQUALS fails.
  const judged = values.length === 0 ? [undefined] : values;
  for (const [index, value] of judged.entries()) {
    const failure = compare(assertion.comparison, value, target, describe);
    if (failure !== null) {
      result.error = judged.length > 1 ? `value ${index + 1} of ${judged.length}: ${failure}` : failure;
      break;
    }
  }
  return result;
}

/** Options of {@link evaluateAssertions}. */
export type EvaluateOptions = {
  /**
   * Scrubs the values shown in `actual` and in error messages before they are cut (so no
   * start of a secret is left at a cut; see Scrubber.cut).
   */
  scrubber?: Scrubber;
};

/**
 * Evaluates assertions in order against the sources of a check type (docs/checks.md,
 * "Assertions"). When a source gives several values, the comparison must hold for every one.
 * With a `regex` (RE2 syntax, see {@link compileRegex}), each value (as text) is replaced by the
 * regex's first capture group, or its whole match, or null when it does not match. Never
 * throws: a bad JSONPath, regex or source, or a value too deep to read, becomes that
 * assertion's `error`.
 */
export function evaluateAssertions(
  assertions: readonly Assertion[],
  sources: AssertionSources,
  options: EvaluateOptions = {},
): AssertionsOutcome {
  const results = assertions.map((assertion) => {
    try {
      return evaluateOne(assertion, sources, options.scrubber);
    } catch (err) {
      // A RangeError of a value nested too deep for the stack, for instance.
      return {
        source: assertion.source,
        property: assertion.property ?? '',
        comparison: assertion.comparison,
        target: assertion.target ?? '',
        regex: assertion.regex ?? null,
        actual: null,
        error: `the value could not be evaluated: ${(err as Error).message}`,
      };
    }
  });
  return { results, allPassed: results.every((result) => result.error === null) };
}
