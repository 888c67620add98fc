import { useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { confirmPasswordReset } from '../api/session.js';
import { FormError } from '../ui/forms.js';
import { useTitle } from '../ui/hooks.js';
import { checkNewPassword, type NewPassword, NewPasswordFields } from '../ui/new-password.js';
import { useFragmentToken } from './token.js';

/**
 * `/reset-password#token=…`, the link of a password-reset email: the token is taken from the fragment (and
 * removed from the address bar), then a new password and its confirmation are sent with it
 * (`POST /auth/password-reset/confirm`). A used or expired link says so and links to a new request.
 */
export default function ResetPassword() {
  const token = useFragmentToken();
  return <ResetForm key={token ?? ''} token={token} />;
}

/** The form of one reset link's `token` (null: the address had none). */
function ResetForm({ token }: { token: string | null }) {
  useTitle('Choose a new password');
  const [value, setValue] = useState<NewPassword>({ password: '', confirm: '' });
  const [errors, setErrors] = useState<{ password?: string; confirm?: string }>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  const [deadLink, setDeadLink] = useState(token === null);
  const doneRef = useRef<HTMLDivElement>(null);

  async function submit(event: Event) {
    event.preventDefault();
    const problems = checkNewPassword(value);
    setErrors(problems);
    setError(null);
    if (problems.password || problems.confirm || token === null) return;
    setBusy(true);
    try {
      await confirmPasswordReset(token, value.password);
      setValue({ password: '', confirm: '' });
      setDone(true);
      requestAnimationFrame(() => doneRef.current?.focus());
    } catch (err) {
      if (err instanceof ApiError && err.field === 'token') setDeadLink(true);
      else if (err instanceof ApiError && err.field === 'password') setErrors({ password: err.message });
      else setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main id="main" class="sign-in">
      <h1>
        <img src="/favicon.svg" alt="" width="32" height="32" /> Choose a new password
      </h1>
      {done ? (
        <div class="notice notice-ok" role="status" tabIndex={-1} ref={doneRef}>
          <p>
            Your password is changed, and every session signed in with the old one has ended.{' '}
            <a href="/">Sign in</a> with the new one.
          </p>
        </div>
      ) : deadLink ? (
        <div class="notice notice-error" role="alert">
          <h2>This link does not work any more</h2>
          <p>
            A reset link works once and for a limited time, and only the newest one sent works.{' '}
            <a href="/forgot-password">Ask for a new link</a>.
          </p>
        </div>
      ) : (
        <form onSubmit={submit} noValidate>
          <NewPasswordFields value={value} onValue={setValue} errors={errors} />
          <FormError error={error} />
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : 'Set the password'}
          </button>
        </form>
      )}
      {done ? null : (
        <p class="sign-in-back">
          <a href="/">Back to sign in</a>
        </p>
      )}
    </main>
  );
}
