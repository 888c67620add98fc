/**
 * The web app's client of the service: the same `/v1` API every client uses (docs/api.md), authenticated by
 * the session cookie the sign-in set (httpOnly: this code never sees it, and never holds the API key after
 * the sign-in request). State-changing requests carry the session's CSRF token in `x-csrf-token`.
 *
 * Pages do not call this module: they call the typed functions of `api/<resource>.ts`, which build their
 * paths with {@link path} (every path parameter encoded, in one place).
 */
import type { ErrorBody } from './schemas.js';

/** A failed request: the HTTP status and the service's error body. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  /** The dotted path of the offending field for a validation error (`request.url`), else undefined. */
  readonly field: string | undefined;
  readonly body: ErrorBody | undefined;

  constructor(status: number, body: ErrorBody | undefined, fallback: string) {
    super(body?.message ?? fallback);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
    this.code = body?.attributes?.code;
    this.field = typeof body?.attributes?.field === 'string' ? body.attributes.field : undefined;
  }
}

let csrfToken: string | null = null;
const signedOutListeners = new Set<() => void>();

/** Remembers the session's CSRF token (after sign-in or the start-up session check). */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Calls `listener` when a request answers 401: the session ended (signed out elsewhere, key deleted). */
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

/** Options of {@link request}. */
type RequestOptions = {
  body?: unknown;
  query?: Record<string, string | number | boolean | readonly (string | number)[] | undefined | null>;
  signal?: AbortSignal;
  /**
   * GET only: a conditional request (docs/api.md, "Conditional requests"). It names in `If-None-Match` the
   * `ETag` of the value this module parsed last for the same URL and, on `304 Not Modified` (or a 200 with
   * that same tag), returns that same value (the same object) without reading a body, so a poll that changed
   * nothing re-renders nothing. Sent by this module, not by the browser's HTTP cache: the service answers
   * signed-in browsers `cache-control: no-store`, so the browser keeps no copy to revalidate.
   */
  revalidate?: boolean;
};

/** The last value parsed per URL of a revalidated GET, with its ETag (see RequestOptions.revalidate). */
const revalidated = new Map<string, { etag: string; value: unknown }>();

/**
 * A path of the API with every parameter encoded: ``path`/v1/checks/${id}/results` `` encodes `id` with
 * `encodeURIComponent`. The one place the app puts ids and names into URLs.
 */
export function path(strings: TemplateStringsArray, ...params: readonly (string | number)[]): string {
  return strings.reduce(
    (out, text, i) => out + text + (i < params.length ? encodeURIComponent(String(params[i])) : ''),
    '',
  );
}

/** Builds `path?query`, repeating array values as comma-separated lists, leaving out undefined and null. */
function withQuery(path: string, query: RequestOptions['query']): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    params.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = params.toString();
  return text ? `${path}${path.includes('?') ? '&' : '?'}${text}` : path;
}

/**
 * Sends one request and parses the JSON answer.
 * @returns the parsed body, or undefined for 204.
 * @throws ApiError for any status of 400 or more (after telling the listeners of a 401); a network error or
 *   an abort as fetch throws it.
 */
export async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const url = withQuery(path, options.query);
  const revalidate = options.revalidate === true && method === 'GET';
  const known = revalidate ? revalidated.get(url) : undefined;
  if (known) headers['if-none-match'] = known.etag;
  const response = await fetch(url, {
    method,
    headers,
    credentials: 'same-origin',
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (response.status === 204) return undefined as T;
  const etag = revalidate && response.ok ? response.headers.get('etag') : null;
  if (known && (response.status === 304 || etag === known.etag)) {
    await response.body?.cancel();
    return known.value as T;
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    if (response.status === 401 && !path.startsWith('/auth/'))
      for (const listener of signedOutListeners) listener();
    throw new ApiError(
      response.status,
      parsed as ErrorBody | undefined,
      `${response.status} ${response.statusText}`,
    );
  }
  if (etag !== null) revalidated.set(url, { etag, value: parsed });
  return parsed as T;
}

/** Shorthands of {@link request}. */
export const api = {
  get: <T>(path: string, query?: RequestOptions['query'], signal?: AbortSignal) =>
    request<T>('GET', path, { ...(query ? { query } : {}), ...(signal ? { signal } : {}) }),
  /** A conditional GET (RequestOptions.revalidate): for lists polled while they mostly stay the same. */
  poll: <T>(path: string, signal?: AbortSignal) =>
    request<T>('GET', path, { revalidate: true, ...(signal ? { signal } : {}) }),
  post: <T>(path: string, body?: unknown, query?: RequestOptions['query']) =>
    request<T>('POST', path, { body: body ?? {}, ...(query ? { query } : {}) }),
  put: <T>(path: string, body: unknown, query?: RequestOptions['query']) =>
    request<T>('PUT', path, { body, ...(query ? { query } : {}) }),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, { body }),
  delete: (path: string) => request<void>('DELETE', path),
};

/**
 * Every page of a page-numbered list (`limit` 100, `page` 1…), concatenated: the routes that answer plain
 * arrays (docs/api.md, "Pagination"). Stops at a short page or after `maxPages`.
 */
export async function getAllPages<T>(
  path: string,
  query: RequestOptions['query'] = {},
  signal?: AbortSignal,
  maxPages = 50,
): Promise<T[]> {
  const all: T[] = [];
  for (let page = 1; page <= maxPages; page++) {
    const batch = await api.get<T[]>(path, { ...query, limit: 100, page }, signal);
    all.push(...batch);
    if (batch.length < 100) break;
  }
  return all;
}

/** Every entry of a cursor list (`{ length, entries, nextId }`, docs/api.md "Pagination"). */
export async function getAllEntries<T>(path: string, signal?: AbortSignal, maxPages = 50): Promise<T[]> {
  const all: T[] = [];
  let nextId: string | null = null;
  for (let page = 0; page < maxPages; page++) {
    const answer: { entries: T[]; nextId: string | null } = await api.get(
      path,
      { limit: 100, ...(nextId ? { nextId } : {}) },
      signal,
    );
    all.push(...answer.entries);
    nextId = answer.nextId;
    if (!nextId) break;
  }
  return all;
}
