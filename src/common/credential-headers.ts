/**
 * The credential-header lists of both sides, in the layer under everything (no dependencies), so
 * the agent's network code, its sandbox and its checks, and the service all read them from here.
 */

/**
 * Headers whose values the agent always scrubs from results, run logs and packet captures
 * (docs/checks.md, "Runtime variables and scrubbing"), lower case: the core credential headers
 * plus proxy-authorization for the same reason. An API check also keeps them from being sent to
 * another origin on a redirect.
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
 * HTTP header names whose values are credentials: masked by the service on every read of a check, group
 * or alert channel, and stored sealed. Lower case. A superset of {@link SECRET_HEADERS}, completed by
 * {@link isCredentialHeader}'s name pattern.
 */
export const CREDENTIAL_HEADER_NAMES: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'api-key',
  'apikey',
  'x-auth-token',
  'x-access-token',
  'x-refresh-token',
  'x-csrf-token',
  'x-xsrf-token',
  'private-token',
  'x-amz-security-token',
  'x-goog-api-key',
  'ocp-apim-subscription-key',
]);

// Any name that says it carries a key, token, secret, password, session or signature (x-my-api-key,
// x-service-token, x-session-id, x-hub-signature, …): masking a harmless header costs a `*****`,
// missing a credential leaks it.
const CREDENTIAL_NAME =
  /(?:^|[-_.])(?:auth|authorization|token|secret|password|passwd|pwd|api[-_]?key|apikey|key|session|sessionid|credentials?|signature|cookie)(?:$|[-_.])/i;

/** True when a header named `name` (any case, surrounding spaces ignored) carries a credential. */
export function isCredentialHeader(name: string): boolean {
  const lower = name.trim().toLowerCase();
  return CREDENTIAL_HEADER_NAMES.has(lower) || CREDENTIAL_NAME.test(lower);
}
