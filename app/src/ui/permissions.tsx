/**
 * What the browser's session may do, as the app shows it (docs/teams.md, "Roles" and "Permissions"). The
 * service checks every request against its route's permission and refuses the rest (403
 * `OUTPOST_ERR_FORBIDDEN`); the app mirrors that check so a page offers only what its session may do: a
 * READ_ONLY session sees no button that creates, edits, deletes or runs, and an edit page shows
 * {@link RoleNotice} instead of its form.
 *
 * Use:
 * - `useCan('write')` in a component, or `can(session, 'write')` with a session in hand;
 * - `<Can permission="write">…</Can>` around a control;
 * - `<RequirePermission permission="write" title="New check">…form…</RequirePermission>` for a page that is
 *   a form.
 *
 * The ranks are the service's (src/service/platform/http/permissions.ts), written again here: the app
 * imports no module of the service.
 */
import { type ComponentChildren, createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { SessionInfo } from '../api/session.js';
import { PageHeader } from './page.js';

/** The roles, weakest first; each can do what the roles before it can. */
export const ROLES = [
  'READ_ONLY',
  'READ_WRITE',
  'ADMIN',
  'OWNER',
] as const satisfies readonly SessionInfo['role'][];

/** A role of a session or an API key. */
export type Role = (typeof ROLES)[number];

/**
 * What a control needs: `read` the monitoring (every role), `write` it (READ_WRITE and above: create, edit,
 * delete, run, test, pause, acknowledge, subscribe), `admin` (ADMIN and above: API keys, private locations
 * and their keys), `owner` (OWNER: the account's own rules).
 */
export type Permission = 'read' | 'write' | 'admin' | 'owner';

/** The least role holding each permission, as the service's `PERMISSIONS` has it. */
export const LEAST_ROLE: Readonly<Record<Permission, Role>> = {
  read: 'READ_ONLY',
  write: 'READ_WRITE',
  admin: 'ADMIN',
  owner: 'OWNER',
};

/** What each role can do, in a few words (docs/teams.md, "Roles"): for selects and lists of roles. */
export const ROLE_SUMMARIES: Readonly<Record<Role, string>> = {
  READ_ONLY: 'reads everything',
  READ_WRITE: 'also changes checks, groups, channels, pages and the rest of the monitoring',
  ADMIN: 'also manages API keys and private locations',
  OWNER: 'owns the account',
};

/** The rank of `role`: 0 for READ_ONLY … 3 for OWNER; -1 for anything else. */
export function rankOf(role: string): number {
  return (ROLES as readonly string[]).indexOf(role);
}

/** Whether `value` is one of {@link ROLES}. */
export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && rankOf(value) >= 0;
}

/** The roles at most as strong as `role`, weakest first: those a key made by this session may have. */
export function rolesUpTo(role: Role): Role[] {
  return ROLES.slice(0, rankOf(role) + 1);
}

/**
 * Whether a session (or a bare role) holds `permission`. No session, or a role the app does not know,
 * holds nothing: the app hides rather than offers what the service would refuse.
 */
export function can(session: { role: string } | Role | null | undefined, permission: Permission): boolean {
  if (session === null || session === undefined) return false;
  const role = typeof session === 'string' ? session : session.role;
  const rank = rankOf(role);
  return rank >= 0 && rank >= rankOf(LEAST_ROLE[permission]);
}

/**
 * The signed-in session, provided by the app around its pages (app.tsx) and by the component tests. Without
 * a provider it is null, and {@link useCan} answers false for every permission.
 */
export const SessionContext = createContext<SessionInfo | null>(null);

/** The session of this browser (null outside {@link SessionContext}). */
export function useSession(): SessionInfo | null {
  return useContext(SessionContext);
}

/** Whether this browser's session holds `permission`. */
export function useCan(permission: Permission): boolean {
  return can(useSession(), permission);
}

/** Renders `children` when the session holds `permission`, else `otherwise` (nothing by default). */
export function Can({
  permission,
  children,
  otherwise = null,
}: {
  permission: Permission;
  children: ComponentChildren;
  otherwise?: ComponentChildren;
}) {
  return <>{useCan(permission) ? children : otherwise}</>;
}

/**
 * Says that the session's role cannot do what needs `permission`, and whom to ask: "Your role (READ_ONLY)
 * cannot change this; ask an admin." A note, not an error: nothing went wrong.
 */
export function RoleNotice({ permission }: { permission: Exclude<Permission, 'read'> }) {
  const role = useSession()?.role ?? 'none';
  const needed = LEAST_ROLE[permission];
  return (
    <div class="notice notice-role" role="note" aria-label="Not allowed for your role">
      <strong>
        Your role ({role}) cannot change this; ask {permission === 'owner' ? 'an owner' : 'an admin'}.
      </strong>
      <p>
        It needs the role {needed}
        {needed === 'OWNER' ? '' : ' or above'}.
      </p>
    </div>
  );
}

/**
 * A page that is a form (a new or edit page): its `children` when the session holds `permission`, else
 * the page's `title` as its heading and {@link RoleNotice} in place of the form, so a direct address of an
 * edit page explains itself.
 */
export function RequirePermission({
  permission,
  title,
  back,
  children,
}: {
  permission: Exclude<Permission, 'read'>;
  title: ComponentChildren;
  /** A link back to where one can look instead (`{ href: '/checks', label: 'Back to the checks' }`). */
  back?: { href: string; label: string };
  children: ComponentChildren;
}) {
  if (useCan(permission)) return <>{children}</>;
  return (
    <section>
      <PageHeader title={title} />
      <RoleNotice permission={permission} />
      {back ? (
        <p>
          <a href={back.href}>{back.label}</a>
        </p>
      ) : null}
    </section>
  );
}
