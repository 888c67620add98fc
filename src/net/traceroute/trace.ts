import type { Resolver } from 'node:dns/promises';
import { SocketAddress } from 'node:net';
import type { IpFamily } from '../../protocol/index.js';
import { OutpostError } from '../../common/errors.js';
import { linkSignal } from '../../common/linked-signal.js';
import { type IcmpAddon, loadIcmpAddon, type SocketType } from '../icmp/addon.js';
import type { SocketPreference } from '../icmp/pinger.js';
import { ResolveError, resolveHost } from '../resolve.js';
import { type ProbeAnswer, ProbeSocket, TRACE_PROTOCOLS, type TraceProtocol } from './probe-socket.js';

/** Options of {@link traceRoute}. */
export type TraceRouteOptions = {
  /** Address family to resolve `target` to; `IPv6` falls back to IPv4 when the name has no IPv6 address. Default `IPv4`. */
  ipFamily?: IpFamily;
  /**
   * `icmp` (default) sends ICMP echo requests (datagram ping sockets or raw sockets, as the ICMP
   * check does); `udp` sends UDP datagrams to high ports, which needs no privilege at all.
   */
  protocol?: TraceProtocol;
  /** Highest TTL / hop limit probed, 1–255. Default 30 (as traceroute). */
  maxHops?: number;
  /**
   * Probes per hop, 1–10. Default 3 (as traceroute): the probes of a hop go out together, so
   * more probes cost packets, not time, and show loss and RTT spread per hop.
   */
  probesPerHop?: number;
  /** How long each probe waits for its answer, ms, 1–60000. Default 1000. */
  probeTimeoutMs?: number;
  /**
   * Budget of the whole trace (resolution included), ms, 1–300000. Default 10000. When it runs
   * out the trace ends with what it has: unanswered probes are `*` and `timedOut` is true.
   */
  totalTimeoutMs?: number;
  /**
   * Hops probed at once, 1–255 (as `traceroute -N`, counted in hops): the probes for TTLs
   * `first unfinished hop … + simultaneousHops - 1` are in flight together. Default 16.
   */
  simultaneousHops?: number;
  /**
   * UDP only: destination port of the first probe, 1–65535; each further probe takes the next
   * port (as `traceroute -p`), so the ports stay unique. Default 33434. Ignored for ICMP.
   */
  port?: number;
  /** ICMP only: which socket kind to open. Default `auto`: an unprivileged datagram socket, else a raw one. */
  socketPreference?: SocketPreference;
  /**
   * Ends the trace after this many consecutive hops where no probe was answered (the hop ending it is
   * the last of the trace, and `unknownHopsLimit` is true), 1–255. Default: none, up to `maxHops`.
   */
  maxUnknownHops?: number;
  /** Resolve `target` with the OS resolver (getaddrinfo) instead of querying DNS. Default false. */
  useOsDnsResolver?: boolean;
  /** The c-ares resolver to query (see resolveHost); default one reading /etc/resolv.conf. */
  resolver?: Resolver;
  /** Aborts the trace: it rejects with OUTPOST_ERR_ABORTED. */
  signal?: AbortSignal;
  /** The native addon; tests may pass their own. Default: build/Release/outpost_icmp.node. */
  addon?: IcmpAddon;
};

/** One probe of a hop. */
export type RouteProbe = {
  /** Who answered (a router, or the target); null when nothing answered in time (`*`). */
  address: string | null;
  /** Round-trip time, ms, from kernel timestamps; null when nothing answered. */
  rttMs: number | null;
  /**
   * traceroute's mark for a Destination Unreachable answer: `!N` network, `!H` host, `!P`
   * protocol, `!F` fragmentation needed, `!S` source route / beyond scope, `!X` administratively
   * prohibited, `!V` precedence violation, `!C` precedence cutoff, `!<code>` another code.
   * Null otherwise, and for the port unreachable from the target that ends a UDP trace.
   */
  annotation: string | null;
};

/** The probes sent with one TTL / hop limit. */
export type RouteHop = {
  /** TTL / hop limit of the probes, from 1. */
  ttl: number;
  probes: RouteProbe[];
};

