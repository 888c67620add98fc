import type { Assertion } from '../../protocol/index.js';
import { type AssertionSourceReader, type AssertionSources, jsonPathSource, valueSource } from './engine.js';

/** What the HTTP assertion sources read: the response as the run ended (after teardown). */
export type HttpAssertionInput = {
  /** Response status, or null when there was no response. */
  status: number | null;
  /** Response time, ms. */
  responseTimeMs: number;
  /** Response headers, lower-case names, repeats joined with `, `. */
  headers: Record<string, string>;
  /** Response body as text. */
  bodyText: string;
};

/** HEADERS assertion: `property` names the header (case-insensitive); a missing header is nothing found. */
function headerSource(headers: Record<string, string>): AssertionSourceReader {
  return (assertion: Assertion) => {
    const name = (assertion.property ?? '').toLowerCase();
    if (name === '') return [headers];
    return Object.hasOwn(headers, name) ? [headers[name]] : [];
  };
}

/** Deepest nesting of a JSON body that JSON_BODY assertions read: deeper bodies fail them with the reason. */
export const MAX_JSON_DEPTH = 1000;

/** How deep `value` nests (a scalar is 0), counted without recursion; stops counting past `limit`. */
function jsonDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (item === null || typeof item !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return deepest;
}

/**
 * JSON_BODY assertion: the body parsed as JSON (once), then the JSONPath; a body that is not
 * JSON, or nests deeper than {@link MAX_JSON_DEPTH}, fails it with the reason.
 */
function jsonBodySource(text: string): AssertionSourceReader {
  let parsed: { value: unknown } | { error: string } | undefined;
  return (assertion) => {
    parsed ??= (() => {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        return { error: `response body is not JSON: ${(err as Error).message}` };
      }
      if (jsonDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
        return {
          error: `response body JSON nests deeper than ${MAX_JSON_DEPTH} levels; it is not evaluated`,
        };
      }
      return { value };
    })();
    if ('error' in parsed) throw new Error(parsed.error);
    // JSON_BODY runs in the body worker, under its deadline (off-thread.ts): no regex work limit.
    return jsonPathSource(parsed.value, { maxRegexWork: Number.POSITIVE_INFINITY })(assertion);
  };
}

/**
 * The assertion sources of API checks (docs/checks.md, "API"): STATUS_CODE,
 * RESPONSE_TIME, HEADERS, TEXT_BODY and JSON_BODY; without a response the last three fail
 * with "no response".
 */
export function httpAssertionSources(input: HttpAssertionInput): AssertionSources {
  const noResponse = () => {
    throw new Error('no response');
  };
  const { status } = input;
  return {
    STATUS_CODE: valueSource(status),
    RESPONSE_TIME: valueSource(input.responseTimeMs),
    HEADERS: status === null ? noResponse : headerSource(input.headers),
    TEXT_BODY: status === null ? noResponse : valueSource(input.bodyText),
    JSON_BODY: status === null ? noResponse : jsonBodySource(input.bodyText),
  };
}
