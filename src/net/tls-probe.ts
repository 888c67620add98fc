import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import {
  checkServerIdentity,
  connect,
  type ConnectionOptions,
  DEFAULT_CIPHERS,
  type TLSSocket,
} from 'node:tls';
import { domainToASCII } from 'node:url';
import type { Certificate } from '../protocol/http-result.js';
import { summarizeCertificate } from './http/certificate.js';

/** Default of {@link TlsProbeOptions.port}: HTTPS. */
export const DEFAULT_TLS_PROBE_PORT = 443;

/** Default of {@link TlsProbeOptions.timeoutMs}: 10 s for resolving, connecting and the handshake together. */
export const DEFAULT_TLS_PROBE_TIMEOUT_MS = 10_000;

/** Longest domain name DNS allows, in characters (RFC 1035 §2.3.4, without the trailing dot). */
const MAX_DOMAIN_CHARS = 253;

/** Labels of letters, digits, `-` and `_` (some certificates' hosts carry one) separated by dots. */
const HOSTNAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;

/**
 * Cipher suites the probe offers: Node's default without finite-field Diffie-Hellman. A server
 * choosing DHE decides the group's size (up to 10 000 bits in OpenSSL), and the client's modular
 * exponentiation runs on the event loop; elliptic-curve key exchange costs a fixed, small time.
 */
const PROBE_CIPHERS = `${DEFAULT_CIPHERS}:!kDHE`;

/** Key-exchange groups the probe offers (TLS 1.3 too): elliptic curves only, for the same reason. */
const PROBE_GROUPS = 'X25519:P-256:P-384:P-521';

/** Options of {@link probeCertificate}. */
export type TlsProbeOptions = {
  /** TCP port of the TLS server; default 443. */
  port?: number;
  /**
   * Milliseconds for the whole probe (name resolution, TCP connect, TLS handshake); default 10 000.
   * When it passes the socket is destroyed and the result carries the stage that did not finish.
   */
  timeoutMs?: number;
  /** Stops the probe at once: the result's error says it was aborted. */
  signal?: AbortSignal;
  /**
   * Resolves the domain (net.connect's `lookup`); default the OS resolver (getaddrinfo). Tests point
   * a domain at loopback with it.
   */
  lookup?: LookupFunction;
};

/** What {@link probeCertificate} read: the certificate, or why there is none (never both null). */
export type TlsProbeResult = {
  /** The server's certificate (expired or untrusted ones too: `authorized` and `daysRemaining` say so); null on failure. */
  certificate: Certificate | null;
  /** One line: why no certificate was read (refused domain, DNS, TCP, TLS, timeout, abort); null when one was. */
  error: string | null;
};

/**
 * The domain as the probe connects to it (lower case, punycode, no trailing dot), or why it is refused:
 * an IP literal in any form the resolver would accept (`127.0.0.1`, `[::1]`, `0x7f.1`), or anything
 * that is not a hostname (a scheme, a port, a path, spaces, more than 253 characters).
 */
export function probeDomain(domain: string): { host: string } | { refused: string } {
  const trimmed = domain.trim().replace(/\.$/, '');
  const bare = trimmed.replace(/^\[(.*)\]$/, '$1');
  if (isIP(bare) !== 0) return { refused: `${JSON.stringify(domain)} is an IP address, not a domain name` };
  // WHATWG host parsing turns numeric forms (`0x7f.1`, `2130706433`) into the IPv4 address getaddrinfo would use.
  const ascii = domainToASCII(trimmed);
  if (isIP(ascii) !== 0) return { refused: `${JSON.stringify(domain)} is an IP address, not a domain name` };
  if (ascii === '' || ascii.length > MAX_DOMAIN_CHARS || !HOSTNAME.test(ascii)) {
    return { refused: `${JSON.stringify(domain)} is not a domain name` };
  }
  return { host: ascii };
}

/** Options of {@link handshakeTls}. */
export type TlsHandshakeOptions = {
  /** Host to connect to: an address, or a name resolved with `lookup` (default getaddrinfo). */
  host: string;
  /** TCP port of the TLS server. */
  port: number;
  /** SNI name to send; null sends none (as for an IP address). */
  servername: string | null;
  /** Milliseconds for connecting and the handshake together; the socket is destroyed when it passes. */
  timeoutMs: number;
  /** Stops the handshake at once: the result's error says it was aborted. */
  signal?: AbortSignal;
  /** Resolves a name `host` (net.connect's `lookup`). */
  lookup?: LookupFunction;
  /** Trusted CA certificates (PEM) instead of Node's bundled roots; tests trust their own CA with it. */
  ca?: readonly string[];
  /** Ask the server to staple an OCSP response (status_request). Default false. */
  requestOCSP?: boolean;
  /** Label of the target in errors; default `host:port`. */
  label?: string;
};

/**
 * What a completed handshake showed, read before the socket is destroyed. The chain is verified against the
 * trusted CAs but the name is not (see {@link handshakeTls}): `authorizationError` is the chain's alone.
 */
export type TlsHandshake<T> = {
  /** What `read` took from the socket at the handshake's end, before it was destroyed. */
  read: T;
  /** The address connected to. */
  remoteAddress: string | null;
  /** Milliseconds from the start to the TCP connection, and from there to the handshake's end. */
  connectMs: number;
  handshakeMs: number;
  /** The stapled OCSP response the server sent (DER, not parsed); null when none. */
  ocspResponse: Buffer | null;
};

