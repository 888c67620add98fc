import type { Socket } from 'node:net';
import { createSecureContext, rootCertificates, type TLSSocket } from 'node:tls';
import { buildConnector } from 'undici';
import type { Certificate, HttpConnection } from '../../protocol/http-result.js';
import type { ResolvedAddress } from '../resolve.js';
import { summarizeCertificate } from './certificate.js';

/**
 * What happened on the way to one response, as performance.now() milliseconds. Filled by the
 * tracing connector (socket, lookup, connect, secureConnect) and the request handler (response, end).
 */
export type HopTrace = {
  startAt: number;
  /** undici asked for a connection. */
  socketAt: number | null;
  lookupAt: number | null;
  connectAt: number | null;
  /** TLS handshake done (https only). */
  secureConnectAt: number | null;
  /** First byte of the response parsed. */
  responseAt: number | null;
  /** Body ended (or reading stopped at the cap). */
  endAt: number | null;
  resolved: ResolvedAddress | null;
  /**
   * The connection this hop opened or tried to open: the resolved address and the port
   * undici asked for (the hop URL's port or its scheme's default). Null until a socket is made.
   */
  connection: HttpConnection | null;
  certificate: Certificate | null;
  /** The TLS session was resumed: must stay false, the TLS phase would be too short. */
  tlsSessionReused: boolean;
  /** Sockets opened for this hop: destroyed when it ends, also mid-handshake. */
  sockets: Socket[];
  /** The hop has ended: a late DNS answer must not open a socket. */
  closed: boolean;
  /** Code of the first error a socket of this hop saw (ECONNRESET, …); null without one. */
  socketError: string | null;
};

/** A fresh trace starting now. */
export function startTrace(): HopTrace {
  return {
    startAt: performance.now(),
    socketAt: null,
    lookupAt: null,
    connectAt: null,
    secureConnectAt: null,
    responseAt: null,
    endAt: null,
    resolved: null,
    connection: null,
    certificate: null,
    tlsSessionReused: false,
    sockets: [],
    closed: false,
    socketError: null,
  };
}

/** Options of {@link createTracingConnector}. */
export type TracingConnectorOptions = {
  /**
   * undici's `buildConnector(...)`, built once per executor with `maxCachedSessions: 0`,
   * `rejectUnauthorized: false` and `timeout: 0` (deadlines are the caller's).
   */
  base: buildConnector.connector;
  /** Resolves a hostname (our resolver: c-ares or the OS, per `useOsDnsResolver`). */
  resolve: (hostname: string) => Promise<ResolvedAddress>;
  /** Accept a certificate that did not verify. It is still reported, with `authorized: false`. */
  skipSSL: boolean;
};

/** undici's buildConnector returns the socket it creates (lib/core/connect.js); its types say void. */
type SocketReturningConnector = (
  options: buildConnector.Options,
  callback: buildConnector.Callback,
) => Socket | TLSSocket;

/** The port undici's connector dials (lib/core/connect.js): the URL's, else the scheme's default. */
function portOf(options: buildConnector.Options): number {
  const port = Number(options.port);
  if (Number.isInteger(port) && port > 0) return port;
  return options.protocol === 'https:' ? 443 : 80;
}

/**
 * The connection of a request's final hop for its result (`httpCheckResult.connection`): the
 * remote address and port that hop dialled, never assembled from different hops. Null when
 * the hop never got as far as opening a socket (a DNS failure, a bad URL).
 */
export function connectionOf(trace: HopTrace): HttpConnection | null {
  return trace.connection === null ? null : { ...trace.connection };
}

function certificateError(code: string, host: string): Error {
  return Object.assign(new Error(`certificate of ${host} rejected: ${code}`), { code });
}

/**
 * An undici connector that resolves with our resolver, connects through `base`, and records
 * into `trace` when DNS, TCP and TLS finish, and the server certificate. TLS always connects
 * with `rejectUnauthorized: false` so the certificate can be reported even when it fails;
 * without `skipSSL` an unverified certificate then fails the connection with its code
 * (CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID, …) before a byte of the request is sent.
 */
export function createTracingConnector(
  options: TracingConnectorOptions,
  trace: HopTrace,
): buildConnector.connector {
  const base = options.base as unknown as SocketReturningConnector;
  return (connectOptions, callback) => {
    // undici connects again when a socket dies before the response (and re-sends an idempotent
    // request). A monitor must see that failure, not hide it behind a second connection.
    if (trace.sockets.length > 0) {
      const code = trace.socketError ?? 'ECONNRESET';
      callback(
        Object.assign(new Error(`the connection failed (${code}); a check never reconnects`), { code }),
        null,
      );
      return;
    }
    trace.socketAt = performance.now();
    options.resolve(connectOptions.hostname).then(
      (resolved) => {
        trace.lookupAt = performance.now();
        trace.resolved = resolved;
        if (trace.closed) {
          callback(Object.assign(new Error('request ended before connecting'), { code: 'ABORT_ERR' }), null);
          return;
        }
        // undici builds these options for this call only: pointing them at the address is safe.
        connectOptions.hostname = resolved.address;
        let socket: Socket;
        try {
          socket = base(connectOptions, onConnected);
        } catch (err) {
          // net.connect throws for options it rejects; inside this .then() that would go unhandled.
          callback(err as Error, null);
          return;
        }
        trace.sockets.push(socket);
        trace.connection = {
          protocol: 'tcp',
          family: resolved.family,
          remoteAddress: resolved.address,
          remotePort: portOf(connectOptions),
        };
        socket.once('error', (err: NodeJS.ErrnoException) => {
          trace.socketError ??= err.code ?? err.name;
        });
        socket.once('connect', () => {
          trace.connectAt = performance.now();
        });
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), null),
    );

    function onConnected(err: Error | null, connected: Socket | TLSSocket | null): void {
      if (err !== null || connected === null) {
        callback(err ?? new Error('no socket'), null);
        return;
      }
      const tls = connected as TLSSocket;
      if (tls.encrypted) {
        trace.secureConnectAt = performance.now();
        trace.certificate = summarizeCertificate(tls);
        trace.tlsSessionReused = tls.isSessionReused();
        if (!options.skipSSL && !tls.authorized) {
          tls.destroy();
          const code = String(tls.authorizationError ?? 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
          callback(certificateError(code, connectOptions.host ?? connectOptions.hostname), null);
          return;
        }
      }
      callback(null, connected);
    }
  };
}

/** Statuses whose `Location` a check follows when it follows redirects. */
export const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/**
 * The base connector of HTTP checks (see TracingConnectorOptions.base): TLS sessions never
 * resumed (`maxCachedSessions: 0`, so every run measures a whole handshake), certificates
 * verified by the tracing connector rather than refused here (`rejectUnauthorized: false`),
 * no timeout of its own and no keep-alive. `trust` is Node's bundled roots plus `extraCa`
 * (PEM); `clientCertificate` is presented for mTLS. Build one per trust set and reuse it:
 * a TLS context costs more than a handshake.
 *
 * @throws Error from OpenSSL when a PEM, key or passphrase cannot be loaded.
 */
export function createCheckConnector(
  extraCa: readonly string[] = [],
  clientCertificate?: { cert: string; key: string; passphrase?: string },
): buildConnector.connector {
  const secureContext = createSecureContext({
    ...(extraCa.length > 0 ? { ca: [...rootCertificates, ...extraCa] } : {}),
    ...(clientCertificate ?? {}),
  });
  return buildConnector({
    maxCachedSessions: 0,
    rejectUnauthorized: false,
    secureContext,
    timeout: 0,
    keepAlive: false,
  });
}