/** The route to a target, as traceroute would print it. */
export type RouteTrace = {
  /** The target as given. */
  target: string;
  /** The address probed. */
  resolvedIp: string;
  protocol: TraceProtocol;
  /** The socket the probes used: `datagram` (ping or UDP socket, unprivileged) or `raw` (CAP_NET_RAW). */
  socketType: SocketType;
  /** The target itself answered (echo reply, port unreachable or any other ICMP error from its address). */
  reached: boolean;
  /** Hops from TTL 1 up to the target, the hop that ended the trace, `maxHops`, or the last probed when time ran out. */
  hops: RouteHop[];
  /** The `maxHops` the trace ran with. */
  maxHops: number;
  /** `totalTimeoutMs` ran out before the trace finished. */
  timedOut: boolean;
  /** The trace ended after `maxUnknownHops` consecutive hops without an answer. */
  unknownHopsLimit: boolean;
  /** errno name (ENETUNREACH, EHOSTUNREACH, EACCES, …) when probes could not be sent; the trace then stopped. */
  sendError: string | null;
  /** Wall time of the whole trace, resolution included, ms (performance.now()). */
  durationMs: number;
};

/** sendto errors that lose one probe but say nothing about the next. */
const TRANSIENT_SEND_ERRORS = new Set(['ENOBUFS', 'EAGAIN', 'EWOULDBLOCK', 'ENOMEM']);

const PREFERENCE_CODES = { auto: 0, datagram: 1, raw: 2 } as const;

/** traceroute's marks for ICMP Destination Unreachable codes (RFC 792, RFC 1812 §5.2.7.1, RFC 4443 §3.1). */
const UNREACHABLE_MARKS: Record<4 | 6, Record<number, string>> = {
  4: {
    0: '!N',
    1: '!H',
    2: '!P',
    4: '!F',
    5: '!S',
    6: '!N',
    7: '!H',
    8: '!N',
    9: '!X',
    10: '!X',
    11: '!N',
    12: '!H',
    13: '!X',
    14: '!V',
    15: '!C',
  },
  6: { 0: '!N', 1: '!X', 2: '!S', 3: '!H', 5: '!X', 6: '!X' },
};

/** The port unreachable code per family: from the target it is the end of a UDP trace, not a mark. */
const PORT_UNREACHABLE = { 4: 3, 6: 4 } as const;

