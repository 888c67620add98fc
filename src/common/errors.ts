/**
 * Stable error codes. Callers branch on `err.code`, never on the message.
 * Every code is listed in docs/errors.md; a test fails when one is missing.
 */
export const ERROR_CODES = {
  OUTPOST_ERR_CONFIG: 'A configuration variable is missing or invalid.',
  OUTPOST_ERR_UNAUTHORIZED: 'The service refused the credentials (HTTP 401).',
  OUTPOST_ERR_PROTOCOL: 'The service answered something the protocol does not allow.',
  OUTPOST_ERR_SERVICE_UNAVAILABLE: 'The service could not be reached or answered 5xx; retried with back-off.',
  OUTPOST_ERR_LEASE_LOST: 'The lease of a job was lost; another agent may be running it (HTTP 409).',
  OUTPOST_ERR_AUTH_RATE_LIMITED:
    'Too many failed authentications from one client address or with one kind of key (HTTP 429).',
  OUTPOST_ERR_AGENT_KEY_MISMATCH:
    'An agent id was used with a key of another private location than the one it registered with (HTTP 409).',
  OUTPOST_ERR_ICMP_SOCKET: 'No ICMP socket could be opened (neither datagram nor raw).',
  OUTPOST_ERR_ABORTED: 'The operation was aborted (shutdown or timeout).',
  OUTPOST_ERR_CAPTURE_UNAVAILABLE:
    'No packet capture can be made: tcpdump is missing, not permitted, or failed to start.',
  OUTPOST_ERR_ENCRYPTION_KEY:
    'The key for secrets at rest is invalid, its key file is unsafe, or it does not open the stored secrets.',
  OUTPOST_ERR_STARTUP:
    'The process could not start: a port is taken, or the data directory cannot be created, is read-only or full.',
  OUTPOST_ERR_ISOLATION:
    'User code cannot run apart from the agent here (no root, no CAP_SETUID/CAP_SETGID, or no setpriv); it is refused.',
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

/** The one base error of Outpost: a stable `code`, a message and an optional `cause`. */
export class OutpostError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OutpostError';
    this.code = code;
  }
}

/** True when `err` is an OutpostError with the given code. */
export function hasCode(err: unknown, code: ErrorCode): err is OutpostError {
  return err instanceof OutpostError && err.code === code;
}
