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
  const started = performance.now();
  const maxKept = options.maxKeptBytes ?? DEFAULT_MAX_KEPT_BYTES;
  // setTimeout fires at once beyond 2^31 − 1 ms: a huge idle wait means "until close or deadline".
  const idleMs = Math.min(options.replyIdleMs ?? DEFAULT_REPLY_IDLE_MS, 2 ** 31 - 1);
  const target = options.address.includes(':')
    ? `[${options.address}]:${options.port}`
    : `${options.address}:${options.port}`;
  const chunks: Buffer[] = [];
  let kept = 0;
  const result: TcpProbeResult = {
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
  let lastByteAt = started;

  return new Promise<TcpProbeResult>((resolve) => {
    let settled = false;
    let idleTimer: NodeJS.Timeout | undefined;
    const socket: Socket = connect({ host: options.address, port: options.port, noDelay: true });

    const finish = (endAt: number, failure?: { code: string; message: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadlineTimer);
      clearTimeout(idleTimer);
      options.signal.removeEventListener('abort', onAbort);
      socket.destroy();
      if (failure) {
        result.errorCode = failure.code;
        result.errorMessage = failure.message;
      }
      if (!result.connected) result.connectMs = endAt - started;
      result.endMs = endAt - started;
      result.reply = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, kept);
      resolve(result);
    };

    const onAbort = () => {
      result.aborted = true;
      finish(performance.now(), { code: 'ABORT_ERR', message: `aborted while talking to ${target}` });
    };

    const deadlineTimer = setTimeout(
      () => {
        const waitedMs = Math.round(performance.now() - started);
        if (!result.connected) {
          finish(performance.now(), {
            code: 'ETIMEDOUT',
            message: `connect ETIMEDOUT ${target}: no answer within ${waitedMs} ms`,
          });
        } else if (result.bytesReceived === 0) {
          finish(performance.now(), {
            code: 'ETIMEDOUT',
            message: `no reply from ${target} within ${waitedMs} ms`,
          });
        } else {
          // A reply that keeps coming until the deadline: judge what arrived.
          finish(performance.now());
        }
      },
      Math.max(0, options.deadline - started),
    );

    if (options.signal.aborted) return onAbort();
    options.signal.addEventListener('abort', onAbort, { once: true });

    socket.once('connect', () => {
      const now = performance.now();
      result.connected = true;
      result.connectMs = now - started;
      if (options.data !== null && options.data.length > 0) {
        socket.write(options.data);
        result.bytesSent = options.data.length;
      }
      if (!options.readReply) finish(now);
    });

    socket.on('data', (chunk: Buffer) => {
      const now = performance.now();
      result.firstByteMs ??= now - started;
      lastByteAt = now;
      result.bytesReceived += chunk.length;
      if (kept < maxKept) {
        const piece = kept + chunk.length > maxKept ? chunk.subarray(0, maxKept - kept) : chunk;
        chunks.push(piece);
        kept += piece.length;
      }
      if (result.bytesReceived > maxKept) {
        result.truncated = true;
        return finish(now);
      }
      if (idleTimer === undefined) idleTimer = setTimeout(() => finish(lastByteAt), idleMs);
      else idleTimer.refresh();
    });

    // The peer closed its side: the reply is complete.
    socket.once('end', () => finish(result.bytesReceived > 0 ? lastByteAt : performance.now()));

    socket.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? 'EUNKNOWN';
      // A reset after a reply usually means the peer closed with our data unread: the reply stands.
      if (code === 'ECONNRESET' && result.bytesReceived > 0) return finish(lastByteAt);
      const message = result.connected
        ? `${code} from ${target} after connecting`
        : `connect ${code} ${target}`;
      finish(performance.now(), { code, message });
    });
    socket.once('close', () => finish(result.bytesReceived > 0 ? lastByteAt : performance.now()));
  });
}
