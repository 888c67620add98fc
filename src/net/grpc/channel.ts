import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { isIP, type Socket } from 'node:net';
import {
  connect as tlsConnect,
  createSecureContext,
  DEFAULT_CIPHERS,
  rootCertificates,
  type SecureContext,
} from 'node:tls';
import {
  CallCredentials,
  ChannelCredentials,
  type ChannelOptions,
  Client,
  connectivityState,
  Metadata,
  type ServiceError,
  type StatusObject,
} from '@grpc/grpc-js';
import type { SecureConnector, SecureConnectResult } from '@grpc/grpc-js/build/src/channel-credentials.js';
import type { Certificate } from '../../protocol/http-result.js';
import { summarizeCertificate } from '../http/certificate.js';

/**
 * Cipher suites offered: Node's default without finite-field Diffie-Hellman, whose modular
 * exponentiation (the server picks the group's size) would run on the event loop.
 */
const CLIENT_CIPHERS = `${DEFAULT_CIPHERS}:!kDHE`;
/** Key-exchange groups offered (TLS 1.3 too): elliptic curves only, for the same reason. */
const CLIENT_GROUPS = 'X25519:P-256:P-384:P-521';

/** Default of {@link GrpcChannelOptions.maxReceiveBytes}: 1 MiB per response message. */
export const DEFAULT_GRPC_MAX_RECEIVE_BYTES = 1024 * 1024;
/** Default of {@link GrpcChannelOptions.maxMetadataBytes}: 64 KiB of response headers or trailers. */
export const DEFAULT_GRPC_MAX_METADATA_BYTES = 64 * 1024;

/** Where and how a {@link GrpcChannel} connects. */
export type GrpcChannelOptions = {
  /** The resolved IP address to connect to (names are resolved by the caller, src/net/resolve.ts). */
  address: string;
  port: number;
  /** The host as the check names it: the `:authority`, the TLS server name and the name the certificate must match. */
  host: string;
  /** TLS (h2 over TLS); false: plaintext HTTP/2 (h2c). */
  tls: boolean;
  /** With TLS, connect whatever the certificate (untrusted, expired, another name); it is still summarized. */
  skipSSL: boolean;
  /** CA certificates (PEM) trusted besides Node's bundled roots. */
  extraCa?: readonly string[];
  /** Longest response message accepted, bytes; a longer one ends the call with RESOURCE_EXHAUSTED. Default 1 MiB. */
  maxReceiveBytes?: number;
  /** Largest header or trailer block accepted, bytes. Default 64 KiB. */
  maxMetadataBytes?: number;
};

/**
 * How the one connection of a channel was made. Times are performance.now() milliseconds; null when
 * the step did not happen (yet).
 */
export type GrpcConnectionTimes = {
  /** connect() was called. */
  startedAt: number | null;
  /** The TCP socket was created (the handshake's start); null when not seen. */
  tcpStartedAt: number | null;
  /** The TCP handshake completed. */
  tcpConnectedAt: number | null;
  /** The TLS handshake completed (null without TLS). */
  secureAt: number | null;
  /** The channel became READY (HTTP/2 settings exchanged). */
  readyAt: number | null;
};

/** What one unary call saw. Times are performance.now() milliseconds. */
export type GrpcUnaryResult = {
  /** The gRPC status code (0 OK, 4 DEADLINE_EXCEEDED, 5 NOT_FOUND, 14 UNAVAILABLE, …). */
  code: number;
  /** The status details (`grpc-message`), or grpc-js's reason for a status it made itself. */
  details: string;
  /** The response message's bytes; null when the call did not return one. */
  response: Buffer | null;
  /** Response headers then trailers, as received (binary values base64). */
  metadata: { key: string; value: string }[];
  /** The response headers (or a trailers-only answer) arrived; null when none came. */
  firstResponseAt: number | null;
  /** The call ended. */
  endedAt: number;
};

/**
 * When each client socket was created (performance.now() ms), recorded while a channel connects: grpc-js
 * opens its TCP connection itself, and the connector only sees the socket once connected, so the TCP
 * handshake's start comes from Node's `net.client.socket` diagnostics channel (published as `net.connect`
 * creates the socket). Keyed by the socket itself: no run can take another's.
 */
const socketCreatedAt = new WeakMap<object, number>();
let watchers = 0;
const onClientSocket = (message: unknown) => {
  const socket = (message as { socket?: unknown } | null)?.socket;
  if (typeof socket === 'object' && socket !== null) socketCreatedAt.set(socket, performance.now());
};
/** Records socket creation times until the returned function is called (once). */
function watchSocketCreation(): () => void {
  if (watchers++ === 0) subscribe('net.client.socket', onClientSocket);
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    if (--watchers === 0) unsubscribe('net.client.socket', onClientSocket);
  };
}

/** The serializer of raw bytes: messages are encoded and decoded by the caller. */
const identity = (bytes: Buffer): Buffer => bytes;

/** Longest kept metadata value, characters; longer ones are cut and end with `…`. */
const MAX_METADATA_VALUE_CHARS = 4096;
/** Most metadata entries kept per call. */
const MAX_METADATA_ENTRIES = 64;

