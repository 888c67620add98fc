import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { type DecodedPacket, decode } from 'dns-packet';
import { DnsQueryError, socketError } from './errors.js';

/** One query to send and how to recognise its answer. */
export type ExchangeRequest = {
  /** Name server IP address (a zone index is allowed for link-local IPv6). */
  address: string;
  family: 4 | 6;
  port: number;
  /** The encoded query, without the TCP length prefix. */
  message: Buffer;
  /** The query's 16-bit id: a packet with another id is not our answer. */
  id: number;
  /** Whether a decoded packet with our id answers our question; others are ignored. */
  matches: (packet: DecodedPacket) => boolean;
  /** Aborts the exchange; it then rejects with `signal.reason`. */
  signal: AbortSignal;
};

/** An answer and its timing. */
export type Exchange = {
  packet: DecodedPacket;
  /** From just before the query was written to the socket to the answer's arrival, ms (dig's "Query time"). */
  responseTimeMs: number;
  /** Size of the answer's DNS message, bytes (TCP length prefix excluded). */
  sizeBytes: number;
  /** performance.now() just before the query was written, ms. */
  sentAt: number;
  /** performance.now() when the answer arrived, ms. */
  arrivedAt: number;
};

/** Wires up one exchange: settles once, runs `cleanup` once, and rejects on abort. */
function settleOnce<T>(
  signal: AbortSignal,
  start: (done: { resolve: (value: T) => void; reject: (err: unknown) => void }) => () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    let settled = false;
    let cleanup: () => void = () => {};
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      cleanup();
      fn();
    };
    const onAbort = () => finish(() => reject(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    cleanup = start({
      resolve: (value) => finish(() => resolve(value)),
      reject: (err) => finish(() => reject(err)),
    });
  });
}

/**
 * Our answer among received bytes, or null to keep waiting: another id or question (late or
 * spoofed) is skipped; a message with our id that does not parse is a DnsQueryError EBADRESP.
 */
function ourAnswer(request: ExchangeRequest, bytes: Buffer, where: string): DecodedPacket | null {
  if (bytes.length < 2 || bytes.readUInt16BE(0) !== request.id) return null;
  let packet: DecodedPacket;
  try {
    packet = decode(bytes);
  } catch (err) {
    throw new DnsQueryError('EBADRESP', `malformed answer from ${where}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return packet.flag_qr && request.matches(packet) ? packet : null;
}

/**
 * Sends one query over UDP (RFC 1035 §4.2.1) from a fresh socket with a random source port,
 * `connect()`ed so that an ICMP port unreachable surfaces as ECONNREFUSED. Resolves with the
 * first matching answer; rejects with a DnsQueryError on a socket error or a malformed answer.
 */
export function exchangeUdp(request: ExchangeRequest): Promise<Exchange> {
  const where = `${request.address} port ${request.port} (UDP)`;
  return settleOnce<Exchange>(request.signal, ({ resolve, reject }) => {
    const socket = createSocket(request.family === 6 ? 'udp6' : 'udp4');
    let sentAt = 0;
    socket.on('error', (err) => reject(socketError(err, where)));
    socket.on('message', (bytes) => {
      const arrivedAt = performance.now();
      try {
        const packet = ourAnswer(request, bytes, where);
        if (packet)
          resolve({ packet, responseTimeMs: arrivedAt - sentAt, sizeBytes: bytes.length, sentAt, arrivedAt });
      } catch (err) {
        reject(err);
      }
    });
    socket.connect(request.port, request.address, () => {
      sentAt = performance.now();
      socket.send(request.message, (err) => {
        if (err) reject(socketError(err, where));
      });
    });
    return () => {
      try {
        socket.close();
      } catch {
        // Already closed after a socket error.
      }
    };
  });
}

/**
 * Sends one query over TCP with the 2-byte length prefix (RFC 1035 §4.2.2, RFC 7766).
 * The clock starts when the connection is up and the query is written, as in dig.
 * Rejects with a DnsQueryError on a socket error, a malformed answer, or a connection the
 * server closes before answering (ECONNRESET).
 */
export function exchangeTcp(request: ExchangeRequest): Promise<Exchange> {
  const where = `${request.address} port ${request.port} (TCP)`;
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16BE(request.message.length);
  return settleOnce<Exchange>(request.signal, ({ resolve, reject }) => {
    const socket = connect({
      host: request.address,
      port: request.port,
      family: request.family,
      noDelay: true,
    });
    let sentAt = 0;
    let buffered = Buffer.alloc(0);
    socket.on('error', (err) => reject(socketError(err, where)));
    socket.on('connect', () => {
      sentAt = performance.now();
      socket.write(Buffer.concat([prefix, request.message]));
    });
    socket.on('data', (chunk) => {
      const arrivedAt = performance.now();
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      try {
        while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
          const length = buffered.readUInt16BE(0);
          const packet = ourAnswer(request, buffered.subarray(2, 2 + length), where);
          buffered = buffered.subarray(2 + length);
          if (packet) {
            resolve({ packet, responseTimeMs: arrivedAt - sentAt, sizeBytes: length, sentAt, arrivedAt });
            return;
          }
        }
      } catch (err) {
        reject(err);
      }
    });
    socket.on('end', () =>
      reject(new DnsQueryError('ECONNRESET', `ECONNRESET: ${where} closed the connection before answering`)),
    );
    return () => socket.destroy();
  });
}
