import { type JsonValue, query } from 'jsonpath-rfc9535';

const LENGTH_SUFFIX = '.length';

/**
 * Evaluates a JSONPath (RFC 9535) over `document` and returns every value it selects, in
 * document order. A trailing `.length` (not part of RFC 9535, but what users of the field
 * write) gives the length of each selected array or string; on an object it selects the
 * member named `length` as RFC 9535 would.
 * @throws Error with the parser's message when `path` is not a valid JSONPath.
 */
export function queryJsonPath(document: unknown, path: string): unknown[] {
  const json = document as JsonValue;
  if (!path.endsWith(LENGTH_SUFFIX)) return query(json, path);
  const parents = query(json, path.slice(0, -LENGTH_SUFFIX.length));
  const values: unknown[] = [];
  for (const parent of parents) {
    if (Array.isArray(parent) || typeof parent === 'string') values.push(parent.length);
    else if (typeof parent === 'object' && parent !== null && Object.hasOwn(parent, 'length')) {
      values.push((parent as Record<string, unknown>).length);
    }
  }
  return values;
}
