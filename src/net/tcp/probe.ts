import { connect, type Socket } from 'node:net';

/** Default of {@link TcpProbeOptions.maxKeptBytes}: 64 KiB of reply kept. */
export const DEFAULT_MAX_KEPT_BYTES = 64 * 1024;
/** Default of {@link TcpProbeOptions.replyIdleMs}: a reply ends after 100 ms without new bytes. */
export const DEFAULT_REPLY_IDLE_MS = 100;

/** What {@link probeTcp} does. Times are performance.now() milliseconds. */
export type TcpProbeOptions = {
  /** An IP address (resolve names first). */
  address: string;
  port: number;
  /** Sent once connected; null sends nothing. */
  data: Buffer | null;
  /** Wait for a reply after connecting (and sending). Without it the probe closes once connected. */
  readReply: boolean;
  /** performance.now() at which the probe gives up: ETIMEDOUT. */
  deadline: number;
  /** Aborts the probe at once: the result has `aborted: true`. */
  signal: AbortSignal;
  /** Reply bytes kept in `reply`; all are counted. Default 64 KiB. */
  maxKeptBytes?: number;
  /**
   * The reply ends when the peer closes, when `maxKeptBytes` are in, or after this long without
   * new bytes once the first arrived, ms. Default 100. Servers that answer and keep the
   * connection open (Redis `PING`, SMTP banners) would otherwise run into the deadline.
   */
  replyIdleMs?: number;
};

/** What a TCP probe saw. Times are milliseconds from the probe's start. */
export type TcpProbeResult = {
  connected: boolean;
  /** System code of the failure (ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH, ECONNRESET, …); null without one. */
  errorCode: string | null;
  /** One line: what failed and where; null without a failure. */
  errorMessage: string | null;
  /** Handshake done, or the attempt failed. */
  connectMs: number;
  /** First reply byte; null when none came. */
  firstByteMs: number | null;
  /** End of the exchange: last reply byte or the peer's close; the connect time when no reply was awaited. */
  endMs: number;
  bytesSent: number;
  bytesReceived: number;
  /** The first `maxKeptBytes` of the reply. */
  reply: Buffer;
  /** More than `maxKeptBytes` came back. */
  truncated: boolean;
  /** `signal` aborted the probe. */
  aborted: boolean;
};

/**
 * Connects to `address:port`, optionally sends `data` and reads the reply (see
 * TcpProbeOptions for when it ends). Never rejects: a refused, unreachable or silent
 * target is a result with its system code. The socket is always destroyed before it settles.
 */
export function probeTcp(options: TcpProbeOptions): Promise<TcpProbeResult> {
  return new Promise<TcpProbeResult>((resolve) => new TcpProbe(options, resolve).start());
}

/** A failure of a probe: its system code and one line saying what failed and where. */
type ProbeFailure = { code: string; message: string };

