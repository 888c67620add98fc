import { isIP, SocketAddress } from 'node:net';
import { hasCode, OutpostError } from '../../common/errors.js';
import { type IcmpAddon, loadIcmpAddon, type SocketType } from './addon.js';
import { EchoRun, EchoSocket } from './echo-socket.js';

/** Which socket kind a Pinger may open: `auto` tries datagram first, then raw. */
export type SocketPreference = 'auto' | 'datagram' | 'raw';

const PREFERENCE_CODES = { auto: 0, datagram: 1, raw: 2 } as const;

/** Options of a Pinger. */
export type PingerOptions = {
  /** Socket kind to open. Default `auto`: an unprivileged datagram socket, else a raw one. */
  socketPreference?: SocketPreference;
  /** The native addon; tests may pass their own. Default: build/Release/outpost_icmp.node. */
  addon?: IcmpAddon;
};

/** One ping run: `count` echo requests to one address. */
export type PingOptions = {
  /** Numeric IPv4 or IPv6 address (an IPv6 address may carry a `%scope`). */
  address: string;
  /** Address family of `address`. */
  family: 4 | 6;
  /** Echo requests to send, 1–65535. Default 1. */
  count?: number;
  /** How long each request waits for its reply, ms, > 0. Default 1000. */
  timeoutMs?: number;
  /** Time between two requests of this run, ms, ≥ 0. Default 1000 (as iputils ping). */
  intervalMs?: number;
  /** ICMP payload after the 8-byte header, bytes, 0–65000. Default 56 (as iputils ping). */
  payloadSizeBytes?: number;
  /** Aborts the run: pending requests are dropped and the promise rejects with OUTPOST_ERR_ABORTED. */
  signal?: AbortSignal;
};

/** The fate of one echo request. */
export type PingReply = {
  /** 1-based position of the request in its run (ping's icmp_seq), not the on-wire number. */
  sequence: number;
  /** The reply came within `timeoutMs`. */
  success: boolean;
  /** Kernel receive time minus send time, ms; null when lost. */
  rttMs: number | null;
  /** TTL (IPv4) or hop limit (IPv6) of the reply; null when lost. */
  ttl: number | null;
  /** errno name when the request could not be sent (ENETUNREACH, …); null when it was sent. */
  sendError: string | null;
};

/** The result of one ping run. */
export type PingOutcome = {
  socketType: SocketType;
  replies: PingReply[];
};

/** sendto errors that lose one packet but say nothing about the next. */
const TRANSIENT_SEND_ERRORS = new Set(['ENOBUFS', 'EAGAIN', 'EWOULDBLOCK', 'ENOMEM']);

function checkRange(name: string, value: number, min: number, max: number, integer: boolean): void {
  if (!(Number.isFinite(value) && value >= min && value <= max && (!integer || Number.isInteger(value)))) {
    const kind = integer ? 'an integer' : 'a number';
    throw new RangeError(`${name} must be ${kind} from ${min} to ${max}; got ${String(value)}`);
  }
}

/** The canonical text of a numeric address, as the kernel reports reply sources. */
function canonicalAddress(address: string, family: 4 | 6): string {
  const [host = '', scope] = address.split('%');
  if (isIP(host) !== family) {
    throw new RangeError(`address must be a numeric IPv${family} address; got ${JSON.stringify(address)}`);
  }
  // isIP accepts IPv4 only in the canonical dotted-decimal form already.
  const canonical = family === 4 ? host : new SocketAddress({ address: host, family: 'ipv6' }).address;
  return scope === undefined ? canonical : `${canonical}%${scope}`;
}

/**
 * Sends ICMP echo requests and collects their replies (RFC 792, RFC 4443). One socket per
 * address family, opened on first use and shared by every concurrent ping; replies are
 * matched by identifier and a per-socket sequence number. RTTs use the kernel's receive
 * timestamp, so they do not include the event loop's delay.
 *
 * Call `close()` when done; the sockets do not keep the process alive by themselves.
 */
export class Pinger {
  readonly #preference: SocketPreference;
  readonly #addonOption: IcmpAddon | undefined;
  readonly #sockets = new Map<4 | 6, EchoSocket>();
  #closed = false;

  constructor(options: PingerOptions = {}) {
    const preference = options.socketPreference ?? 'auto';
    if (!(preference in PREFERENCE_CODES)) {
      throw new RangeError(`socketPreference must be auto, datagram or raw; got ${String(preference)}`);
    }
    this.#preference = preference;
    this.#addonOption = options.addon;
  }