function checkInteger(name: string, value: number, min: number, max: number): number {
  if (!(Number.isInteger(value) && value >= min && value <= max)) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}; got ${String(value)}`);
  }
  return value;
}

/** The canonical text of a numeric address, as the kernel reports answer sources. */
function canonicalAddress(address: string, family: 4 | 6): string {
  if (family === 4) return address;
  const [host = '', scope] = address.split('%');
  const canonical = new SocketAddress({ address: host, family: 'ipv6' }).address;
  return scope === undefined ? canonical : `${canonical}%${scope}`;
}

function abortError(signal: AbortSignal | undefined): OutpostError {
  return new OutpostError('OUTPOST_ERR_ABORTED', 'route trace aborted', { cause: signal?.reason });
}

function markOf(family: 4 | 6, answer: ProbeAnswer, fromTarget: boolean): string | null {
  if (answer.kind !== 'unreachable') return null;
  if (fromTarget && answer.icmpCode === PORT_UNREACHABLE[family]) return null;
  return UNREACHABLE_MARKS[family][answer.icmpCode] ?? `!${answer.icmpCode}`;
}

/** One TTL while the trace runs: its answers (undefined while pending), probes pending, their keys. */
type HopState = { answers: (ProbeAnswer | null | undefined)[]; open: number; keys: number[] };

type Options = Required<
  Pick<
    TraceRouteOptions,
    'maxHops' | 'probesPerHop' | 'probeTimeoutMs' | 'totalTimeoutMs' | 'simultaneousHops' | 'port'
  >
> & { protocol: TraceProtocol; preference: 0 | 1 | 2; maxUnknownHops: number };

function parseOptions(options: TraceRouteOptions): Options {
  const protocol = options.protocol ?? 'icmp';
  if (!TRACE_PROTOCOLS.includes(protocol)) {
    throw new RangeError(`protocol must be icmp or udp; got ${String(protocol)}`);
  }
  const preference = options.socketPreference ?? 'auto';
  if (!(preference in PREFERENCE_CODES)) {
    throw new RangeError(`socketPreference must be auto, datagram or raw; got ${String(preference)}`);
  }
  if (options.ipFamily !== undefined && options.ipFamily !== 'IPv4' && options.ipFamily !== 'IPv6') {
    throw new RangeError(`ipFamily must be IPv4 or IPv6; got ${String(options.ipFamily)}`);
  }
  const parsed: Options = {
    protocol,
    preference: PREFERENCE_CODES[preference],
    maxHops: checkInteger('maxHops', options.maxHops ?? 30, 1, 255),
    probesPerHop: checkInteger('probesPerHop', options.probesPerHop ?? 3, 1, 10),
    probeTimeoutMs: checkInteger('probeTimeoutMs', options.probeTimeoutMs ?? 1000, 1, 60_000),
    totalTimeoutMs: checkInteger('totalTimeoutMs', options.totalTimeoutMs ?? 10_000, 1, 300_000),
    simultaneousHops: checkInteger('simultaneousHops', options.simultaneousHops ?? 16, 1, 255),
    port: checkInteger('port', options.port ?? 33_434, 1, 65_535),
    maxUnknownHops: checkInteger('maxUnknownHops', options.maxUnknownHops ?? 255, 1, 255),
  };
  const lastPort = parsed.port + parsed.maxHops * parsed.probesPerHop - 1;
  if (protocol === 'udp' && lastPort > 65_535) {
    throw new RangeError(
      `port + maxHops × probesPerHop - 1 must be at most 65535 (each UDP probe takes the next port); got ${lastPort}`,
    );
  }
  return parsed;
}

/**
 * Traces the route to `target` (a host name or numeric address) as traceroute does: probes
 * with rising TTL / hop limit, each answered by the router where it expires (ICMP Time
 * Exceeded, whose source is that hop) until the target answers (ICMP echo reply, or for UDP
 * probes a port unreachable). Probes for several hops go out at once (as mtr and
 * `traceroute -N`); the trace ends at the lowest hop where the target answered, at a hop
 * whose every answer is a Destination Unreachable (`!H`, `!N`, `!X`, …), at `maxHops`, or
 * when `totalTimeoutMs` runs out. RTTs come from kernel receive timestamps (SO_TIMESTAMPNS).
 *
 * An unreachable target is a result (`reached: false`, `*` hops), not an error. Each trace
 * opens its own socket and closes it at the end.
 * @throws RangeError for a bad option (naming it); ResolveError when `target` cannot be
 *   resolved (code ETIMEOUT when the budget ran out first); OutpostError OUTPOST_ERR_ICMP_SOCKET
 *   when no socket can be opened (naming what to grant); OUTPOST_ERR_ABORTED when `signal` aborts.
 */
export async function traceRoute(target: string, options: TraceRouteOptions = {}): Promise<RouteTrace> {
  const started = performance.now();
  const parsed = parseOptions(options);
  const signal = options.signal;
  if (signal?.aborted) throw abortError(signal);
  const resolved = await resolveTarget(target, options, parsed.totalTimeoutMs);
  const family = resolved.family;
  const address = canonicalAddress(resolved.address, family);
  const socket = openSocket(options.addon, family, parsed);
  const remainingMs = Math.max(0, parsed.totalTimeoutMs - (performance.now() - started));
  const trace: TraceSetup = {
    target,
    address,
    targetAddress: address.split('%')[0] ?? address,
    family,
    socket,
    parsed,
    signal,
    started,
    remainingMs,
  };
  return new Promise<RouteTrace>((resolve, reject) => new TraceRun(trace, resolve, reject).start());
}

/**
 * The address of `target` in the family asked for, resolved within `budgetMs`.
 * @throws OUTPOST_ERR_ABORTED when `options.signal` aborts; ResolveError (code ETIMEOUT when the
 *   budget ran out first).
 */
async function resolveTarget(
  target: string,
  options: TraceRouteOptions,
  budgetMs: number,
): Promise<{ address: string; family: 4 | 6 }> {
  const signal = options.signal;
  const resolution = linkSignal(signal ? [signal] : [], budgetMs);
  try {
    return await resolveHost(target, {
      ipFamily: options.ipFamily ?? 'IPv4',
      useOsDnsResolver: options.useOsDnsResolver ?? false,
      resolver: options.resolver,
      signal: resolution.signal,
    });
  } catch (err) {
    if (signal?.aborted) throw abortError(signal);
    if (resolution.signal.aborted) {
      throw new ResolveError(target, 'ETIMEOUT', { cause: resolution.signal.reason });
    }
    throw err;
  } finally {
    resolution.dispose();
  }
}

/**
 * The trace's own probe socket.
 * @throws OutpostError OUTPOST_ERR_ICMP_SOCKET when none can be opened (naming what to grant).
 */
function openSocket(addon: IcmpAddon | undefined, family: 4 | 6, parsed: Options): ProbeSocket {
  try {
    return new ProbeSocket(addon ?? loadIcmpAddon(), family, parsed.protocol, parsed.preference);
  } catch (err) {
    if (err instanceof OutpostError) throw err;
    const what = parsed.protocol === 'udp' ? 'UDP' : 'ICMP';
    throw new OutpostError('OUTPOST_ERR_ICMP_SOCKET', `route trace (${what}): ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** A trace ready to send its probes: the target resolved, the socket open, the time left. */
