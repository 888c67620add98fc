import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { sendError } from './errors.js';

import { ROLES, type Role } from './roles.js';

export { ROLES, type Role };

/**
 * What a route needs (docs/teams.md, "Permissions"): every `/v1` route declares exactly one in its
 * `config.permission`, and {@link authorize} checks it for every request in this one place. Each is held by
 * a role and all roles above it, except `agent`, held by agents alone.
 */
export const PERMISSIONS = {
  /** See the monitoring: checks, results, groups, channels, pages, analytics. */
  read: { role: 'READ_ONLY', means: 'read the account’s monitoring' },
  /**
   * Change one's own sign-in: password, two-factor, own sessions (`/v1/users/me/…`). Every role holds it; the
   * routes answer a key that is no person's 409 OUTPOST_ERR_NOT_A_USER. A change, so the audit log records it.
   */
  self: { role: 'READ_ONLY', means: 'change their own password, two-factor and sessions' },
  /** Change the monitoring, and run checks. */
  write: {
    role: 'READ_WRITE',
    means: 'change checks, groups, alert channels, status pages and the rest of the monitoring',
  },
  /** Manage who and what may use the account: API keys, people, private locations and their keys, settings. */
  admin: { role: 'ADMIN', means: 'manage the account’s API keys, people, private locations and settings' },
  /** Own the account: its owners and its sign-in rules. */
  owner: { role: 'OWNER', means: 'own the account: its owners and its sign-in rules' },
  /**
   * The agent protocol (`/v1/agent/*`): private-location keys, and account API keys of an ADMIN or OWNER
   * (an agent serving data-center locations). Jobs carry the secrets of checks in clear, so no weaker key
   * and no web session may claim them.
   */
  agent: { role: 'ADMIN', means: 'run as an agent: claim jobs and post their results' },
} as const satisfies Record<string, { role: Role; means: string }>;
export type Permission = keyof typeof PERMISSIONS;

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Who made the request and with which role: what {@link authorize} checks against the route's
     * permission, and what the audit log records. Set by the auth hook on every `/v1` route.
     */
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** The permission the route needs (every `/v1` route declares one; see {@link requirePermissions}). */
    permission?: Permission;
  }
}

/** The rank of `role` in {@link ROLES}: 0 for READ_ONLY … 3 for OWNER. */
export function rankOf(role: Role): number {
  return ROLES.indexOf(role);
}

/** Whether `role` is one of {@link ROLES} (a stored or sent value is checked before it is trusted). */
export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** The weaker of two roles: what a key of a person acts with (the key's role, capped by the person's). */
export function weakerRole(a: Role, b: Role): Role {
  return rankOf(a) <= rankOf(b) ? a : b;
}

/**
 * Who made a request, as the auth hook found it (platform/http/auth.ts) and as the audit log records it:
 * an account API key (used directly or through a web session opened with it), a person signed in to the
 * web app, or a private location's agent.
 */
export type Principal =
  | {
      kind: 'api-key';
      id: string;
      name: string | null;
      /** The key's role, capped by its person's current role for a person's key. */
      role: Role;
      viaWebSession: boolean;
      /** The person the key belongs to (`api_keys.user_id`); null or absent for an account key. */
      userId?: string | null;
    }
  | { kind: 'user'; id: string; name: string; role: Role }
  | { kind: 'private-location'; id: string; name: string };

/**
 * Whether `principal` holds `permission`. A private location's key holds `agent` and nothing else; a web
 * session never holds `agent` (an agent never signs in to the web app); otherwise the role decides.
 */
export function holds(principal: Principal, permission: Permission): boolean {
  if (principal.kind === 'private-location') return permission === 'agent';
  if (permission === 'agent' && (principal.kind === 'user' || principal.viaWebSession)) return false;
  return rankOf(principal.role) >= rankOf(PERMISSIONS[permission].role);
}

/** What a principal is called in messages: "API key "CI" (READ_ONLY)". Never a secret. */
function describe(principal: Principal): string {
  switch (principal.kind) {
    case 'private-location':
      return `the key of private location "${principal.name}"`;
    case 'user':
      return `${principal.name} (${principal.role})`;
    default:
      return `API key ${principal.name === null ? principal.id : `"${principal.name}"`} (${principal.role})`;
  }
}

/**
 * onRoute hook of the `/v1` scope: a route that declares no permission, or one that is not in
 * {@link PERMISSIONS}, stops the service from building, so no route can be added that {@link authorize}
 * would not check.
 * @throws Error naming the route.
 */
export function requirePermissions(route: RouteOptions): void {
  const permission = route.config?.permission;
  if (permission === undefined || !Object.hasOwn(PERMISSIONS, permission)) {
    const methods = [route.method].flat().join(',');
    throw new Error(
      `route ${methods} ${route.url} declares no permission: add config: { permission: ${Object.keys(PERMISSIONS).join(' | ')} }`,
    );
  }
}

/**
 * Checks the authenticated `request.principal` against its route's declared permission (the one place
 * where this is checked, run by the auth hook after authentication): 403 OUTPOST_ERR_FORBIDDEN with the
 * spec's body naming the permission and the role it needs.
 * @returns true when it answered (refused), false when the request may go on.
 */
export function authorize(request: FastifyRequest, reply: FastifyReply): boolean {
  const permission = request.routeOptions.config?.permission;
  // requirePermissions made every /v1 route declare one; a route without one (an unknown URL answered by
  // the 404 handler) needs nothing beyond authentication.
  if (permission === undefined) return false;
  const principal = request.principal;
  if (holds(principal, permission)) return false;
  const needed = PERMISSIONS[permission];
  if (principal.kind === 'private-location') {
    // As before roles existed: such a key authenticates nothing outside the agent protocol.
    sendError(
      reply,
      'OUTPOST_ERR_UNAUTHORIZED',
      'a private-location key is valid on /v1/agent/ routes only; use an account API key',
    );
    return true;
  }
  sendError(
    reply,
    'OUTPOST_ERR_FORBIDDEN',
    permission === 'agent'
      ? `only agents may ${needed.means}: a private-location key, or an account API key of an ADMIN or OWNER`
      : `${describe(principal)} may not ${needed.means}; this needs the role ${needed.role} or above`,
    { permission, role: permission === 'agent' ? null : needed.role },
  );
  return true;
}
