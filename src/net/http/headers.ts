import type { IncomingHttpHeaders } from 'node:http';

/** What replaces a secret header value (docs/architecture.md, "The agent", "scrubbing"). */
export const SCRUBBED = '*****';

/**
 * Headers whose values are credentials: always scrubbed from results (docs/checks.md,
 * "Runtime variables and scrubbing"), plus proxy-authorization for the same reason.
 */
export const SECRET_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'x-auth-token',
]);

/**
 * Headers whose values are credentials, lower case: the same list as {@link SECRET_HEADERS},
 * under the name the scrubbers use (packet captures mask these header lines' values too).
 */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = SECRET_HEADERS;

/**
 * Headers as a result stores them: lower-case names, repeated values joined with `, `, and the
 * values of {@link SECRET_HEADERS} replaced by `*****`.
 */
export function scrubHeaders(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): Record<string, string> {
  const scrubbed: Record<string, string> = {};
  for (const [rawName, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const name = rawName.toLowerCase();
    scrubbed[name] = SECRET_HEADERS.has(name) ? SCRUBBED : Array.isArray(value) ? value.join(', ') : value;
  }
  return scrubbed;
}
