/**
 * The top every settings page shares: its title with the button that opens or closes its form, a sentence
 * on what the page is for, and the status line that says what was just saved.
 */
import type { ComponentChildren } from 'preact';
import { PageHeader } from '../ui/page.js';
import { type Permission, useCan } from '../ui/permissions.js';

/**
 * The title, the form's toggle (`Close the form` while `formOpen`, else `newLabel`; only for a session
 * holding `permission`, `write` unless told), the page's intro (`children`) and a polite status line
 * (`status`, announced by screen readers).
 */
export function SettingsTop({
  title,
  formOpen,
  newLabel,
  onToggle,
  status,
  permission = 'write',
  children,
}: {
  title: string;
  formOpen: boolean;
  newLabel: string;
  onToggle: () => void;
  status: string;
  permission?: Exclude<Permission, 'read'>;
  children: ComponentChildren;
}) {
  const allowed = useCan(permission);
  return (
    <>
      <PageHeader title={title}>
        {allowed ? (
          <button type="button" aria-expanded={formOpen} onClick={onToggle}>
            {formOpen ? 'Close the form' : newLabel}
          </button>
        ) : null}
      </PageHeader>
      <p class="muted st-intro">{children}</p>
      <p role="status" class="muted">
        {status}
      </p>
    </>
  );
}
