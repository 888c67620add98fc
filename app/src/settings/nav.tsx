/** The tabs of the Settings area: one link per page, the current one marked with `aria-current`. */
import { fetchSession } from '../api/session.js';
import { useLoad } from '../ui/hooks.js';

/** The Settings pages, in the tabs' order: the path segment under `/settings/` and the tab's text. */
export const SETTINGS_SECTIONS = [
  { section: 'variables', label: 'Variables' },
  { section: 'snippets', label: 'Snippets' },
  { section: 'maintenance-windows', label: 'Maintenance windows' },
  { section: 'client-certificates', label: 'Client certificates' },
  { section: 'api-keys', label: 'API keys' },
  { section: 'alert-settings', label: 'Alert settings' },
  { section: 'audit-log', label: 'Audit log' },
] as const;

/** Tabs shown to an ADMIN or OWNER only: the pages of what the others may not read (docs/teams.md, "Roles"). */
const ADMIN_SECTIONS: ReadonlySet<string> = new Set(['audit-log']);

/** One of {@link SETTINGS_SECTIONS}' path segments. */
export type SettingsSection = (typeof SETTINGS_SECTIONS)[number]['section'];

/** The tabs, `current` marked; the ADMIN tabs once the session says its role holds them (or they are open). */
export function SettingsNav({ current }: { current: SettingsSection }) {
  const session = useLoad(() => fetchSession(), []);
  const role = session.data?.role;
  const admin = role === 'ADMIN' || role === 'OWNER';
  return (
    <nav aria-label="Settings" class="st-nav">
      <ul>
        {SETTINGS_SECTIONS.filter(
          (s) => admin || s.section === current || !ADMIN_SECTIONS.has(s.section),
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
