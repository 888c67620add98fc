/** The tabs of the Settings area: one link per page, the current one marked with `aria-current`. */
import { type Permission, useSession, can } from '../ui/permissions.js';

/**
 * The Settings pages, in the tabs' order: the path segment under `/settings/`, the tab's text, and the
 * permission a session needs to see the tab at all (`read`: every role; `admin`: the page manages who may
 * use the account, and even its list is ADMIN's and above).
 */
export const SETTINGS_SECTIONS = [
  { section: 'variables', label: 'Variables', permission: 'read' },
  { section: 'snippets', label: 'Snippets', permission: 'read' },
  { section: 'maintenance-windows', label: 'Maintenance windows', permission: 'read' },
  { section: 'client-certificates', label: 'Client certificates', permission: 'read' },
  { section: 'api-keys', label: 'API keys', permission: 'admin' },
  { section: 'alert-settings', label: 'Alert settings', permission: 'read' },
  { section: 'people', label: 'People', permission: 'read' },
  { section: 'account', label: 'My account', permission: 'read' },
  { section: 'sso', label: 'Single sign-on', permission: 'admin' },
  { section: 'audit-log', label: 'Audit log', permission: 'admin' },
] as const satisfies readonly { section: string; label: string; permission: Permission }[];

/** One of {@link SETTINGS_SECTIONS}' path segments. */
export type SettingsSection = (typeof SETTINGS_SECTIONS)[number]['section'];

/** The tabs the session may open, `current` marked; "My account" for a person's session only. */
export function SettingsNav({ current }: { current: SettingsSection }) {
  const session = useSession();
  return (
    <nav aria-label="Settings" class="st-nav">
      <ul>
        {SETTINGS_SECTIONS.filter(
          (s) => can(session, s.permission) && (s.section !== 'account' || session?.user != null),
        ).map((s) => (
          <li key={s.section}>
            <a href={`/settings/${s.section}`} aria-current={s.section === current ? 'page' : undefined}>
              {s.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
