import type { Resolver } from 'node:dns/promises';
import type { IncomingHttpHeaders } from 'node:http';
import type { buildConnector } from 'undici';
import type { HttpRedirect, HttpTimingPhases, HttpTimings, IpFamily } from '../../protocol/index.js';
import {
  createCheckConnector,
  REDIRECT_STATUSES,
  type RequestOnceResult,
  requestOnce,
  timingsOf,
} from '../../net/http/index.js';
import { createDnsResolver, type ResolverKind, resolveHost } from '../../net/resolve.js';
import { abortedError } from '../../common/abort.js';
import { SECRET_HEADERS } from '../../common/credential-headers.js';
import type { RunLogRecorder } from '../run-log.js';
import { displayUrl } from './result.js';

/** Options of the HTTP executors (URL and API): resolver, trust, redirects, body cap, user agent. */
export type HttpExecutorOptions = {
  /**
   * Resolve with the OS resolver (getaddrinfo: /etc/hosts, search domains) instead of querying
   * the name server of /etc/resolv.conf directly. The agent sets it from `USE_OS_DNS_RESOLVER=true`.
   * Default false.
   */
  useOsDnsResolver?: boolean;
  /** Name servers to query instead of /etc/resolv.conf's (`"127.0.0.1:5353"`); ignored with useOsDnsResolver. */
  dnsServers?: readonly string[];
  /**
   * Extra CA certificates (PEM) trusted besides Node's bundled roots. Default: none, and then
   * Node's default store applies, which includes NODE_EXTRA_CA_CERTS.
   */
  ca?: string | readonly string[];
  /** Redirects followed before the run fails, when the check follows them. Default 10. */
  maxRedirects?: number;
  /** Body bytes read per response before reading stops, bytes. Default per executor. */
  maxBodyBytes?: number;
  /** The `user-agent` request header. Default per executor. */
  userAgent?: string;
};

/**
 * Checks that each of `names` is absent from `options` or an integer ≥ 0.
 * @throws RangeError naming the first option that is not.
 */
export function checkCountOptions<T extends object>(options: T, names: readonly (keyof T & string)[]): void {
  for (const name of names) {
    const value = options[name];
    if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) {
      throw new RangeError(`${name} must be an integer ≥ 0; got ${String(value)}`);
    }
  }
}

/**
 * An http or https URL parsed from `text` (relative to `base` when given), or why it is none:
 * `url "…" is not a URL`, `url must be http or https (got ftp)`.
 */
export function parseHttpUrl(text: string, base?: URL): URL | string {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    return `url ${JSON.stringify(text)} is not a URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `url must be http or https (got ${url.protocol.slice(0, -1)})`;
  }
  return url;
}

/** The values of a header as one string (repeats joined by `, `), or undefined. */
export function headerText(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** One request of a run, with what the check says about redirects. */
export type HttpExchangeRequest = {
  /** Any HTTP method. */
  method: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body?: Buffer | string;
  followRedirects: boolean;
  /** Accept a certificate that did not verify (it is still reported). */
  skipSSL: boolean;
  ipFamily: IpFamily;
  /** performance.now() by which the whole chain must end. */
  deadline: number;
  signal: AbortSignal;
  /** Keep the final response's body bytes (`last.body`); default false (counted only). */
  collectBody?: boolean;
  /** The connector to dial with (a client certificate's); default the client's own. */
  connector?: buildConnector.connector;
};

/** A request and the redirects it followed, up to the final response or the failure. */
export type HttpExchange = {
  /** The final request and its response (or why there was none). */
  last: RequestOnceResult;
  /** The URL of the final request. */
  finalUrl: URL;
  /** The method of the final request (303, and a POST's 301/302, continue as GET). */
  method: string;
  /** Every redirect followed, in order, URLs as results show them. */
  redirects: HttpRedirect[];
  /** Why the chain failed: the chain's own problem (too many redirects, a bad Location) or the final request's. */
  failure: { code: string; message: string } | null;
  /** `GET https://… failed: <message> (<code>)` when the chain failed; null when it got its final response. */
  unreachable: string | null;
  /** The final request's timings (docs/checks.md, "HTTP timing"), milliseconds. */
  timings: HttpTimings;
  timingPhases: HttpTimingPhases;
  /** performance.now() when the first request of the chain started (before its DNS lookup). */
  startAt: number;
  /** performance.now() when the final response ended (or the chain failed). */
  endAt: number;
};

/**
 * The HTTP side of the URL and API executors: one connector (one TLS context, sessions never
 * resumed), the resolver the agent is configured with, and the one redirect loop of both
 * (docs/checks.md, "URL" and "API"): each hop over a new connection, logged and recorded; a
 * response without a Location, or with more than one, is the final one;
 * 303 (but for HEAD) and a POST's 301/302 continue as GET without a body (RFC 9110 §15.4,
 * as user agents do); the credential headers (SECRET_HEADERS) are dropped, for the rest of the
 * chain, once a redirect leaves the origin, as fetch does.
 */
