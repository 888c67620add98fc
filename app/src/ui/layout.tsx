import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import type { SessionInfo } from '../api/session.js';

/** The sections of the app, in the navigation's order. */
const SECTIONS: readonly { href: string; label: string }[] = [
  { href: '/checks', label: 'Checks' },
  { href: '/check-groups', label: 'Check groups' },
  { href: '/private-locations', label: 'Private locations' },
  { href: '/alert-channels', label: 'Alert channels' },
  { href: '/incidents', label: 'Incidents' },
  { href: '/status-pages', label: 'Status pages' },
  { href: '/settings', label: 'Settings' },
];

/**
 * The frame of every signed-in page: a skip link, the navigation (the current section marked with
 * `aria-current`), the account and sign-out, and the page in `<main>`.
 */
export function Layout({
  session,
  onSignOut,
  children,
}: {
  session: SessionInfo;
  onSignOut: () => void;
  children: ComponentChildren;
}) {
  const { path } = useLocation();
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top-bar">
        <a class="brand" href="/checks">
          <img src="/favicon.svg" alt="" width="24" height="24" />
          Outpost
        </a>
        <nav aria-label="Sections">
          <ul>
            {SECTIONS.map((s) => {
              const current = path === s.href || path.startsWith(`${s.href}/`);
              return (
                <li key={s.href}>
                  <a href={s.href} aria-current={current ? 'page' : undefined}>
                    {s.label}
                  </a>
                </li>
              );
            })}
          </ul>
        </nav>
        <div class="account">
          <span
            class="account-name"
            title={
              session.user
                ? `${session.user.email} (${session.role})`
                : `API key ${session.keyPrefix}… (${session.role})`
            }
          >
            {session.accountName}
          </span>
          <button type="button" class="button-secondary" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
