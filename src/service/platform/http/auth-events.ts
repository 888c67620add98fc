import type { FastifyRequest } from 'fastify';
import type { Principal } from './permissions.js';

/**
 * A sign-in, failed sign-in or sign-out of the web app (`/auth/session`, docs/web-app.md, "Signing in"), told
 * to the modules after the answer (the audit log records them, docs/teams.md, "Audit log"). It never holds
 * what was presented (an API key, a password): only who it turned out to be, when that is known.
 */
export type AuthEvent = {
  kind: 'sign-in' | 'sign-in-failed' | 'sign-out';
  /** The account signed in to or out of; null for a failed sign-in whose credential names no account. */
  accountId: string | null;
  /** Who signed in or out; null when not known (a failed sign-in). */
  principal: Principal | null;
  /** The request, for its client address and user agent. */
  request: FastifyRequest;
};

/** Told of each {@link AuthEvent}; must not throw, and must not hold the request up (it is answered). */
export type AuthEventListener = (event: AuthEvent) => void;