export class HttpClient {
  /** Extra CA certificates (PEM) trusted besides Node's roots. */
  readonly extraCa: readonly string[];
  /** Which resolver results name: `os` or `dns`. */
  readonly resolverKind: ResolverKind;
  readonly maxRedirects: number;
  /** Body bytes read per response, bytes. */
  readonly maxBodyBytes: number;
  /** The headers every request starts from: `user-agent` and `accept: *\/*`. */
  readonly baseHeaders: Readonly<Record<string, string>>;
  readonly #resolver: Resolver | undefined;
  readonly #connector: buildConnector.connector;

  /**
   * @param defaults - what the executor uses when `options` leave it out: body cap (bytes) and user agent.
   * @throws RangeError when `maxRedirects` or `maxBodyBytes` is not an integer ≥ 0.
   */
  constructor(options: HttpExecutorOptions, defaults: { maxBodyBytes: number; userAgent: string }) {
    checkCountOptions(options, ['maxRedirects', 'maxBodyBytes']);
    this.resolverKind = options.useOsDnsResolver ? 'os' : 'dns';
    this.#resolver = options.dnsServers ? createDnsResolver({ servers: options.dnsServers }) : undefined;
    this.extraCa =
      options.ca === undefined ? [] : typeof options.ca === 'string' ? [options.ca] : [...options.ca];
    this.maxRedirects = options.maxRedirects ?? 10;
    this.maxBodyBytes = options.maxBodyBytes ?? defaults.maxBodyBytes;
    this.baseHeaders = { 'user-agent': options.userAgent ?? defaults.userAgent, accept: '*/*' };
    // One connector (one TLS context) for every connection; sessions are never resumed.
    this.#connector = createCheckConnector([...this.extraCa]);
  }

  /**
   * Sends `request` to `url`, following redirects when it asks to, and logs each response
   * (`GET https://… → 200 OK`) in `logs`. Never throws for a failing target: the failure is
   * in the exchange.
   * @throws OutpostError OUTPOST_ERR_ABORTED when `request.signal` aborts.
   */
  async exchange(url: URL, request: HttpExchangeRequest, logs: RunLogRecorder): Promise<HttpExchange> {
    const { signal } = request;
    const resolve = (hostname: string) =>
      resolveHost(hostname, {
        ipFamily: request.ipFamily,
        useOsDnsResolver: this.resolverKind === 'os',
        signal,
        resolver: this.#resolver,
      });
    const redirects: HttpRedirect[] = [];
    let method = request.method;
    let body = request.body;
    let headers = request.headers;
    let target = url;
    let last: RequestOnceResult;
    let startAt: number | undefined;
    let problem: { code: string; message: string } | null = null;
    for (;;) {
      last = await requestOnce(target, {
        base: request.connector ?? this.#connector,
        resolve,
        skipSSL: request.skipSSL,
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        deadline: request.deadline,
        signal,
        maxBodyBytes: this.maxBodyBytes,
        ...(request.collectBody ? { collectBody: true } : {}),
      });
      startAt ??= last.trace.startAt;
      if (last.aborted) throw abortedError(signal);
      if (last.error !== null || last.statusCode === null) break;
      logs.add('INFO', `${method} ${displayUrl(target)} → ${last.statusCode} ${last.statusText}`.trimEnd());
      // A repeated Location is ambiguous: that response is the final one, as one without a Location.
      const location = last.headers.location;
      if (!request.followRedirects || !REDIRECT_STATUSES.has(last.statusCode) || typeof location !== 'string')
        break;
      if (redirects.length >= this.maxRedirects) {
        problem = { code: 'UND_ERR_MAX_REDIRECTS', message: `more than ${this.maxRedirects} redirects` };
        break;
      }
      const next = parseHttpUrl(location, target);
      if (typeof next === 'string') {
        problem = { code: 'ERR_INVALID_REDIRECT', message: `redirect to an unsupported URL: ${location}` };
        break;
      }
      redirects.push({ url: displayUrl(target), statusCode: last.statusCode });
      if (
        last.statusCode === 303
          ? method !== 'HEAD'
          : last.statusCode !== 307 && last.statusCode !== 308 && method === 'POST'
      ) {
        method = 'GET';
        body = undefined;
        headers = Object.fromEntries(Object.entries(headers).filter(([k]) => k !== 'content-type'));
      }
      if (next.origin !== target.origin) {
        // For the rest of the chain: A→B→A does not get them back.
        headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !SECRET_HEADERS.has(k)));
      }
      target = next;
    }
    const endedAt = performance.now();
    if (last.trace.tlsSessionReused)
      logs.add('WARN', 'the TLS session was resumed: the tls phase is too short');
    const failure = problem ?? last.error;
    return {
      last,
      finalUrl: target,
      method,
      redirects,
      failure,
      unreachable:
        failure === null
          ? null
          : `${method} ${displayUrl(target)} failed: ${failure.message} (${failure.code})`,
      ...timingsOf(last.trace, target.protocol === 'https:', endedAt),
      startAt,
      endAt: last.trace.endAt ?? endedAt,
    };
  }
}
