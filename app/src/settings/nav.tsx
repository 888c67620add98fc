/** The tabs of the Settings area: one link per page, the current one marked with `aria-current`. */

/** The Settings pages, in the tabs' order: the path segment under `/settings/` and the tab's text. */
export const SETTINGS_SECTIONS = [
  { section: 'variables', label: 'Variables' },
  { section: 'snippets', label: 'Snippets' },
  { section: 'maintenance-windows', label: 'Maintenance windows' },
  { section: 'client-certificates', label: 'Client certificates' },
  { section: 'api-keys', label: 'API keys' },
  { section: 'alert-settings', label: 'Alert settings' },
  { section: 'sso', label: 'Single sign-on' },
] as const;

/** One of {@link SETTINGS_SECTIONS}' path segments. */
export type SettingsSection = (typeof SETTINGS_SECTIONS)[number]['section'];

/** The tabs, `current` marked. */
export function SettingsNav({ current }: { current: SettingsSection }) {
  return (
    <nav aria-label="Settings" class="st-nav">
      <ul>
        {SETTINGS_SECTIONS.map((s) => (
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
