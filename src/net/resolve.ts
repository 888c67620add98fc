import { lookup, Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { IpFamily } from '../protocol/index.js';
import { raceAbort } from '../common/abort.js';
import { OutpostError } from '../common/errors.js';

/** Which resolver answered: `dns` queries the name server directly (c-ares), `os` asks getaddrinfo. */
export type ResolverKind = 'dns' | 'os';

/** An address to connect to and how it was found. */
export type ResolvedAddress = {
  address: string;
  family: 4 | 6;
  /** The resolver in use; an IP literal reports the configured one with `durationMs` 0. */
  resolver: ResolverKind;
  /** Time spent resolving, milliseconds (performance.now()); 0 for an IP literal. */
  durationMs: number;
};

/** Options of {@link resolveHost}. */
export type ResolveOptions = {
  /** The family asked for; `IPv6` falls back to IPv4 when the name has no IPv6 address. */
  ipFamily: IpFamily;
  /** Use the OS resolver (getaddrinfo: /etc/hosts, nsswitch, search domains) instead of querying DNS. */
  useOsDnsResolver: boolean;
  /** The c-ares resolver to query; default: a shared one reading /etc/resolv.conf (see createDnsResolver). */
  resolver?: Resolver | undefined;
  /** Stops waiting: rejects with OUTPOST_ERR_ABORTED. */
  signal?: AbortSignal;
};

/** A hostname that could not be resolved: a check failure, not an agent error. */
export class ResolveError extends Error {
  /** The resolver's system code: ENOTFOUND, ENODATA, EAI_AGAIN, ETIMEOUT, ESERVFAIL, ECONNREFUSED, … */
  readonly code: string;
  readonly hostname: string;
  constructor(hostname: string, code: string, options: { cause: unknown }) {
    super(`cannot resolve ${hostname}: ${code}`, options);
    this.name = 'ResolveError';
    this.code = code;
    this.hostname = hostname;
  }
}

/** Codes meaning "this name has no address of that family": IPv6 then falls back to IPv4. */
const NO_ADDRESS = new Set(['ENODATA', 'ENOTFOUND']);

/**
 * Creates a c-ares resolver: it reads /etc/resolv.conf once, at creation, and never reads
 * /etc/hosts. `servers` replaces the configured name servers (`"127.0.0.1:5353"`, `"[::1]:53"`).
 * `timeoutMs` (default 2000) is per try, `tries` (default 2) per server.
 */
export function createDnsResolver(
  options: { servers?: readonly string[]; timeoutMs?: number; tries?: number } = {},
): Resolver {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 2000, tries: options.tries ?? 2 });
  if (options.servers !== undefined) resolver.setServers([...options.servers]);
  return resolver;
}

let sharedResolver: Resolver | undefined;

/**
 * `localhost` and names under `.localhost` are loopback by definition (RFC 6761 §6.3) and
 * never reach a name server; c-ares would otherwise send them to the configured one.
 */
function loopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

async function queryOnce(hostname: string, family: 4 | 6, options: ResolveOptions): Promise<string> {
  if (loopbackName(hostname)) return family === 6 ? '::1' : '127.0.0.1';
  if (options.useOsDnsResolver) {
    return (await raceAbort(lookup(hostname, { family }), options.signal)).address;
  }
  sharedResolver ??= createDnsResolver();
  const resolver = options.resolver ?? sharedResolver;
  const query = family === 6 ? resolver.resolve6(hostname) : resolver.resolve4(hostname);
  // Neither resolver can cancel a query: an abort only stops waiting for it.
  const addresses = await raceAbort(query, options.signal);
  const first = addresses[0];
  if (first === undefined) throw Object.assign(new Error(`no address for ${hostname}`), { code: 'ENODATA' });
  return first;
}

/**
 * Resolves `hostname` to one address of the asked family. An IP literal is used as it is
 * (whatever `ipFamily` says) and costs 0 ms. By default the name server of /etc/resolv.conf is
 * queried directly (A or AAAA, first answer; /etc/hosts and search domains do not apply);
 * with `useOsDnsResolver` the OS resolver is used (getaddrinfo, so /etc/hosts counts). Either
 * way `localhost` is loopback without a query (RFC 6761). IPv6 falls back to IPv4 when the name
 * has no IPv6 address (ENODATA, ENOTFOUND); `durationMs` then covers both queries.
 * @throws ResolveError carrying the resolver's code; OutpostError OUTPOST_ERR_ABORTED when `signal` aborts.
 */
export async function resolveHost(hostname: string, options: ResolveOptions): Promise<ResolvedAddress> {
  const resolverKind: ResolverKind = options.useOsDnsResolver ? 'os' : 'dns';
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  const literal = isIP(bare);
  if (literal === 4 || literal === 6) {
    return { address: bare, family: literal, resolver: resolverKind, durationMs: 0 };
  }
  const started = performance.now();
  const attempt = async (family: 4 | 6): Promise<ResolvedAddress> => {
    const address = await queryOnce(hostname, family, options);
    return { address, family, resolver: resolverKind, durationMs: performance.now() - started };
  };
  try {
    if (options.ipFamily === 'IPv4') return await attempt(4);
    try {
      return await attempt(6);
    } catch (err) {
      if (!NO_ADDRESS.has(codeOf(err))) throw err;
      return await attempt(4);
    }
  } catch (err) {
    if (err instanceof OutpostError) throw err;
    throw new ResolveError(hostname, codeOf(err), { cause: err });
  }
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'EUNKNOWN';
}
