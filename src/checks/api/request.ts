import type { ApiBodyType, ApiRequest } from '../../protocol/index.js';
import { API_METHODS } from '../../protocol/index.js';

/**
 * The request as setup scripts see and change it (docs/checks.md, "API": setup may
 * change `request.{method,url,body,headers,queryParameters}`). Headers and query parameters are
 * plain objects, names as the check wrote them.
 */
export type ScriptRequest = {
  method: string;
  url: string;
  body: string;
  headers: Record<string, string>;
  queryParameters: Record<string, string>;
};

/** The request after interpolation, as handed to setup. Repeated keys keep the last value. */
export function toScriptRequest(
  request: Pick<ApiRequest, 'method' | 'url' | 'body' | 'headers' | 'queryParameters'>,
): ScriptRequest {
  const headers: Record<string, string> = {};
  for (const { key, value } of request.headers) headers[key] = value;
  const queryParameters: Record<string, string> = {};
  for (const { key, value } of request.queryParameters) queryParameters[key] = value;
  return { method: request.method, url: request.url, body: request.body, headers, queryParameters };
}

/**
 * Checks what a setup script left in `request`. Returns the request, or one line saying which
 * field is wrong (`setup script set request.method to "FETCH"; expected one of GET, …`).
 * Numbers and booleans in headers/query parameters are turned into strings, as HTTP would.
 */
export function readScriptRequest(value: unknown, name: string): ScriptRequest | string {
  if (value === null || typeof value !== 'object') return `${name} replaced request with a non-object`;
  const r = value as Record<string, unknown>;
  const method = typeof r.method === 'string' ? r.method.toUpperCase() : r.method;
  if (typeof method !== 'string' || !(API_METHODS as readonly string[]).includes(method)) {
    return `${name} set request.method to ${JSON.stringify(r.method)}; expected one of ${API_METHODS.join(', ')}`;
  }
  if (typeof r.url !== 'string') return `${name} set request.url to a ${typeof r.url}; expected a string`;
  const body = r.body === undefined || r.body === null ? '' : r.body;
  if (typeof body !== 'string') return `${name} set request.body to a ${typeof body}; expected a string`;
  const coerce = (field: 'headers' | 'queryParameters'): Record<string, string> | string => {
    const raw = r[field] ?? {};
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      return `${name} set request.${field} to a non-object`;
    }
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(raw)) {
      if (v === undefined || v === null) continue;
      if (typeof v === 'object') return `${name} set request.${field}.${k} to an object; expected a string`;
      out[k] = String(v);
    }
    return out;
  };
  const headers = coerce('headers');
  if (typeof headers === 'string') return headers;
  const queryParameters = coerce('queryParameters');
  if (typeof queryParameters === 'string') return queryParameters;
  return { method, url: r.url, body, headers, queryParameters };
}

/** Content type a body type implies when the check sets none. RAW and NONE imply none. */
const CONTENT_TYPES: Record<ApiBodyType, string | null> = {
  JSON: 'application/json',
  GRAPHQL: 'application/json',
  FORM: 'application/x-www-form-urlencoded',
  RAW: null,
  NONE: null,
};

/**
 * The bytes to send for `body` of `bodyType` and the content type to add when the request has
 * none: NONE sends nothing; GRAPHQL sends `{"query": body}` unless the body already is a JSON
 * object; FORM sends a JSON object body as `a=1&b=2` and anything else as written; HEAD never
 * carries a body.
 */
export function encodeBody(
  method: string,
  bodyType: ApiBodyType,
  body: string,
): { body: string | undefined; contentType: string | null } {
  if (bodyType === 'NONE' || method === 'HEAD') return { body: undefined, contentType: null };
  let text = body;
  if (bodyType === 'GRAPHQL' && !looksLikeJsonObject(body)) text = JSON.stringify({ query: body });
  if (bodyType === 'FORM' && looksLikeJsonObject(body)) {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(parsed)) {
      form.append(k, typeof v === 'string' ? v : JSON.stringify(v));
    }
    text = form.toString();
  }
  if (text === '' && (method === 'GET' || method === 'DELETE' || method === 'OPTIONS')) {
    return { body: undefined, contentType: null };
  }
  return { body: text, contentType: CONTENT_TYPES[bodyType] };
}

function looksLikeJsonObject(text: string): boolean {
  if (!text.trimStart().startsWith('{')) return false;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

/** Content types whose bodies are text and stored; anything else is binary and never stored. */
export function isTextual(contentType: string | undefined, body: Buffer): boolean {
  if (contentType !== undefined && contentType !== '') {
    const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    return (
      type.startsWith('text/') ||
      /[/+](json|xml|javascript|ecmascript|x-www-form-urlencoded|graphql|yaml|x-yaml|csv|html)$/.test(type)
    );
  }
  // No content type: text when it decodes as UTF-8 without NUL bytes.
  if (body.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(body);
    return true;
  } catch {
    return false;
  }
}