  /**
   * Opens (once) the socket of `family` and tells its kind.
   * @throws OutpostError OUTPOST_ERR_ICMP_SOCKET naming what to grant when no socket can be
   *   opened; its `cause.code` is the errno name (EAFNOSUPPORT when the kernel has no IPv6).
   */
  socketType(family: 4 | 6): SocketType {
    return this.#socket(family).kind;
  }

  /**
   * Sends `count` echo requests to `address`, one every `intervalMs`, and resolves when each
   * has its reply or its timeout. Never rejects for a lost packet: that is a reply with
   * `success: false`. A send error other than a full buffer (ENETUNREACH, EHOSTUNREACH, …)
   * ends the run at once; that request and the unsent ones carry it in `sendError`.
   * @throws RangeError for a bad option; OutpostError OUTPOST_ERR_ICMP_SOCKET (see
   *   `socketType`); OUTPOST_ERR_ABORTED when `signal` aborts or the Pinger closes.
   */
  async ping(options: PingOptions): Promise<PingOutcome> {
    const count = options.count ?? 1;
    const timeoutMs = options.timeoutMs ?? 1000;
    const intervalMs = options.intervalMs ?? 1000;
    const payloadSizeBytes = options.payloadSizeBytes ?? 56;
    checkRange('count', count, 1, 0xffff, true);
    checkRange('timeoutMs', timeoutMs, 1, 2 ** 31 - 1, false);
    checkRange('intervalMs', intervalMs, 0, 2 ** 31 - 1, false);
    checkRange('payloadSizeBytes', payloadSizeBytes, 0, 65_000, true);
    if (options.family !== 4 && options.family !== 6) {
      throw new RangeError(`family must be 4 or 6; got ${String(options.family)}`);
    }
    const address = canonicalAddress(options.address, options.family);
    const signal = options.signal;
    if (signal?.aborted)
      throw new OutpostError('OUTPOST_ERR_ABORTED', 'ping aborted', { cause: signal.reason });
    const socket = this.#socket(options.family);

    return new Promise<PingOutcome>((resolve, reject) => {
      const replies: PingReply[] = new Array(count);
      for (let i = 0; i < count; i++) {
        replies[i] = { sequence: i + 1, success: false, rttMs: null, ttl: null, sendError: null };
      }
      let settled = 0;
      let finished = false;

      const finish = (error?: Error) => {
        if (finished) return;
        finished = true;
        socket.stop(run);
        signal?.removeEventListener('abort', onAbort);
        if (error === undefined) resolve({ socketType: socket.kind, replies });
        else reject(error);
      };
      const onAbort = () =>
        finish(new OutpostError('OUTPOST_ERR_ABORTED', 'ping aborted', { cause: signal?.reason }));
      const closed = () => new OutpostError('OUTPOST_ERR_ABORTED', 'the Pinger is closed');

      const run = new EchoRun(address, count, intervalMs, timeoutMs, payloadSizeBytes, {
        onEcho: (index, rttMs, ttl) => {
          if (finished) return;
          if (this.#closed && rttMs === null) {
            finish(closed());
            return;
          }
          const reply = replies[index]!;
          reply.success = rttMs !== null;
          reply.rttMs = rttMs;
          reply.ttl = ttl;
          if (++settled === count) finish();
        },
        onSendError: (index, code) => {
          if (finished) return;
          replies[index]!.sendError = code;
          settled++;
          if (!TRANSIENT_SEND_ERRORS.has(code)) {
            // The rest would fail the same way: mark them and stop.
            socket.stop(run);
            for (let next = run.sent; next < count; next++) replies[next]!.sendError = code;
            settled += count - run.sent;
          }
          if (settled === count) finish();
        },
        onFailure: (error) => finish(hasCode(error, 'OUTPOST_ERR_ABORTED') ? closed() : error),
      });

      signal?.addEventListener('abort', onAbort, { once: true });
      socket.start(run);
    });
  }

  /** Closes every socket; runs in flight reject with OUTPOST_ERR_ABORTED. Idempotent. */
  close(): void {
    this.#closed = true;
    for (const socket of this.#sockets.values()) socket.close();
    this.#sockets.clear();
  }

  #socket(family: 4 | 6): EchoSocket {
    if (this.#closed) throw new OutpostError('OUTPOST_ERR_ABORTED', 'the Pinger is closed');
    let socket = this.#sockets.get(family);
    if (!socket) {
      const addon = this.#addonOption ?? loadIcmpAddon();
      try {
        socket = new EchoSocket(addon, family, PREFERENCE_CODES[this.#preference]);
      } catch (err) {
        throw new OutpostError('OUTPOST_ERR_ICMP_SOCKET', (err as Error).message, { cause: err });
      }
      this.#sockets.set(family, socket);
    }
    return socket;
  }
}