/** `metadata` as key/value pairs, at most MAX_METADATA_ENTRIES, binary values in base64, long values cut. */
export function metadataEntries(metadata: Metadata | null | undefined): { key: string; value: string }[] {
  const out: { key: string; value: string }[] = [];
  if (!metadata) return out;
  for (const [key, values] of Object.entries(metadata.toJSON())) {
    for (const value of values) {
      if (out.length >= MAX_METADATA_ENTRIES) return out;
      const text = typeof value === 'string' ? value : Buffer.from(value).toString('base64');
      out.push({
        key,
        value: text.length > MAX_METADATA_VALUE_CHARS ? `${text.slice(0, MAX_METADATA_VALUE_CHARS)}…` : text,
      });
    }
  }
  return out;
}

/**
 * Credentials whose connector is ours: it records when the TCP and TLS handshakes end and keeps
 * the TLS socket's certificate summary, which grpc-js does not expose. TLS is Node's, offering
 * `h2` by ALPN, elliptic-curve key exchange only, sessions never resumed.
 */
class MeasuredCredentials extends ChannelCredentials {
  readonly #channel: GrpcChannel;
  readonly #secureContext: SecureContext | null;
  constructor(channel: GrpcChannel, secureContext: SecureContext | null) {
    super();
    this.#channel = channel;
    this.#secureContext = secureContext;
  }
  override compose(): ChannelCredentials {
    throw new Error('per-call credentials are not supported');
  }
  _isSecure(): boolean {
    return this.#secureContext !== null;
  }
  _equals(other: ChannelCredentials): boolean {
    return other === this;
  }
  _createSecureConnector(
    _target: unknown,
    _options: ChannelOptions,
    callCredentials?: CallCredentials,
  ): SecureConnector {
    const channel = this.#channel;
    const secureContext = this.#secureContext;
    const credentials = callCredentials ?? CallCredentials.createEmpty();
    return {
      connect: (socket: Socket): Promise<SecureConnectResult> => {
        if (channel.times.tcpConnectedAt === null) {
          channel.times.tcpConnectedAt = performance.now();
          channel.times.tcpStartedAt = socketCreatedAt.get(socket) ?? null;
          channel.stopWatchingSockets();
        }
        if (secureContext === null) return Promise.resolve({ socket, secure: false });
        return channel.secureConnect(socket, secureContext);
      },
      waitForReady: () => Promise.resolve(),
      getCallCredentials: () => credentials,
      destroy: () => {},
    };
  }
}

/**
 * One gRPC channel to one address, over one connection of its own (never shared with another
 * channel: `grpc.use_local_subchannel_pool`), with measured handshakes, bounded messages and
 * metadata, no retries. Calls carry raw message bytes: encoding is the caller's.
 */
export class GrpcChannel {
  readonly options: GrpcChannelOptions;
  readonly client: Client;
  readonly times: GrpcConnectionTimes = {
    startedAt: null,
    tcpStartedAt: null,
    tcpConnectedAt: null,
    secureAt: null,
    readyAt: null,
  };
  #stopWatching: (() => void) | null = null;
  /** The server's certificate (TLS only), once the handshake ended; null before or without one. */
  certificate: Certificate | null = null;
  /** TLS version negotiated (`TLSv1.3`), null without TLS. */
  tlsProtocol: string | null = null;
  /** Why the connection could not be made (TCP or TLS), once it failed; null otherwise. */
  connectError: string | null = null;

  /**
   * @throws Error from OpenSSL when a PEM in `extraCa` cannot be loaded.
   */
  constructor(options: GrpcChannelOptions) {
    this.options = options;
    const extraCa = options.extraCa ?? [];
    const secureContext = options.tls
      ? createSecureContext({
          ...(extraCa.length > 0 ? { ca: [...rootCertificates, ...extraCa] } : {}),
          ciphers: CLIENT_CIPHERS,
          ecdhCurve: CLIENT_GROUPS,
        })
      : null;
    const bracketed = options.address.includes(':') ? `[${options.address}]` : options.address;
    const hostForAuthority = isIP(options.host) === 6 ? `[${options.host}]` : options.host;
    const channelOptions: ChannelOptions = {
      'grpc.default_authority': `${hostForAuthority}:${options.port}`,
      'grpc.use_local_subchannel_pool': 1,
      'grpc.enable_retries': 0,
      'grpc.max_receive_message_length': options.maxReceiveBytes ?? DEFAULT_GRPC_MAX_RECEIVE_BYTES,
      'grpc.max_metadata_size': options.maxMetadataBytes ?? DEFAULT_GRPC_MAX_METADATA_BYTES,
      'grpc.max_send_message_length': 4 * 1024 * 1024,
      'grpc.enable_channelz': 0,
      'grpc.keepalive_time_ms': 60 * 60 * 1000,
    };
    const target = `${options.address.includes(':') ? 'ipv6' : 'ipv4'}:${bracketed}:${options.port}`;
    this.client = new Client(target, new MeasuredCredentials(this, secureContext), channelOptions);
  }

