import type { IncomingHttpHeaders } from 'node:http';
import { SECRET_HEADERS } from '../../common/credential-headers.js';
import { REDACTED } from '../../common/redaction.js';

/**
 * Headers as a result stores them: lower-case names, repeated values joined with `, `, and the
 * values of SECRET_HEADERS (src/common/credential-headers.ts) replaced by {@link REDACTED}.
 */
export function scrubHeaders(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): Record<string, string> {
  const scrubbed: Record<string, string> = {};
  for (const [rawName, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const name = rawName.toLowerCase();
    scrubbed[name] = SECRET_HEADERS.has(name) ? REDACTED : Array.isArray(value) ? value.join(', ') : value;
  }
  return scrubbed;
}
