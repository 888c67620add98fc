import { type Static, type TUnsafe, Type } from '@sinclair/typebox';
import {
  API_ASSERTION_SOURCES,
  API_BODY_TYPES,
  API_METHODS,
  IP_FAMILIES,
  type KeyValue,
} from '../../../protocol/index.js';
import { IntegerEnum, Nullable, StringEnum, strict } from '../../platform/http/schema-helpers.js';
import { assertions, responseTime, sharedCheckFields, TCP_FREQUENCIES, zeroHeartbeat } from './common.js';

/**
 * A header or query parameter of an API check: `key` (1–1024 characters), `value` (at most 8192),
 * `locked` (UI masking only). `{{VAR}}` in either is interpolated by the agent.
 */
export const ApiKeyValueSchema = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 1024 }),
    value: Type.String({ maxLength: 8192 }),
    locked: Type.Optional(Type.Boolean()),
  },
  strict,
);

/** HTTP basic authentication of an API check (also a group's `apiCheckDefaults.basicAuth`). */
export const BasicAuthSchema = Type.Object(
  { username: Type.String({ maxLength: 1024 }), password: Type.String({ maxLength: 1024 }) },
  strict,
);

type BasicAuth = Static<typeof BasicAuthSchema>;

/**
 * An API check's `url`: http or https, or starting with a `{{VAR}}` placeholder
 * (`{{BASE_URL}}/health`, `{{GROUP_BASE_URL}}/users`) that the agent interpolates. No
 * whitespace, except inside `{{ … }}`.
 */
export const API_URL_PATTERN =
  '^(?:[Hh][Tt][Tt][Pp][Ss]?://|(?=\\{\\{))(?:[^\\s{]|\\{\\{[^{}\\r\\n]*\\}\\}|\\{)+$';

/** Most characters of an API check's request `body`: 128 Ki, as scripts. */
export const API_BODY_MAX_LENGTH = 131_072;

/**
 * API request (docs/checks.md, "API"): `method` (default GET), `url`, `headers`,
 * `queryParameters`, `body` (default ''), `bodyType` (default NONE), `basicAuth` (default null),
 * `followRedirects` (true), `skipSSL` (false), `ipFamily` (IPv4), `assertions` (API sources).
 */
export const ApiRequestBodySchema = Type.Object(
  {
    method: Type.Optional(StringEnum(API_METHODS, { default: 'GET' })),
    url: Type.String({ minLength: 1, maxLength: 2048, pattern: API_URL_PATTERN }),
    headers: Type.Optional(Type.Array(ApiKeyValueSchema, { maxItems: 100, default: [] })),
    queryParameters: Type.Optional(Type.Array(ApiKeyValueSchema, { maxItems: 100, default: [] })),
    body: Type.Optional(Type.String({ maxLength: API_BODY_MAX_LENGTH, default: '' })),
    bodyType: Type.Optional(StringEnum(API_BODY_TYPES, { default: 'NONE' })),
    basicAuth: Type.Optional({ ...Nullable(BasicAuthSchema), default: null } as TUnsafe<BasicAuth | null>),
    followRedirects: Type.Optional(Type.Boolean({ default: true })),
    skipSSL: Type.Optional(Type.Boolean({ default: false })),
    ipFamily: Type.Optional(StringEnum(IP_FAMILIES, { default: 'IPv4' })),
    assertions: assertions(API_ASSERTION_SOURCES),
  },
  strict,
);

/** Longest `degradedResponseTime` / `maxResponseTime` of an API check, ms: its run limit (docs/checks.md, "API"). */
export const API_RESPONSE_TIME_LIMIT_MS = 30_000;

/**
 * `POST /v1/checks/api`: the shared fields and the API `request`; degraded 10 000 ms, max
 * 20 000 ms by default, both at most 30 000 (the run limit); sub-minute frequency allowed
 * (docs/api.md, "frequencyOffset" rule 1). `script` is kept and answered, never run (the hosted API keeps
 * it); `heartbeat` only zero-valued, and ignored.
 */
export const CreateApiCheckBody = Type.Object(
  {
    ...sharedCheckFields,
    frequency: Type.Optional(IntegerEnum(TCP_FREQUENCIES, { default: 10 })),
    request: ApiRequestBodySchema,
    // Kept and answered as the hosted API does (its clients read it back), never run.
    script: Type.Optional(Nullable(Type.String({ maxLength: 131_072 }))),
    heartbeat: zeroHeartbeat,
    degradedResponseTime: responseTime(10_000, API_RESPONSE_TIME_LIMIT_MS),
    maxResponseTime: responseTime(20_000, API_RESPONSE_TIME_LIMIT_MS),
  },
  strict,
);

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
