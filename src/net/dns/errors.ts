/**
 * Codes of a DNS query that got no usable answer: a system error code of the socket
 * (`ECONNREFUSED`, `ECONNRESET`, `ENETUNREACH`, `ENOTFOUND` for a name server host name that
 * does not resolve, …) or one of node:dns's codes: `ETIMEOUT` (no answer in time) and
 * `EBADRESP` (an answer that does not parse).
 */
export type DnsQueryErrorCode = 'ETIMEOUT' | 'EBADRESP' | (string & {});

/**
 * A DNS query got no usable answer. A check turns it into a failed result with `message`
 * as its errorMessage; it is never a bug. Return codes such as NXDOMAIN are answers, not errors.
 */
export class DnsQueryError extends Error {
  /** Stable code to branch on, see DnsQueryErrorCode. */
  readonly code: DnsQueryErrorCode;

  constructor(code: DnsQueryErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DnsQueryError';
    this.code = code;
  }
}

/**
 * A DnsQueryError from a socket error: its system code, and a message naming it and the
 * server, e.g. `ECONNREFUSED: no DNS server at 127.0.0.1 port 53 (UDP)`.
 * @param where - the server and transport, e.g. `127.0.0.1 port 53 (UDP)`.
 */
export function socketError(err: unknown, where: string): DnsQueryError {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string')
    return new DnsQueryError('EBADRESP', `${(err as Error).message} (${where})`, { cause: err });
  const what = code === 'ECONNREFUSED' ? 'no DNS server at' : 'cannot query';
  return new DnsQueryError(code, `${code}: ${what} ${where}`, { cause: err });
}
