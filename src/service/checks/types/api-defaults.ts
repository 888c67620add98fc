import type { KeyValue } from '../../../protocol/index.js';

type KeyValueIn = { key: string; value: string; locked?: boolean | undefined };

/** A check group's `apiCheckDefaults` as stored (docs/api.md, "Check group"), each part optional. */
export type ApiCheckDefaults = {
  url?: string;
  headers?: readonly KeyValueIn[];
  queryParameters?: readonly KeyValueIn[];
  assertions?: readonly unknown[];
  basicAuth?: { username: string; password: string } | null;
};

/** The variable a check in a group reads its group's `apiCheckDefaults.url` from. */
export const GROUP_BASE_URL_VARIABLE = 'GROUP_BASE_URL';

/** `{{GROUP_BASE_URL}}` at the start of an API check's url, spaces inside the braces allowed. */
const GROUP_BASE_URL_PREFIX = /^\{\{\s*GROUP_BASE_URL\s*\}\}/;

const keyValues = (list: unknown): KeyValue[] =>
  Array.isArray(list) ? (list as KeyValueIn[]).map((kv) => ({ key: kv.key, value: kv.value })) : [];

/**
 * An API check's stored request as the job carries it, with its group's `apiCheckDefaults`
 * applied (docs/api.md, "Check group"; the market leader's semantics):
 * - `url` starting with `{{GROUP_BASE_URL}}`: that prefix becomes the group's base url (when it has one);
 * - group headers are added unless the check has a header of the same name (case-insensitive),
 *   group query parameters unless the check has the same key (exact);
 * - group assertions run after the check's own;
 * - the group's `basicAuth` is used when the check has none.
 * `locked` flags are dropped (UI only). Pure.
 */
export function applyApiCheckDefaults(
  request: Record<string, unknown>,
  defaults: ApiCheckDefaults | null | undefined,
): Record<string, unknown> {
  const headers = keyValues(request.headers);
  const queryParameters = keyValues(request.queryParameters);
  const assertions = Array.isArray(request.assertions) ? [...(request.assertions as unknown[])] : [];
  let url = request.url;
  let basicAuth = (request.basicAuth as ApiCheckDefaults['basicAuth']) ?? null;
  if (defaults) {
    const base = defaults.url ?? '';
    if (typeof url === 'string' && base !== '' && GROUP_BASE_URL_PREFIX.test(url)) {
      url = base.replace(/\/+$/, '') + url.replace(GROUP_BASE_URL_PREFIX, '');
    }
    const headerNames = new Set(headers.map((h) => h.key.toLowerCase()));
    for (const h of keyValues(defaults.headers)) {
      if (!headerNames.has(h.key.toLowerCase())) headers.push(h);
    }
    const queryKeys = new Set(queryParameters.map((q) => q.key));
    for (const q of keyValues(defaults.queryParameters)) {
      if (!queryKeys.has(q.key)) queryParameters.push(q);
    }
    assertions.push(...(defaults.assertions ?? []));
    basicAuth ??= defaults.basicAuth ?? null;
  }
  return { ...request, url, headers, queryParameters, assertions, basicAuth };
}

/**
 * The variables an API check's group lends it below the group's own: `GROUP_BASE_URL` from a
 * non-empty `apiCheckDefaults.url`, so `{{GROUP_BASE_URL}}` elsewhere in the request resolves too.
 */
export function groupBaseUrlVariables(
  defaults: ApiCheckDefaults | null | undefined,
): { key: string; value: string }[] {
  return defaults?.url ? [{ key: GROUP_BASE_URL_VARIABLE, value: defaults.url }] : [];
}
