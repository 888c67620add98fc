import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { type SessionInfo, signIn } from '../api/session.js';
import { useTitle } from '../ui/hooks.js';
import { SsoSignIn } from './sso.js';

/**
 * Sign-in: the API key (the one `outpost up` prints) is sent once, in the body of `POST /auth/session`, and
 * exchanged for an httpOnly session cookie. The field is cleared at once; nothing is stored in the browser.
 */
export default function SignIn({ onSignedIn }: { onSignedIn: (session: SessionInfo) => void }) {
  useTitle('Sign in');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem('apiKey') as HTMLInputElement;
    const key = input.value.trim();
    input.value = '';
    if (!key) {
      setError('Enter an API key.');
      input.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await signIn(key));
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? 'This API key is not valid.'
          : err instanceof Error
            ? err.message
            : String(err),
      );
      input.focus();
    } finally {
      setBusy(false);
    }
  }

  return (
    <main id="main" class="sign-in">
      <h1>
        <img src="/favicon.svg" alt="" width="32" height="32" /> Sign in to Outpost
      </h1>
      <form method="post" action="/auth/session" onSubmit={submit} noValidate>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="apiKey"
          type="password"
          autoComplete="current-password"
          spellcheck={false}
          aria-describedby={error ? 'api-key-hint api-key-error' : 'api-key-hint'}
          aria-invalid={error ? true : undefined}
          required
        />
        <p id="api-key-hint" class="field-hint">
          The key <code>outpost up</code> (or <code>outpost service</code>) printed at its first start. It is
          sent once and exchanged for a session; this browser never keeps it.
        </p>
        {error ? (
          <p id="api-key-error" class="field-error" role="alert">
            <span aria-hidden="true">✕ </span>
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <SsoSignIn />
    </main>
  );
}
