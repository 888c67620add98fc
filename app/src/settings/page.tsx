/**
 * The Settings area (`/settings/{section}`): the account's environment variables, snippets, maintenance
 * windows, client certificates, API keys, alert settings, people, the signed-in person's own account, single
 * sign-on and the audit log, each a page of its own under the same tabs.
 * `/settings` opens the first.
 */
import { useEffect } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { AccountPage } from './account.js';
import { AlertSettingsPage } from './alert-settings.js';
import { ApiKeysPage } from './api-keys.js';
import { AuditLogPage } from './audit-log.js';
import { ClientCertificatesPage } from './client-certificates.js';
import { MaintenanceWindowsPage } from './maintenance-windows.js';
import { SETTINGS_SECTIONS, type SettingsSection, SettingsNav } from './nav.js';
import { RequirePermission } from '../ui/permissions.js';
import { PeoplePage } from './people.js';
import { SnippetsPage } from './snippets.js';
import { SsoPage } from './sso.js';
import { VariablesPage } from './variables.js';
import './settings.css';

const PAGES: Record<SettingsSection, () => preact.JSX.Element> = {
  variables: VariablesPage,
  snippets: SnippetsPage,
  'maintenance-windows': MaintenanceWindowsPage,
  'client-certificates': ClientCertificatesPage,
  'api-keys': ApiKeysPage,
  'alert-settings': AlertSettingsPage,
  'audit-log': AuditLogPage,
  people: PeoplePage,
  account: AccountPage,
  sso: SsoPage,
};

function isSection(section: string | undefined): section is SettingsSection {
  return SETTINGS_SECTIONS.some((s) => s.section === section);
}

/** `/settings` goes to the first tab; an unknown section says so. */
export default function SettingsPage({ section }: { section?: string }) {
  const { route } = useLocation();
  useEffect(() => {
    if (section === undefined) route(`/settings/${SETTINGS_SECTIONS[0].section}`, true);
  }, [section, route]);
  if (section === undefined) return null;
  if (!isSection(section)) {
    return (
      <section>
        <h1>Page not found</h1>
        <p>
          No settings page has this address. <a href="/settings/variables">Go to the variables</a>.
        </p>
      </section>
    );
  }
  const Page = PAGES[section];
  const { label, permission } = SETTINGS_SECTIONS.find((s) => s.section === section)!;
  return (
    <>
      <SettingsNav current={section} />
      {permission === 'read' ? (
        <Page />
      ) : (
        // A tab the role does not see, opened by its address: its title and why it stays closed.
        <RequirePermission permission={permission} title={label}>
          <Page />
        </RequirePermission>
      )}
    </>
  );
}
