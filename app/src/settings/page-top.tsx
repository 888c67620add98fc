/**
 * The top every settings page shares: its title with the button that opens or closes its form, a sentence
 * on what the page is for, and the status line that says what was just saved.
 */
import type { ComponentChildren } from 'preact';
import { PageHeader } from '../ui/page.js';

/**
 * The title, the form's toggle (`Close the form` while `formOpen`, else `newLabel`), the page's intro
 * (`children`) and a polite status line (`status`, announced by screen readers).
 */
export function SettingsTop({
  title,
  formOpen,
  newLabel,
  onToggle,
  status,
  children,
}: {
  title: string;
  formOpen: boolean;
  newLabel: string;
  onToggle: () => void;
  status: string;
  children: ComponentChildren;
}) {
  return (
    <>
      <PageHeader title={title}>
        <button type="button" aria-expanded={formOpen} onClick={onToggle}>
          {formOpen ? 'Close the form' : newLabel}
        </button>
      </PageHeader>
      <p class="muted st-intro">{children}</p>
      <p role="status" class="muted">
        {status}
      </p>
    </>
  );
}