type TraceSetup = {
  /** The target as given. */
  target: string;
  /** The address probed, canonical, with its IPv6 scope (`%eth0`) when it has one. */
  address: string;
  /** `address` without its scope, as answers name their source. */
  targetAddress: string;
  family: 4 | 6;
  socket: ProbeSocket;
  parsed: Options;
  signal: AbortSignal | undefined;
  /** performance.now() when the trace started (resolution included). */
  started: number;
  /** What is left of `totalTimeoutMs` for the probes, ms. */
  remainingMs: number;
};

/** How a trace ends: at a hop (the trace so far), or with an error. */
type TraceEnd = { lastTtl: number; timedOut: boolean; unknownHopsLimit?: boolean } | { error: unknown };

/**
 * One running trace: the hops probed so far (per TTL, index ttl - 1: the answers so far,
 * undefined while pending, and the probes left), and the rules that end it (see {@link traceRoute}).
 */
class TraceRun {
  readonly #t: TraceSetup;
  readonly #resolve: (trace: RouteTrace) => void;
  readonly #reject: (err: unknown) => void;
  readonly #hops: HopState[] = [];
  #nextTtl = 1;
  /** Lowest TTL whose probes are not all settled. */
  #firstOpen = 1;
  /** Lowest TTL at which the target answered. */
  #targetTtl = Number.POSITIVE_INFINITY;
  #sendError: string | null = null;
  /** Consecutive settled hops, up to #firstOpen, where no probe was answered. */
  #unknownRun = 0;
  #finished = false;
  #probeIndex = 0;
  /** The next call of `pump`, when one is due. */
  #pumpScheduled: NodeJS.Immediate | undefined;
  #deadline: NodeJS.Timeout | undefined;
  readonly #onAbort = () => this.#finish({ error: abortError(this.#t.signal) });

  constructor(setup: TraceSetup, resolve: (trace: RouteTrace) => void, reject: (err: unknown) => void) {
    this.#t = setup;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  /** Starts the clock of `totalTimeoutMs`, listens for an abort, and sends the first hop's probes. */
  start(): void {
    const { socket, signal, remainingMs } = this.#t;
    this.#deadline = setTimeout(() => {
      // Answers that came in time may still be queued: deliver them first.
      socket.flush();
      const lastTtl = Number.isFinite(this.#targetTtl) ? this.#targetTtl : this.#hops.length;
      this.#finish({ lastTtl, timedOut: true });
    }, remainingMs);
    signal?.addEventListener('abort', this.#onAbort, { once: true });
    this.#pump();
  }

  #isTarget(answer: ProbeAnswer | null | undefined): boolean {
    return answer != null && answer.kind !== 'time-exceeded' && answer.address === this.#t.targetAddress;
  }