  /** Starts connecting and records when the channel becomes READY. Idempotent. */
  connect(): void {
    if (this.times.startedAt !== null) return;
    this.times.startedAt = performance.now();
    this.#stopWatching = watchSocketCreation();
    const channel = this.client.getChannel();
    const watch = (state: connectivityState) => {
      if (state === connectivityState.READY) {
        this.times.readyAt ??= performance.now();
        return;
      }
      if (state === connectivityState.SHUTDOWN) return;
      channel.watchConnectivityState(state, Number.POSITIVE_INFINITY, () =>
        watch(channel.getConnectivityState(false)),
      );
    };
    watch(channel.getConnectivityState(true));
  }

  /** TLS over `socket` (the connector's step); records the time, the certificate and any failure. */
  secureConnect(socket: Socket, secureContext: SecureContext): Promise<SecureConnectResult> {
    const { host, skipSSL } = this.options;
    return new Promise((resolve, reject) => {
      const tlsSocket = tlsConnect({
        socket,
        secureContext,
        host,
        // An IP literal is not a server name (RFC 6066 §3); the certificate is still checked against it.
        ...(isIP(host) === 0 ? { servername: host } : {}),
        ALPNProtocols: ['h2'],
        rejectUnauthorized: false,
      });
      tlsSocket.once('secureConnect', () => {
        this.times.secureAt = performance.now();
        this.certificate = summarizeCertificate(tlsSocket);
        this.tlsProtocol = tlsSocket.getProtocol() ?? null;
        if (!skipSSL && !tlsSocket.authorized) {
          const error = tlsSocket.authorizationError as unknown;
          this.connectError = `TLS: certificate not trusted (${String((error as { code?: string })?.code ?? error)})`;
          tlsSocket.destroy();
          reject(new Error(this.connectError));
          return;
        }
        if (tlsSocket.alpnProtocol !== 'h2') {
          this.connectError = 'TLS: the server did not agree to HTTP/2 (ALPN h2)';
          tlsSocket.destroy();
          reject(new Error(this.connectError));
          return;
        }
        resolve({ socket: tlsSocket, secure: true });
      });
      tlsSocket.once('error', (err: Error & { code?: string }) => {
        this.connectError ??= `TLS: ${err.code ?? err.message}`;
        reject(err);
      });
    });
  }

  /**
   * One unary call of `path` (`/pkg.Service/Method`) with `request` (the encoded message) and
   * `metadata`, ending at `deadline` (Date.now() milliseconds) with DEADLINE_EXCEEDED. Never rejects:
   * a failed call is a result with its status.
   */
  unary(
    path: string,
    request: Buffer,
    metadata: Metadata,
    deadline: number,
    signal: AbortSignal,
  ): Promise<GrpcUnaryResult> {
    this.connect();
    return new Promise((resolve) => {
      let headers: Metadata | null = null;
      let firstResponseAt: number | null = null;
      let response: Buffer | null = null;
      let status: StatusObject | null = null;
      let settled = false;
      const finish = () => {
        if (settled || status === null) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        resolve({
          code: status.code,
          details: status.details,
          response,
          metadata: [...metadataEntries(headers), ...metadataEntries(status.metadata)].slice(
            0,
            MAX_METADATA_ENTRIES,
          ),
          firstResponseAt,
          endedAt: performance.now(),
        });
      };
      const call = this.client.makeUnaryRequest<Buffer, Buffer>(
        path,
        identity,
        identity,
        request,
        metadata,
        { deadline },
        (err: ServiceError | null, value?: Buffer) => {
          if (err === null && value !== undefined) response = value;
          if (err !== null && status === null)
            status = { code: err.code, details: err.details, metadata: err.metadata };
          finish();
        },
      );
      const onAbort = () => call.cancel();
      signal.addEventListener('abort', onAbort, { once: true });
      call.on('metadata', (received: Metadata) => {
        headers = received;
        firstResponseAt ??= performance.now();
      });
      call.on('status', (received: StatusObject) => {
        status = received;
        // A trailers-only answer (an error without headers) is the first response too.
        firstResponseAt ??= performance.now();
        // The callback runs after the status; finish() waits for it to keep the message.
        setImmediate(finish);
      });
    });
  }

  /** Stops recording socket creation times (once the connection's socket was seen, or on close). */
  stopWatchingSockets(): void {
    this.#stopWatching?.();
  }

  /** Closes the channel and its connection. */
  close(): void {
    this.stopWatchingSockets();
    this.client.close();
  }
}

/** Metadata to send from key/value pairs; keys ending `-bin` take base64 values. @throws Error for an invalid key or value. */
export function outgoingMetadata(entries: readonly { key: string; value: string }[]): Metadata {
  const metadata = new Metadata();
  for (const { key, value } of entries) {
    const name = key.toLowerCase();
    if (name.endsWith('-bin')) metadata.add(name, Buffer.from(value, 'base64'));
    else metadata.add(name, value);
  }
  return metadata;
}
