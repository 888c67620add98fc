import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { acceptInvitation, fetchInvitation, type SessionInfo } from '../api/session.js';
import { FormError, TextField } from '../ui/forms.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import { checkNewPassword, type NewPassword, NewPasswordFields } from '../ui/new-password.js';
import { Loading } from '../ui/page.js';
import { useFragmentToken } from './token.js';

/**
 * `/accept-invitation#token=…`, the link of an invitation email: the token is taken from the fragment (and
 * removed from the address bar), the invitation is read (`GET /auth/invitations/{token}`: the account and
 * the email), and the person gives a name and a password (`POST /auth/invitations/accept`), which signs
 * them in (`onSignedIn` with the new session).
 */
export default function AcceptInvitation({ onSignedIn }: { onSignedIn: (session: SessionInfo) => void }) {
  const token = useFragmentToken();
  return <AcceptForm key={token ?? ''} token={token} onSignedIn={onSignedIn} />;
}

/** The page of one invitation's `token` (null: the address had none). */
function AcceptForm({
  token,
  onSignedIn,
}: {
  token: string | null;
  onSignedIn: (session: SessionInfo) => void;
}) {
  useTitle('Join an account');
  const invitation = useLoad(
    (signal) =>
      token === null
        ? Promise.resolve(null)
        : fetchInvitation(token).catch((err: unknown) => {
            if (signal.aborted) throw err;
            if (err instanceof ApiError && err.status === 404) return null;
            throw err;
          }),
    [token],
  );
  const [name, setName] = useState('');
  const [value, setValue] = useState<NewPassword>({ password: '', confirm: '' });
  const [errors, setErrors] = useState<{ name?: string; password?: string; confirm?: string }>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [deadLink, setDeadLink] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const problems = { ...checkNewPassword(value), ...(name.trim() ? {} : { name: 'Enter your name.' }) };
    setErrors(problems);
    setError(null);
    if (problems.name || problems.password || problems.confirm || token === null) return;
    setBusy(true);
    try {
      const session = await acceptInvitation(token, name.trim(), value.password);
      setValue({ password: '', confirm: '' });
      onSignedIn(session);
    } catch (err) {
      if (err instanceof ApiError && (err.field === 'token' || err.status === 404)) setDeadLink(true);
      else if (err instanceof ApiError && (err.field === 'password' || err.field === 'name'))
        setErrors({ [err.field]: err.message });
      else setError(err);
    } finally {
      setBusy(false);
    }
  }

  let body: preact.ComponentChildren;
  if (invitation.error) {
    body = <FormError error={invitation.error} />;
  } else if (invitation.data === undefined) {
    body = <Loading what="Reading the invitation" />;
  } else if (invitation.data === null || deadLink) {
    body = (
      <div class="notice notice-error" role="alert">
        <h2>This invitation does not work any more</h2>
        <p>
          An invitation works once, for 7 days, until it is withdrawn. Ask the person who invited you to
          invite you again.
        </p>
      </div>
    );
  } else {
    const { email, accountName } = invitation.data;
    body = (
      <form onSubmit={submit} noValidate aria-label="Join the account">
        <p>
          You are invited to the Outpost account <strong>{accountName}</strong> as <strong>{email}</strong>.
          Choose your name and a password to sign in with.
        </p>
        <input type="email" name="email" autoComplete="username" value={email} readOnly hidden />
        <TextField
          label="Your name"
          name="name"
          autoComplete="name"
          required
          maxLength={200}
          error={errors.name}
          value={name}
          onValue={setName}
        />
        <NewPasswordFields value={value} onValue={setValue} errors={errors} label="Password" />
        <FormError error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Joining…' : 'Join the account'}
        </button>
      </form>
    );
  }

  return (
    <main id="main" class="sign-in">
      <h1>
        <img src="/favicon.svg" alt="" width="32" height="32" /> Join an account
      </h1>
      {token === null ? (
        <div class="notice notice-error" role="alert">
          <h2>This link is incomplete</h2>
          <p>Open the link of the invitation email again, whole: its end holds the invitation.</p>
        </div>
      ) : (
        body
      )}
    </main>
  );
}