  #finish(how: TraceEnd): void {
    if (this.#finished) return;
    this.#finished = true;
    clearTimeout(this.#deadline);
    clearImmediate(this.#pumpScheduled);
    this.#t.signal?.removeEventListener('abort', this.#onAbort);
    this.#t.socket.close();
    if ('error' in how) {
      this.#reject(how.error);
      return;
    }
    this.#resolve(this.#trace(how.lastTtl, how.timedOut, how.unknownHopsLimit ?? false));
  }

  /** The trace up to `lastTtl` (at most the hops probed). */
  #trace(until: number, timedOut: boolean, unknownHopsLimit: boolean): RouteTrace {
    const { target, address, targetAddress, family, socket, parsed, started } = this.#t;
    const lastTtl = Math.min(until, this.#hops.length);
    return {
      target,
      resolvedIp: address,
      protocol: parsed.protocol,
      socketType: socket.kind,
      reached: this.#targetTtl <= lastTtl,
      hops: this.#hops.slice(0, lastTtl).map((hop, i) => ({
        ttl: i + 1,
        probes: hop.answers.map((answer) => ({
          address: answer?.address ?? null,
          rttMs: answer?.rttMs ?? null,
          annotation: answer ? markOf(family, answer, answer.address === targetAddress) : null,
        })),
      })),
      maxHops: parsed.maxHops,
      timedOut,
      unknownHopsLimit,
      sendError: this.#sendError,
      durationMs: performance.now() - started,
    };
  }

  /** Ends the trace once every hop up to a final one has settled. */
  #advance(): void {
    const hops = this.#hops;
    while (!this.#finished && this.#firstOpen <= hops.length && hops[this.#firstOpen - 1]!.open === 0) {
      const answers = hops[this.#firstOpen - 1]!.answers;
      const answered = answers.filter((a) => a != null);
      const allUnreachable = answered.length > 0 && answered.every((a) => a.kind === 'unreachable');
      this.#unknownRun = answered.length === 0 ? this.#unknownRun + 1 : 0;
      if (this.#unknownRun >= this.#t.parsed.maxUnknownHops && this.#firstOpen < this.#targetTtl) {
        this.#finish({ lastTtl: this.#firstOpen, timedOut: false, unknownHopsLimit: true });
        return;
      }
      if (
        this.#firstOpen >= this.#targetTtl ||
        allUnreachable ||
        this.#firstOpen === this.#t.parsed.maxHops
      ) {
        this.#finish({ lastTtl: this.#firstOpen, timedOut: false });
        return;
      }
      this.#firstOpen++;
    }
    if (!this.#finished && this.#pumpScheduled === undefined) this.#pump();
  }

  #onSettled(ttl: number, index: number, answer: ProbeAnswer | null): void {
    if (this.#finished) return;
    const hop = this.#hops[ttl - 1]!;
    hop.answers[index] = answer;
    hop.open--;
    if (this.#isTarget(answer) && ttl < this.#targetTtl) {
      this.#targetTtl = ttl;
      // Probes beyond the target only reach it again: stop waiting for them.
      for (const later of this.#hops.slice(ttl)) {
        for (const key of later.keys) this.#t.socket.cancel(key);
        later.open = 0;
      }
    }
    this.#advance();
  }

  #sendHop(ttl: number): void {
    const { socket, address, parsed } = this.#t;
    const { probesPerHop, probeTimeoutMs } = parsed;
    const hop: HopState = { answers: new Array(probesPerHop).fill(undefined), open: 0, keys: [] };
    this.#hops.push(hop);
    for (let index = 0; index < probesPerHop && !this.#finished; index++) {
      const port = parsed.port + this.#probeIndex++;
      try {
        hop.open++;
        const key = socket.send(
          address,
          ttl,
          probeTimeoutMs,
          (answer) => this.#onSettled(ttl, index, answer),
          port,
        );
        hop.keys.push(key);
      } catch (err) {
        hop.open--;
        const code = (err as { code?: unknown }).code;
        if (typeof code !== 'string' || code.startsWith('OUTPOST_ERR')) {
          this.#finish({ error: err });
          return;
        }
        hop.answers[index] = null;
        if (!TRANSIENT_SEND_ERRORS.has(code)) {
          // The next probes would fail the same way: stop here with what we have.
          this.#sendError = code;
          this.#finish({ lastTtl: ttl, timedOut: false });
          return;
        }
      }
    }
  }

  /**
   * Sends the next hop's probes, and the one after on the next turn of the event loop: the
   * poll phase runs in between, so a near target's answer (loopback, LAN: well under a
   * millisecond) stops the sending before a whole window of needless probes reaches it and
   * spends its ICMP rate limit. A far path still has all its hops in flight within ~1 ms.
   */
  #pump(): void {
    this.#pumpScheduled = undefined;
    const { maxHops, simultaneousHops } = this.#t.parsed;
    if (
      this.#finished ||
      this.#nextTtl > maxHops ||
      this.#nextTtl > this.#targetTtl ||
      this.#nextTtl >= this.#firstOpen + simultaneousHops
    ) {
      return;
    }
    this.#sendHop(this.#nextTtl++);
    // A hop whose probes all failed to send is settled already.
    if (!this.#finished && this.#hops[this.#firstOpen - 1]?.open === 0) {
      this.#advance();
      return;
    }
    if (!this.#finished) this.#pumpScheduled ??= setImmediate(() => this.#pump());
  }
}
