/**
 * Stable codes of the errors the service answers, each with its HTTP status and when it is
 * answered. Every error body carries its code in `attributes.code` (docs/api.md, "Errors");
 * clients branch on the code, never on the message. Every code is listed in docs/errors.md; a
 * test fails when one is missing. The agent's own codes are in src/common/errors.ts.
 */
export const SERVICE_ERROR_CODES = {
  OUTPOST_ERR_VALIDATION: {
    status: 400,
    when: 'A body, query, path or header value breaks a rule of its schema, or a rule between fields.',
  },
  OUTPOST_ERR_MALFORMED_REQUEST: {
    status: 400,
    when: 'The framework could not read the request: a body that is not JSON, an empty JSON body, a bad content-length, a URL that does not decode.',
  },
  OUTPOST_ERR_PROTOCOL: {
    status: 400,
    when: 'An agent claimed with a protocolVersion this service does not speak.',
  },
  OUTPOST_ERR_ARTIFACT_INCOMPLETE: {
    status: 400,
    when: 'An artifact upload ended before its content-length, or broke off.',
  },
  OUTPOST_ERR_UNAUTHORIZED: {
    status: 401,
    when: 'A missing or wrong API key or web session, an x-service-account of another account, a private-location key outside /v1/agent/, or a session cookie on /v1/agent/.',
  },
  OUTPOST_ERR_CSRF: {
    status: 403,
    when: 'A state-changing request authenticated by the web app’s session cookie without the session’s x-csrf-token, or from another origin (Origin header); a sign-in from another origin.',
  },
  OUTPOST_ERR_FORBIDDEN: {
    status: 403,
    when: 'The caller’s role (its API key’s, or its web session’s) does not hold the permission the route declares; the agent protocol called by anything but an agent.',
  },
  OUTPOST_ERR_SSO_REQUIRED: {
    status: 403,
    when: 'A web-app sign-in with an API key (or a password) for an account whose people sign in by single sign-on only.',
  },
  OUTPOST_ERR_NOT_FOUND: {
    status: 404,
    when: 'An id that is not in the caller’s account, or an unknown route.',
  },
  OUTPOST_ERR_COMPLETION_TIMEOUT: {
    status: 408,
    when: 'A check session still runs after the completion route’s maxWaitSeconds; call again.',
  },
  OUTPOST_ERR_LEASE_LOST: {
    status: 409,
    when: 'An agent acted on a job whose lease it no longer holds.',
  },
  OUTPOST_ERR_AGENT_KEY_MISMATCH: {
    status: 409,
    when: 'An agent id first registered with another private location’s key (or an account key).',
  },
  OUTPOST_ERR_REPAIR_NOT_PENDING: {
    status: 409,
    when: 'Applying or rejecting an AGENTIC check’s script repair that is not PENDING (applied, rejected or stale already).',
  },
  OUTPOST_ERR_SCRIPT_MOVED: {
    status: 409,
    when: 'Applying an AGENTIC repair made over a script version that is no longer the check’s, or updating an AGENTIC check whose script a run changed since the update read it.',
  },
  OUTPOST_ERR_GROUP_NOT_EMPTY: {
    status: 409,
    when: 'Deleting a check group that still has checks.',
  },
  OUTPOST_ERR_SNIPPET_IN_USE: {
    status: 409,
    when: 'Deleting a snippet that checks or check groups still use.',
  },
  OUTPOST_ERR_STATUS_PAGE_SERVICE_IN_USE: {
    status: 409,
    when: 'Deleting a status-page service that a card of a status page still shows.',
  },
  OUTPOST_ERR_EMAIL_TAKEN: {
    status: 409,
    when: 'Inviting or creating a person with an email that already belongs to a person (emails are unique across the service; the answer never says which account holds it).',
  },
  OUTPOST_ERR_LAST_OWNER: {
    status: 409,
    when: 'Demoting or removing the account’s last active OWNER.',
  },
  OUTPOST_ERR_NOT_A_USER: {
    status: 409,
    when: 'A /v1/users/me route called with an API key that belongs to no person (an account key).',
  },
  OUTPOST_ERR_TWO_FACTOR_ENABLED: {
    status: 409,
    when: 'Starting or confirming two-factor for a person who has it on already.',
  },
  OUTPOST_ERR_SLUG_TAKEN: {
    status: 409,
    when: 'A private-location slugName the account already uses.',
  },
  OUTPOST_ERR_URL_TAKEN: {
    status: 409,
    when: 'A status-page url another page (of any account) uses.',
  },
  OUTPOST_ERR_PROJECT_EXISTS: {
    status: 409,
    when: 'POST /next/projects with a logicalId the account already has a project for.',
  },
  OUTPOST_ERR_VARIABLE_EXISTS: {
    status: 409,
    when: 'Creating an environment variable whose key the account already has.',
  },
  OUTPOST_ERR_TOO_MANY_KEYS: {
    status: 409,
    when: 'A third key for a private location (two at once are allowed, for rotation), or a 51st access key on a status page.',
  },
  OUTPOST_ERR_API_KEY_IN_USE: {
    status: 409,
    when: 'Revoking the API key the request itself is authenticated with (directly or through a web session).',
  },
  OUTPOST_ERR_SSO_DOMAIN_TAKEN: {
    status: 409,
    when: 'Single sign-on settings naming an email domain another account’s single sign-on already holds.',
  },
  OUTPOST_ERR_LENGTH_REQUIRED: {
    status: 411,
    when: 'An artifact upload without content-length (sent chunked).',
  },
  OUTPOST_ERR_PAYLOAD_TOO_LARGE: {
    status: 413,
    when: 'A body above the route’s limit (1 MB; 8 MB for results).',
  },
  OUTPOST_ERR_ARTIFACT_TOO_LARGE: {
    status: 413,
    when: 'An artifact whose content-length is above 150 MB, or whose body runs past its content-length.',
  },
  OUTPOST_ERR_URI_TOO_LONG: {
    status: 414,
    when: 'A path parameter longer than 256 characters.',
  },
  OUTPOST_ERR_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    when: 'A body that is not JSON; an artifact that is not application/octet-stream.',
  },
  OUTPOST_ERR_AUTH_RATE_LIMITED: {
    status: 429,
    when: 'Too many failed authentications from one client address or with one kind of key.',
  },
  OUTPOST_ERR_INTERNAL: {
    status: 500,
    when: 'A bug; logged with its stack, never shown.',
  },
} as const satisfies Record<string, { status: number; when: string }>;

/** One of the service's error codes. */
export type ServiceErrorCode = keyof typeof SERVICE_ERROR_CODES;
