import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { type SessionInfo, signIn, signInTwoFactor, signInWithPassword } from '../api/session.js';
import { useTitle } from '../ui/hooks.js';
import { SsoSignIn } from './sso.js';

/** The steps of signing in: email and password, the two-factor code, or an API key instead. */
type Step = { kind: 'password' } | { kind: 'two-factor'; challenge: string } | { kind: 'api-key' };

/** The message of a failed sign-in request: `wrong` for a 401, the service's own words otherwise. */
function failure(err: unknown, wrong: string): string {
  if (err instanceof ApiError && err.status === 401) return wrong;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Sign-in. People sign in with their email and password (`POST /auth/session`) and, when they have
 * two-factor authentication on, a code of their authenticator app or a recovery code (the challenge the
 * first step answers is held in memory for the second). An API key (the one `outpost up` prints) is the
 * secondary way in. Passwords, codes and keys are read from their fields when the form is sent, the field
 * is cleared, and nothing is stored in the browser: the session is an httpOnly cookie.
 */
export default function SignIn({ onSignedIn }: { onSignedIn: (session: SessionInfo) => void }) {
  useTitle('Sign in');
  const [step, setStep] = useState<Step>({ kind: 'password' });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [recovery, setRecovery] = useState(false);
  const firstField = useRef<HTMLInputElement>(null);
  const started = useRef(false);

  // A new step (or the other kind of code) moves the focus to its first field, not on the first render.
  useEffect(() => {
    if (started.current) firstField.current?.focus();
    started.current = true;
  }, [step, recovery]);

  function go(next: Step) {
    setError(null);
    setRecovery(false);
    setStep(next);
  }

  /** Runs one sign-in request, showing its failure under the field `input`, which gets the focus back. */
  async function attempt(input: HTMLInputElement, run: () => Promise<void>, wrong: string) {
    setBusy(true);
    setError(null);
    try {
      await run();
    } catch (err) {
      setError(failure(err, wrong));
      input.focus();
    } finally {
      setBusy(false);
    }
  }

  function submitPassword(event: Event) {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const emailInput = form.elements.namedItem('email') as HTMLInputElement;
    const passwordInput = form.elements.namedItem('password') as HTMLInputElement;
    const email = emailInput.value.trim();
    const password = passwordInput.value;
    passwordInput.value = '';
    if (!email || !password) {
      setError('Enter your email and your password.');
      (email ? passwordInput : emailInput).focus();
      return;
    }
    void attempt(
      passwordInput,
      async () => {
        const answer = await signInWithPassword(email, password);
        if ('twoFactorRequired' in answer) go({ kind: 'two-factor', challenge: answer.challenge });
        else onSignedIn(answer);
      },
      'Wrong email or password.',
    );
  }

  function submitCode(event: Event, challenge: string) {
    event.preventDefault();
    const input = (event.currentTarget as HTMLFormElement).elements.namedItem('code') as HTMLInputElement;
    const code = input.value.replace(/\s+/g, '');
    input.value = '';
    if (!code) {
      setError(recovery ? 'Enter one of your recovery codes.' : 'Enter the 6-digit code.');
      input.focus();
      return;
    }
    void attempt(
      input,
      async () => onSignedIn(await signInTwoFactor(challenge, code)),
      recovery
        ? 'This recovery code is not valid (each works once).'
        : 'This code is not valid. Check the time of your device and try the next one.',
    );
  }

  function submitKey(event: Event) {
    event.preventDefault();
    const input = (event.currentTarget as HTMLFormElement).elements.namedItem('apiKey') as HTMLInputElement;
    const key = input.value.trim();
    input.value = '';
    if (!key) {
      setError('Enter an API key.');
      input.focus();
      return;
    }
    void attempt(input, async () => onSignedIn(await signIn(key)), 'This API key is not valid.');
  }

  const errorLine = error ? (
    <p id="sign-in-error" class="field-error" role="alert">
      <span aria-hidden="true">✕ </span>
      {error}
    </p>
  ) : null;
  const invalid = error ? true : undefined;

  return (
    <main id="main" class="sign-in">
      <h1>
        <img src="/favicon.svg" alt="" width="32" height="32" /> Sign in to Outpost
      </h1>
      {step.kind === 'password' ? (
        <>
          <form key="password" method="post" action="/auth/session" onSubmit={submitPassword} noValidate>
            <label for="sign-in-email">Email</label>
            <input
              id="sign-in-email"
              name="email"
              type="email"
              autoComplete="username"
              spellcheck={false}
              ref={firstField}
              aria-describedby={error ? 'sign-in-error' : undefined}
              aria-invalid={invalid}
              required
            />
            <div class="sign-in-label-row">
              <label for="sign-in-password">Password</label>
              <a class="sign-in-forgot" href="/forgot-password">
                Forgot password?
              </a>
            </div>
            <input
              id="sign-in-password"
              name="password"
              type="password"
              autoComplete="current-password"
              aria-describedby={error ? 'sign-in-error' : undefined}
              aria-invalid={invalid}
              required
            />
            {errorLine}
            <button type="submit" disabled={busy}>
              {busy ? 'Signing in…' : 'Sign in'}
            </button>
          </form>
          {/* Other ways to sign in (single sign-on, an API key) go in this list, under the main form. */}
          <OtherWays>
            <li>
              <button
                type="button"
                class="button-secondary sign-in-way"
                onClick={() => go({ kind: 'api-key' })}
              >
                Sign in with an API key
              </button>
            </li>
          </OtherWays>
          <SsoSignIn />
        </>
      ) : step.kind === 'two-factor' ? (
        <form
          key="two-factor"
          method="post"
          onSubmit={(e) => submitCode(e, step.challenge)}
          noValidate
          aria-labelledby="sign-in-2fa"
        >
          <h2 id="sign-in-2fa">Two-factor authentication</h2>
          {recovery ? (
            <>
              <label for="sign-in-code">Recovery code</label>
              <input
                key="recovery"
                id="sign-in-code"
                name="code"
                type="text"
                autoComplete="off"
                spellcheck={false}
                ref={firstField}
                aria-describedby={error ? 'sign-in-code-hint sign-in-error' : 'sign-in-code-hint'}
                aria-invalid={invalid}
                required
              />
              <p id="sign-in-code-hint" class="field-hint">
                One of the ten codes you saved when you turned two-factor authentication on. Each works once.
              </p>
            </>
          ) : (
            <>
              <label for="sign-in-code">6-digit code</label>
              <input
                key="totp"
                id="sign-in-code"
                name="code"
                type="text"
                inputMode="numeric"
                autoComplete="one-time-code"
                pattern="[0-9]{6}"
                maxLength={6}
                spellcheck={false}
                ref={firstField}
                class="sign-in-code"
                aria-describedby={error ? 'sign-in-code-hint sign-in-error' : 'sign-in-code-hint'}
                aria-invalid={invalid}
                required
              />
              <p id="sign-in-code-hint" class="field-hint">
                The code your authenticator app shows for Outpost now.
              </p>
            </>
          )}
          {errorLine}
          <button type="submit" disabled={busy}>
            {busy ? 'Checking…' : 'Verify'}
          </button>
          <div class="sign-in-links">
            <button
              type="button"
              class="button-link"
              onClick={() => {
                setError(null);
                setRecovery(!recovery);
              }}
            >
              {recovery ? 'Use the code of your authenticator app' : 'Use a recovery code'}
            </button>
            <button type="button" class="button-link" onClick={() => go({ kind: 'password' })}>
              Start again
            </button>
          </div>
        </form>
      ) : (
        <>
          <form key="api-key" method="post" action="/auth/session" onSubmit={submitKey} noValidate>
            <label for="api-key">API key</label>
            <input
              id="api-key"
              name="apiKey"
              type="password"
              autoComplete="off"
              spellcheck={false}
              ref={firstField}
              aria-describedby={error ? 'api-key-hint sign-in-error' : 'api-key-hint'}
              aria-invalid={invalid}
              required
            />
            <p id="api-key-hint" class="field-hint">
              A key of the account, such as the one <code>outpost up</code> (or <code>outpost service</code>)
              printed at its first start. It is sent once and exchanged for a session; this browser never
              keeps it.
            </p>
            {errorLine}
            <button type="submit" disabled={busy}>
              {busy ? 'Signing in…' : 'Sign in'}
            </button>
          </form>
          <OtherWays>
            <li>
              <button
                type="button"
                class="button-secondary sign-in-way"
                onClick={() => go({ kind: 'password' })}
              >
                Sign in with email and password
              </button>
            </li>
          </OtherWays>
        </>
      )}
    </main>
  );
}

/** The other ways to sign in, under the main form: a list of buttons headed "Or". */
function OtherWays({ children }: { children: ComponentChildren }) {
  return (
    <section class="sign-in-other" aria-labelledby="sign-in-other">
      <h2 id="sign-in-other" class="sign-in-or">
        Or
      </h2>
      <ul class="sign-in-ways">{children}</ul>
    </section>
  );
}
