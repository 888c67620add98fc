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
  /** Resolve `target` with the OS resolver (getaddrinfo) instead of querying DNS. Default false. */
  useOsDnsResolver?: boolean;
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
> & { protocol: TraceProtocol; preference: 0 | 1 | 2 };

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

  const resolution = linkSignal(signal ? [signal] : [], parsed.totalTimeoutMs);
  let resolved: { address: string; family: 4 | 6 };
  try {
    resolved = await resolveHost(target, {
      ipFamily: options.ipFamily ?? 'IPv4',
      useOsDnsResolver: options.useOsDnsResolver ?? false,
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
  const family = resolved.family;
  const address = canonicalAddress(resolved.address, family);
  const targetAddress = address.split('%')[0] ?? address;

  let socket: ProbeSocket;
  try {
    socket = new ProbeSocket(options.addon ?? loadIcmpAddon(), family, parsed.protocol, parsed.preference);
  } catch (err) {
    if (err instanceof OutpostError) throw err;
    const what = parsed.protocol === 'udp' ? 'UDP' : 'ICMP';
    throw new OutpostError('OUTPOST_ERR_ICMP_SOCKET', `route trace (${what}): ${(err as Error).message}`, {
      cause: err,
    });
  }

  const { maxHops, probesPerHop, probeTimeoutMs, simultaneousHops } = parsed;
  const remainingMs = Math.max(0, parsed.totalTimeoutMs - (performance.now() - started));

  return new Promise<RouteTrace>((resolve, reject) => {
    /** Per TTL (index ttl - 1): the answers so far (undefined while pending) and the probes left. */
    const hops: HopState[] = [];
    let nextTtl = 1;
    /** Lowest TTL whose probes are not all settled. */
    let firstOpen = 1;
    /** Lowest TTL at which the target answered. */
    let targetTtl = Number.POSITIVE_INFINITY;
    let sendError: string | null = null;
    let finished = false;
    let probeIndex = 0;
    /** The next call of `pump`, when one is due. */
    let pumpScheduled: NodeJS.Immediate | undefined;

    const isTarget = (answer: ProbeAnswer | null | undefined) =>
      answer != null && answer.kind !== 'time-exceeded' && answer.address === targetAddress;

    const finish = (how: { lastTtl: number; timedOut: boolean } | { error: unknown }) => {
      if (finished) return;
      finished = true;
      clearTimeout(deadline);
      clearImmediate(pumpScheduled);
      signal?.removeEventListener('abort', onAbort);
      socket.close();
      if ('error' in how) {
        reject(how.error);
        return;
      }
      const lastTtl = Math.min(how.lastTtl, hops.length);
      resolve({
        target,
        resolvedIp: address,
        protocol: parsed.protocol,
        socketType: socket.kind,
        reached: targetTtl <= lastTtl,
        hops: hops.slice(0, lastTtl).map((hop, i) => ({
          ttl: i + 1,
          probes: hop.answers.map((answer) => ({
            address: answer?.address ?? null,
            rttMs: answer?.rttMs ?? null,
            annotation: answer ? markOf(family, answer, answer.address === targetAddress) : null,
          })),
        })),
        maxHops,
        timedOut: how.timedOut,
        sendError,
        durationMs: performance.now() - started,
      });
    };

    /** Ends the trace once every hop up to a final one has settled. */
    const advance = () => {
      while (!finished && firstOpen <= hops.length && hops[firstOpen - 1]!.open === 0) {
        const answers = hops[firstOpen - 1]!.answers;
        const answered = answers.filter((a) => a != null);
        const allUnreachable = answered.length > 0 && answered.every((a) => a.kind === 'unreachable');
        if (firstOpen >= targetTtl || allUnreachable || firstOpen === maxHops) {
          finish({ lastTtl: firstOpen, timedOut: false });
          return;
        }
        firstOpen++;
      }
      if (!finished && pumpScheduled === undefined) pump();
    };

    const onSettled = (ttl: number, index: number, answer: ProbeAnswer | null) => {
      if (finished) return;
      const hop = hops[ttl - 1]!;
      hop.answers[index] = answer;
      hop.open--;
      if (isTarget(answer) && ttl < targetTtl) {
        targetTtl = ttl;
        // Probes beyond the target only reach it again: stop waiting for them.
        for (const later of hops.slice(ttl)) {
          for (const key of later.keys) socket.cancel(key);
          later.open = 0;
        }
      }
      advance();
    };

    const sendHop = (ttl: number) => {
      const hop: HopState = { answers: new Array(probesPerHop).fill(undefined), open: 0, keys: [] };
      hops.push(hop);
      for (let index = 0; index < probesPerHop && !finished; index++) {
        const port = parsed.port + probeIndex++;
        try {
          hop.open++;
          const key = socket.send(
            address,
            ttl,
            probeTimeoutMs,
            (answer) => onSettled(ttl, index, answer),
            port,
          );
          hop.keys.push(key);
        } catch (err) {
          hop.open--;
          const code = (err as { code?: unknown }).code;
          if (typeof code !== 'string' || code.startsWith('OUTPOST_ERR')) {
            finish({ error: err });
            return;
          }
          hop.answers[index] = null;
          if (!TRANSIENT_SEND_ERRORS.has(code)) {
            // The next probes would fail the same way: stop here with what we have.
            sendError = code;
            finish({ lastTtl: ttl, timedOut: false });
            return;
          }
        }
      }
    };

    /**
     * Sends the next hop's probes, and the one after on the next turn of the event loop: the
     * poll phase runs in between, so a near target's answer (loopback, LAN: well under a
     * millisecond) stops the sending before a whole window of needless probes reaches it and
     * spends its ICMP rate limit. A far path still has all its hops in flight within ~1 ms.
     */
    const pump = () => {
      pumpScheduled = undefined;
      if (finished || nextTtl > maxHops || nextTtl > targetTtl || nextTtl >= firstOpen + simultaneousHops) {
        return;
      }
      sendHop(nextTtl++);
      // A hop whose probes all failed to send is settled already.
      if (!finished && hops[firstOpen - 1]?.open === 0) {
        advance();
        return;
      }
      if (!finished) pumpScheduled ??= setImmediate(pump);
    };

    const onAbort = () => finish({ error: abortError(signal) });
    const deadline = setTimeout(() => {
      // Answers that came in time may still be queued: deliver them first.
      socket.flush();
      const lastTtl = Number.isFinite(targetTtl) ? targetTtl : hops.length;
      finish({ lastTtl, timedOut: true });
    }, remainingMs);

    signal?.addEventListener('abort', onAbort, { once: true });
    pump();
  });
}