/**
 * One TLS handshake with `host:port` that never refuses a certificate (`rejectUnauthorized: false`): the
 * chain is verified against the trusted CAs and the result says how (`socket.authorized`,
 * `socket.authorizationError`), the server's name is not checked (the caller does, so an expired or
 * mismatched certificate is still read). Offers elliptic-curve key exchange only (see PROBE_CIPHERS). The
 * socket is destroyed right after the handshake (nothing is sent or read past it; OpenSSL bounds the
 * certificate chain a server may send to 100 KiB), when `timeoutMs` passes or `signal` aborts.
 *
 * Never rejects: a name that does not resolve, a refused or silent port, a failed handshake, the timeout and
 * an abort are `{ error }` in one line.
 */
export function handshakeTls<T>(
  options: TlsHandshakeOptions,
  read: (socket: TLSSocket) => T,
): Promise<TlsHandshake<T> | { error: string }> {
  const { host, port, timeoutMs, signal } = options;
  const target = options.label ?? `${host}:${port}`;
  if (signal?.aborted) return Promise.resolve({ error: `aborted before connecting to ${target}` });
  const t0 = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let connectedAt: number | null = null;
    let ocspResponse: Buffer | null = null;
    let socket: TLSSocket | undefined;

    const finish = (result: TlsHandshake<T> | { error: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket?.destroy();
      resolve(result);
    };
    const onAbort = () => {
      finish({
        error: `aborted while ${connectedAt !== null ? 'in the TLS handshake with' : 'connecting to'} ${target}`,
      });
    };
    const timer = setTimeout(() => {
      finish({
        error:
          connectedAt !== null
            ? `no TLS handshake with ${target} within ${timeoutMs} ms`
            : `no TCP connection to ${target} within ${timeoutMs} ms`,
      });
    }, timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });

    const connectOptions: ConnectionOptions = {
      host,
      port,
      rejectUnauthorized: false,
      // The name is checked by the caller: authorizationError stays the chain's.
      checkServerIdentity: () => undefined,
      ciphers: PROBE_CIPHERS,
      ecdhCurve: PROBE_GROUPS,
      ...(options.servername !== null ? { servername: options.servername } : {}),
      ...(options.lookup ? { lookup: options.lookup } : {}),
      ...(options.ca ? { ca: [...options.ca] } : {}),
      ...(options.requestOCSP ? { requestOCSP: true } : {}),
    };
    try {
      socket = connect(connectOptions);
    } catch (err) {
      // net.connect throws synchronously for options it rejects (a port out of range).
      finish({ error: `cannot connect to ${target}: ${(err as Error).message}` });
      return;
    }
    socket.once('connect', () => {
      connectedAt = performance.now();
    });
    socket.once('OCSPResponse', (response: Buffer) => {
      ocspResponse = response;
    });
    socket.once('secureConnect', () => {
      const tls = socket as TLSSocket;
      const now = performance.now();
      const connected = connectedAt ?? now;
      let value: T;
      try {
        value = read(tls);
      } catch (err) {
        finish({ error: `reading the TLS handshake with ${target} failed: ${(err as Error).message}` });
        return;
      }
      const handshake: TlsHandshake<T> = {
        read: value,
        remoteAddress: tls.remoteAddress ?? null,
        connectMs: connected - t0,
        handshakeMs: now - connected,
        ocspResponse,
      };
      finish(handshake);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      const stage = connectedAt !== null ? 'TLS handshake with' : 'connecting to';
      finish({ error: `${stage} ${target} failed: ${err.message}` });
    });
    socket.once('close', () => {
      finish({ error: `${target} closed the connection before the TLS handshake ended` });
    });
  });
}

/**
 * Reads the certificate `domain` serves: one TLS connection to `domain:port` with SNI set to the
 * domain (see {@link handshakeTls}), verified against Node's bundled roots and the domain's name but
 * never refused, so an expired, self-signed or mismatched certificate is still read and its
 * `authorized`/`authorizationError` report the verification (the chain's error first, else the name's).
 *
 * Never rejects: a refused domain (an IP literal or not a hostname), a name that does not
 * resolve, a refused or silent port, a failed handshake, the timeout and an abort are results
 * with a null certificate and the error in one line.
 */
export async function probeCertificate(
  domain: string,
  options: TlsProbeOptions = {},
): Promise<TlsProbeResult> {
  const parsed = probeDomain(domain);
  if ('refused' in parsed) return { certificate: null, error: parsed.refused };
  const host = parsed.host;
  const port = options.port ?? DEFAULT_TLS_PROBE_PORT;
  const handshake = await handshakeTls(
    {
      host,
      port,
      servername: host,
      timeoutMs: options.timeoutMs ?? DEFAULT_TLS_PROBE_TIMEOUT_MS,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.lookup ? { lookup: options.lookup } : {}),
    },
    (socket) => ({ certificate: summarizeCertificate(socket), peer: socket.getPeerCertificate(false) }),
  );
  if ('error' in handshake) return { certificate: null, error: handshake.error };
  const { certificate, peer } = handshake.read;
  if (certificate === null) {
    return { certificate: null, error: `${host}:${port} completed the TLS handshake without a certificate` };
  }
  if (certificate.authorizationError === null) {
    const mismatch = checkServerIdentity(host, peer);
    if (mismatch) {
      certificate.authorized = false;
      certificate.authorizationError = String((mismatch as { code?: string }).code ?? mismatch.message);
    }
  }
  return { certificate, error: null };
}
