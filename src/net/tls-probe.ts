import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { connect, DEFAULT_CIPHERS, type TLSSocket } from 'node:tls';
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

/**
 * Reads the certificate `domain` serves: one TLS connection to `domain:port` with SNI set to the
 * domain, verified against Node's bundled roots and the domain's name but never refused
 * (`rejectUnauthorized: false`), so an expired, self-signed or mismatched certificate is still
 * read and its `authorized`/`authorizationError` report the verification. The socket is destroyed
 * right after the handshake (nothing is sent or read past it; OpenSSL bounds the certificate
 * chain a server may send to 100 KiB) and when `timeoutMs` passes or `signal` aborts.
 *
 * Never rejects: a refused domain (an IP literal or not a hostname), a name that does not
 * resolve, a refused or silent port, a failed handshake, the timeout and an abort are results
 * with a null certificate and the error in one line.
 */
export function probeCertificate(domain: string, options: TlsProbeOptions = {}): Promise<TlsProbeResult> {
  const parsed = probeDomain(domain);
  if ('refused' in parsed) return Promise.resolve({ certificate: null, error: parsed.refused });
  const host = parsed.host;
  const port = options.port ?? DEFAULT_TLS_PROBE_PORT;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TLS_PROBE_TIMEOUT_MS;
  const target = `${host}:${port}`;
  const signal = options.signal;
  if (signal?.aborted)
    return Promise.resolve({ certificate: null, error: `aborted before connecting to ${target}` });

  return new Promise<TlsProbeResult>((resolve) => {
    let settled = false;
    let tcpConnected = false;
    let socket: TLSSocket | undefined;

    const finish = (result: TlsProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket?.destroy();
      resolve(result);
    };
    const onAbort = () => {
      finish({
        certificate: null,
        error: `aborted while ${tcpConnected ? 'in the TLS handshake with' : 'connecting to'} ${target}`,
      });
    };
    const timer = setTimeout(() => {
      finish({
        certificate: null,
        error: tcpConnected
          ? `no TLS handshake with ${target} within ${timeoutMs} ms`
          : `no TCP connection to ${target} within ${timeoutMs} ms`,
      });
    }, timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });

    try {
      socket = connect({
        host,
        port,
        servername: host,
        rejectUnauthorized: false,
        ciphers: PROBE_CIPHERS,
        ecdhCurve: PROBE_GROUPS,
        ...(options.lookup ? { lookup: options.lookup } : {}),
      });
    } catch (err) {
      // net.connect throws synchronously for options it rejects (a port out of range).
      finish({ certificate: null, error: `cannot connect to ${target}: ${(err as Error).message}` });
      return;
    }
    socket.once('connect', () => {
      tcpConnected = true;
    });
    socket.once('secureConnect', () => {
      const tls = socket as TLSSocket;
      const certificate = summarizeCertificate(tls);
      finish(
        certificate === null
          ? { certificate: null, error: `${target} completed the TLS handshake without a certificate` }
          : { certificate, error: null },
      );
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      const stage = tcpConnected ? 'TLS handshake with' : 'connecting to';
      finish({ certificate: null, error: `${stage} ${target} failed: ${err.message}` });
    });
    socket.once('close', () => {
      finish({ certificate: null, error: `${target} closed the connection before the TLS handshake ended` });
    });
  });
}
