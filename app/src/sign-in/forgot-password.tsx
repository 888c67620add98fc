import { useRef, useState } from 'preact/hooks';
import { requestPasswordReset } from '../api/session.js';
import { FormError, TextField } from '../ui/forms.js';
import { useTitle } from '../ui/hooks.js';

/**
 * `/forgot-password`: asks for an email and sends `POST /auth/password-reset`. The page then says the same
 * thing whether the email belongs to someone or not (the service answers 202 either way), so it cannot be
 * used to find out who has an account.
 */
export default function ForgotPassword() {
  useTitle('Reset your password');
  const [email, setEmail] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [fieldError, setFieldError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState<string | null>(null);
  const doneRef = useRef<HTMLDivElement>(null);

  async function submit(event: Event) {
    event.preventDefault();
    const address = email.trim();
    if (!address.includes('@')) {
      setFieldError('Enter the email you sign in with.');
      return;
    }
    setFieldError(undefined);
    setBusy(true);
    setError(null);
    try {
      await requestPasswordReset(address);
      setSent(address);
      requestAnimationFrame(() => doneRef.current?.focus());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main id="main" class="sign-in">
      <h1>
        <img src="/favicon.svg" alt="" width="32" height="32" /> Reset your password
      </h1>
      {sent ? (
        <div class="notice notice-ok" role="status" tabIndex={-1} ref={doneRef}>
          <h2>Check your email</h2>
          <p>
            If <strong>{sent}</strong> belongs to a person of an Outpost account, a link to choose a new
            password is on its way. It works once, for a limited time. Nothing arrived? Check the spam folder,
            or ask an admin of your account.
          </p>
        </div>
      ) : (
        <form onSubmit={submit} noValidate aria-label="Reset your password">
          <p class="muted">We email you a link to choose a new password.</p>
          <TextField
            label="Email"
            type="email"
            name="email"
            autoComplete="username"
            spellcheck={false}
            required
            error={fieldError}
            value={email}
            onValue={setEmail}
          />
          <FormError error={error} />
          <button type="submit" disabled={busy}>
            {busy ? 'Sending…' : 'Email me a link'}
          </button>
        </form>
      )}
      <p class="sign-in-back">
        <a href="/">Back to sign in</a>
      </p>
    </main>
  );
}
