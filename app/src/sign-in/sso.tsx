/**
 * "Sign in with single sign-on" under the sign-in form (docs/teams.md, "Single sign-on"): a button that
 * opens an email field; the service answers where to go (the account's OpenID provider, or back here
 * saying single sign-on is not set up for that email), and the browser goes there. Back from the provider,
 * `?error=` or `?sso=unavailable` in the address says why it did not sign in.
 */
import { useState } from 'preact/hooks';
import { startSso } from '../api/sso.js';

/** What each `?error=` of the callback means, in words. */
const FAILURES: Record<string, string> = {
  sso_failed: 'Single sign-on did not complete. Start again.',
  sso_denied: 'The identity provider did not sign you in.',
  sso_domain: 'Your email address is not one this account’s single sign-on accepts.',
  sso_unverified:
    'Your identity provider does not say your email address is verified, so it cannot be linked to your person here.',
  sso_account: 'This identity belongs to another account, or your person is linked to another identity.',
};

/** The message the address carries back from a sign-in, or null. */
function messageOfLocation(search: string): string | null {
  const params = new URLSearchParams(search);
  if (params.get('sso') === 'unavailable') {
    return 'Single sign-on is not set up for this email address. Sign in another way, or ask an owner of your account.';
  }
  const error = params.get('error');
  return error === null ? null : (FAILURES[error] ?? FAILURES.sso_failed!);
}

/** The single sign-on part of the sign-in page. */
export function SsoSignIn() {
  const returned = messageOfLocation(window.location.search);
  const [open, setOpen] = useState(returned !== null);
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(returned);

  async function submit(event: Event) {
    event.preventDefault();
    const value = email.trim();
    if (!/^[^@\s]+@[^@\s]+$/.test(value)) {
      setError('Enter your work email address.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const target = await startSso(value);
      if (target.startsWith('/')) {
        setError(messageOfLocation(new URL(target, window.location.origin).search));
        setBusy(false);
        return;
      }
      window.location.assign(target);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    }
  }

  return (
    <section class="sso-sign-in" aria-labelledby="sso-heading">
      <h2 id="sso-heading" class="visually-hidden">
        Single sign-on
      </h2>
      {open ? (
        <form onSubmit={submit} noValidate>
          <label for="sso-email">Work email</label>
          <input
            id="sso-email"
            name="email"
            type="email"
            autoComplete="email"
            spellcheck={false}
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
            aria-describedby={error ? 'sso-email-hint sso-error' : 'sso-email-hint'}
            aria-invalid={error ? true : undefined}
            required
          />
          <p id="sso-email-hint" class="field-hint">
            You go on to your organisation’s identity provider and come back signed in.
          </p>
          {error ? (
            <p id="sso-error" class="field-error" role="alert">
              <span aria-hidden="true">✕ </span>
              {error}
            </p>
          ) : null}
          <button type="submit" disabled={busy}>
            {busy ? 'Going to your provider…' : 'Continue with single sign-on'}
          </button>
        </form>
      ) : (
        <button type="button" class="button-secondary" aria-expanded="false" onClick={() => setOpen(true)}>
          Sign in with single sign-on
        </button>
      )}
    </section>
  );
}