/** One probe under way: its socket, its timers, the reply so far, and the result it settles with. */
class TcpProbe {
  readonly #options: TcpProbeOptions;
  readonly #resolve: (result: TcpProbeResult) => void;
  readonly #started = performance.now();
  readonly #maxKept: number;
  readonly #idleMs: number;
  /** `address:port`, an IPv6 address in brackets, for messages. */
  readonly #target: string;
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  readonly #result: TcpProbeResult = {
    connected: false,
    errorCode: null,
    errorMessage: null,
    connectMs: 0,
    firstByteMs: null,
    endMs: 0,
    bytesSent: 0,
    bytesReceived: 0,
    reply: Buffer.alloc(0),
    truncated: false,
    aborted: false,
  };
  #lastByteAt: number;
  #settled = false;
  #idleTimer: NodeJS.Timeout | undefined;
  #deadlineTimer: NodeJS.Timeout | undefined;
  readonly #socket: Socket;
  readonly #onAbort = () => {
    this.#result.aborted = true;
    this.#finish(performance.now(), {
      code: 'ABORT_ERR',
      message: `aborted while talking to ${this.#target}`,
    });
  };

  /** Starts connecting (the socket is created here). */
  constructor(options: TcpProbeOptions, resolve: (result: TcpProbeResult) => void) {
    this.#options = options;
    this.#resolve = resolve;
    this.#maxKept = options.maxKeptBytes ?? DEFAULT_MAX_KEPT_BYTES;
    // setTimeout fires at once beyond 2^31 − 1 ms: a huge idle wait means "until close or deadline".
    this.#idleMs = Math.min(options.replyIdleMs ?? DEFAULT_REPLY_IDLE_MS, 2 ** 31 - 1);
    this.#target = options.address.includes(':')
      ? `[${options.address}]:${options.port}`
      : `${options.address}:${options.port}`;
    this.#lastByteAt = this.#started;
    this.#socket = connect({ host: options.address, port: options.port, noDelay: true });
  }

  /** Arms the deadline, listens for an abort, and follows the socket's events until the probe settles. */
  start(): void {
    const { signal, deadline } = this.#options;
    this.#deadlineTimer = setTimeout(() => this.#onDeadline(), Math.max(0, deadline - this.#started));
    if (signal.aborted) {
      this.#onAbort();
      return;
    }
    signal.addEventListener('abort', this.#onAbort, { once: true });
    const socket = this.#socket;
    const result = this.#result;
    socket.once('connect', () => this.#onConnect());
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    // The peer closed its side: the reply is complete.
    socket.once('end', () => this.#finish(result.bytesReceived > 0 ? this.#lastByteAt : performance.now()));
    socket.on('error', (err: NodeJS.ErrnoException) => this.#onError(err));
    socket.once('close', () => this.#finish(result.bytesReceived > 0 ? this.#lastByteAt : performance.now()));
  }

  /** Settles the probe (once): timers cleared, socket destroyed, the reply joined. */
  #finish(endAt: number, failure?: ProbeFailure): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#deadlineTimer);
    clearTimeout(this.#idleTimer);
    this.#options.signal.removeEventListener('abort', this.#onAbort);
    this.#socket.destroy();
    const result = this.#result;
    if (failure) {
      result.errorCode = failure.code;
      result.errorMessage = failure.message;
    }
    if (!result.connected) result.connectMs = endAt - this.#started;
    result.endMs = endAt - this.#started;
    const chunks = this.#chunks;
    result.reply = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.#kept);
    this.#resolve(result);
  }

  #onDeadline(): void {
    const waitedMs = Math.round(performance.now() - this.#started);
    if (!this.#result.connected) {
      this.#finish(performance.now(), {
        code: 'ETIMEDOUT',
        message: `connect ETIMEDOUT ${this.#target}: no answer within ${waitedMs} ms`,
      });
    } else if (this.#result.bytesReceived === 0) {
      this.#finish(performance.now(), {
        code: 'ETIMEDOUT',
        message: `no reply from ${this.#target} within ${waitedMs} ms`,
      });
    } else {
      // A reply that keeps coming until the deadline: judge what arrived.
      this.#finish(performance.now());
    }
  }

  #onConnect(): void {
    const now = performance.now();
    const { data, readReply } = this.#options;
    this.#result.connected = true;
    this.#result.connectMs = now - this.#started;
    if (data !== null && data.length > 0) {
      this.#socket.write(data);
      this.#result.bytesSent = data.length;
    }
    if (!readReply) this.#finish(now);
  }

  #onData(chunk: Buffer): void {
    const now = performance.now();
    const result = this.#result;
    const maxKept = this.#maxKept;
    result.firstByteMs ??= now - this.#started;
    this.#lastByteAt = now;
    result.bytesReceived += chunk.length;
    if (this.#kept < maxKept) {
      const piece = this.#kept + chunk.length > maxKept ? chunk.subarray(0, maxKept - this.#kept) : chunk;
      this.#chunks.push(piece);
      this.#kept += piece.length;
    }
    if (result.bytesReceived > maxKept) {
      result.truncated = true;
      this.#finish(now);
      return;
    }
    if (this.#idleTimer === undefined) {
      this.#idleTimer = setTimeout(() => this.#finish(this.#lastByteAt), this.#idleMs);
    } else this.#idleTimer.refresh();
  }

  #onError(err: NodeJS.ErrnoException): void {
    const code = err.code ?? 'EUNKNOWN';
    // A reset after a reply usually means the peer closed with our data unread: the reply stands.
    if (code === 'ECONNRESET' && this.#result.bytesReceived > 0) {
      this.#finish(this.#lastByteAt);
      return;
    }
    const message = this.#result.connected
      ? `${code} from ${this.#target} after connecting`
      : `connect ${code} ${this.#target}`;
    this.#finish(performance.now(), { code, message });
  }
}
