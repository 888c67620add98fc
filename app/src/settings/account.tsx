/**
 * The signed-in person's own account (`/settings/account`, `/v1/users/me`): changing the password,
 * turning two-factor authentication on (a QR code of the `otpauth://` URL and the secret as text, confirmed
 * with a code, then the ten recovery codes shown once) or off, and the person's sessions, each of which
 * can be ended. A session opened with an API key belongs to no person: the page says so.
 *
 * The secret and the recovery codes live in this page's state only while they are shown, never in the URL
 * or browser storage; passwords and codes are sent once and the fields cleared.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import {
  beginTwoFactor,
  changeMyPassword,
  confirmTwoFactor,
  disableTwoFactor,
  fetchMe,
  listMySessions,
  type MySession,
  revokeMySession,
  ROLE_LABELS,
  type TwoFactorEnrolment,
  type User,
} from '../api/users.js';
import { formatDateTime, formatRelative } from '../ui/format.js';
import { FormError, TextField } from '../ui/forms.js';
import { type Loaded, useLoad, useTitle } from '../ui/hooks.js';
import { checkNewPassword, type NewPassword, NewPasswordFields } from '../ui/new-password.js';
import { ErrorNotice, Loading, PageHeader } from '../ui/page.js';
import { ConfirmButton, errorOf, FormButtons, formLevelError, YesNo } from '../ui/widgets.js';

/** `words` when `error` is the API's refusal of the field `name` (a wrong password or code), else undefined. */
function refusal(error: unknown, name: string, words: string): string | undefined {
  return errorOf(error, name) ? words : undefined;
}

/** The My account page: who is signed in, then the password, two-factor and sessions sections. */
export function AccountPage() {
  useTitle('My account · Settings');
  const me = useLoad((signal) => fetchMe(signal), []);
  const notAPerson = me.error instanceof ApiError && me.error.code === 'OUTPOST_ERR_NOT_A_USER';

  return (
    <>
      <PageHeader title="My account" />
      {notAPerson ? (
        <div class="notice" role="status">
          This browser signed in with an API key, which belongs to no person: there is no password, two-factor
          authentication or session list to manage here.
        </div>
      ) : me.error && !me.data ? (
        <ErrorNotice error={me.error} />
      ) : !me.data ? (
        <Loading what="Loading your account" />
      ) : (
        <>
          <p class="muted st-intro">
            Signed in as <strong>{me.data.name}</strong> ({me.data.email}), {ROLE_LABELS[me.data.role]}.
          </p>
          {me.data.sso ? null : <PasswordSection />}
          <TwoFactorSection me={me} />
          <SessionsSection />
        </>
      )}
    </>
  );
}

/** Changing the password: the current one, the new one and its confirmation. */
function PasswordSection() {
  const [current, setCurrent] = useState('');
  const [value, setValue] = useState<NewPassword>({ password: '', confirm: '' });
  const [errors, setErrors] = useState<{ password?: string; confirm?: string }>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState('');

  async function submit(event: Event) {
    event.preventDefault();
    const problems = checkNewPassword(value);
    setErrors(problems);
    setError(null);
    setStatus('');
    if (problems.password || problems.confirm) return;
    setBusy(true);
    try {
      await changeMyPassword(current, value.password);
      setCurrent('');
      setValue({ password: '', confirm: '' });
      setStatus('Password changed. Your other sessions have ended.');
    } catch (err) {
      if (err instanceof ApiError && err.field === 'newPassword') setErrors({ password: err.message });
      else setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section class="card misc-form st-section" aria-labelledby="st-password">
      <h2 id="st-password">Password</h2>
      <form onSubmit={submit} noValidate aria-label="Change your password">
        <TextField
          label="Current password"
          type="password"
          autoComplete="current-password"
          required
          error={refusal(error, 'currentPassword', 'This is not your current password.')}
          value={current}
          onValue={setCurrent}
        />
        <NewPasswordFields value={value} onValue={setValue} errors={errors} />
        <FormError error={formLevelError(error, ['currentPassword'])} />
        <FormButtons label="Change password" busy={busy} status={status} />
      </form>
    </section>
  );
}

/** The two-factor section's steps: off or on, enrolling (secret shown), or the recovery codes just made. */
type TwoFactorStep =
  | { kind: 'idle' }
  | { kind: 'enrolling'; enrolment: TwoFactorEnrolment }
  | { kind: 'codes'; recoveryCodes: string[] };

/** Two-factor authentication: its state, turning it on (enrolment) and off. */
function TwoFactorSection({ me }: { me: Loaded<User> }) {
  const [step, setStep] = useState<TwoFactorStep>({ kind: 'idle' });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [turningOff, setTurningOff] = useState(false);
  const [status, setStatus] = useState('');
  const on = me.data?.twoFactorEnabled === true;

  async function begin() {
    setBusy(true);
    setError(null);
    setStatus('');
    try {
      setStep({ kind: 'enrolling', enrolment: await beginTwoFactor() });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section class="card st-section" aria-labelledby="st-2fa">
      <h2 id="st-2fa">Two-factor authentication</h2>
      <p>
        <YesNo value={on} yes="On" no="Off" />{' '}
        {on
          ? 'Signing in asks for a code of your authenticator app (or a recovery code) after the password.'
          : 'Signing in asks for your password only. With two-factor authentication, a stolen password is not enough.'}
      </p>
      <p role="status" class="muted">
        {status}
      </p>
      {step.kind === 'enrolling' ? (
        <Enrolment
          enrolment={step.enrolment}
          onConfirmed={(recoveryCodes) => {
            setStep({ kind: 'codes', recoveryCodes });
            me.reload();
          }}
          onCancel={() => setStep({ kind: 'idle' })}
        />
      ) : step.kind === 'codes' ? (
        <RecoveryCodes
          codes={step.recoveryCodes}
          onDone={() => {
            setStep({ kind: 'idle' });
            setStatus('Two-factor authentication is on.');
          }}
        />
      ) : on ? (
        turningOff ? (
          <TurnOffForm
            onDone={() => {
              setTurningOff(false);
              setStatus('Two-factor authentication is off.');
              me.reload();
            }}
            onCancel={() => setTurningOff(false)}
          />
        ) : (
          <button
            type="button"
            class="button-danger"
            onClick={() => {
              setStatus('');
              setTurningOff(true);
            }}
          >
            Turn off two-factor authentication
          </button>
        )
      ) : (
        <>
          <FormError error={error} />
          <button type="button" onClick={begin} disabled={busy}>
            {busy ? 'Starting…' : 'Turn on two-factor authentication'}
          </button>
        </>
      )}
    </section>
  );
}

/** The squares of a QR code of `text` as one SVG path (a 4-module quiet zone around them). */
async function qrPath(text: string): Promise<{ size: number; d: string }> {
  const { create } = await import('qrcode');
  const { modules } = create(text, { errorCorrectionLevel: 'M' });
  let d = '';
  for (let row = 0; row < modules.size; row++) {
    for (let col = 0; col < modules.size; col++) {
      if (modules.get(row, col)) d += `M${col + 4} ${row + 4}h1v1h-1z`;
    }
  }
  return { size: modules.size + 8, d };
}

/** The QR code of an `otpauth://` URL, drawn as SVG (dark on light whatever the colour scheme). */
export function QrCode({ text, label }: { text: string; label: string }) {
  const [qr, setQr] = useState<{ size: number; d: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    qrPath(text).then(
      (value) => live && setQr(value),
      (err: unknown) => live && setError(err),
    );
    return () => {
      live = false;
    };
  }, [text]);
  if (error) return <FormError error={error} />;
  if (!qr) return <Loading what="Drawing the QR code" />;
  return (
    <svg
      class="st-qr"
      role="img"
      aria-label={label}
      viewBox={`0 0 ${qr.size} ${qr.size}`}
      width="200"
      height="200"
      shape-rendering="crispEdges"
    >
      <rect width={qr.size} height={qr.size} fill="#ffffff" />
      <path d={qr.d} fill="#000000" />
    </svg>
  );
}

/** The base32 secret in groups of four, easier to type into an app by hand. */
function grouped(secret: string): string {
  return secret.replace(/(.{4})/g, '$1 ').trim();
}

/** Enrolment: the QR code and the secret, and the code of the app that confirms it. */
function Enrolment({
  enrolment,
  onConfirmed,
  onCancel,
}: {
  enrolment: TwoFactorEnrolment;
  onConfirmed: (recoveryCodes: string[]) => void;
  onCancel: () => void;
}) {
  const [code, setCode] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { recoveryCodes } = await confirmTwoFactor(code.replace(/\s+/g, ''));
      onConfirmed(recoveryCodes);
    } catch (err) {
      setCode('');
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div class="st-enrol">
      <ol class="st-steps">
        <li>
          <p>Scan this QR code with an authenticator app (1Password, Google Authenticator, Aegis…):</p>
          <QrCode
            text={enrolment.otpauthUrl}
            label="QR code of the two-factor secret for your authenticator app"
          />
          <p>
            Or type this secret into the app: <code class="st-secret">{grouped(enrolment.secret)}</code>
          </p>
        </li>
        <li>
          <form onSubmit={submit} noValidate aria-label="Confirm two-factor authentication" class="misc-form">
            <TextField
              label="The 6-digit code the app shows"
              inputMode="numeric"
              autoComplete="one-time-code"
              maxLength={6}
              pattern="[0-9]{6}"
              class="sign-in-code"
              spellcheck={false}
              required
              error={refusal(
                error,
                'code',
                'This code is not right. Check that the time of your device is right, and enter the code it shows now.',
              )}
              value={code}
              onValue={setCode}
            />
            <FormError error={formLevelError(error, ['code'])} />
            <FormButtons label="Turn on" busy={busy} busyLabel="Checking…" onCancel={onCancel} />
          </form>
        </li>
      </ol>
    </div>
  );
}

/** The ten recovery codes, shown this once, with copy and download; Done forgets them. */
function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const boxRef = useRef<HTMLElement>(null);
  const text = `Outpost recovery codes (each works once):\n\n${codes.join('\n')}\n`;

  useEffect(() => {
    boxRef.current?.focus();
  }, []);

  async function copy() {
    try {
      await navigator.clipboard.writeText(codes.join('\n'));
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  }

  function download() {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'outpost-recovery-codes.txt';
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  return (
    <section class="notice notice-ok misc-secret" tabIndex={-1} ref={boxRef} aria-labelledby="st-codes">
      <h3 id="st-codes">Two-factor authentication is on. Save your recovery codes</h3>
      <p>
        <strong>They will not be shown again.</strong> Each one signs you in once in place of a code of the
        app, should you lose your device. Keep them somewhere safe, such as a password manager.
      </p>
      <ol class="st-codes" aria-label="Recovery codes">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ol>
      <div class="misc-buttons">
        <button type="button" onClick={copy}>
          Copy
        </button>
        <button type="button" class="button-secondary" onClick={download}>
          Download
        </button>
        <button type="button" class="button-secondary" onClick={onDone}>
          Done, I saved them
        </button>
      </div>
      <p aria-live="polite" class="muted">
        {copied === 'yes'
          ? 'Copied to the clipboard.'
          : copied === 'failed'
            ? 'The browser did not allow copying: select the codes, or download them.'
            : ''}
      </p>
    </section>
  );
}

/** Turning two-factor authentication off: the password and a current code (or a recovery code). */
function TurnOffForm({ onDone, onCancel }: { onDone: () => void; onCancel: () => void }) {
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await disableTwoFactor(password, code.replace(/\s+/g, ''));
      onDone();
    } catch (err) {
      setPassword('');
      setCode('');
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="misc-form" onSubmit={submit} noValidate aria-label="Turn off two-factor authentication">
      <TextField
        label="Your password"
        type="password"
        autoComplete="current-password"
        required
        error={refusal(error, 'password', 'This is not your password.')}
        value={password}
        onValue={setPassword}
      />
      <TextField
        label="Code of your authenticator app, or a recovery code"
        autoComplete="one-time-code"
        spellcheck={false}
        required
        error={refusal(error, 'code', 'This is neither a current code nor an unused recovery code.')}
        value={code}
        onValue={setCode}
      />
      <FormError error={formLevelError(error, ['password', 'code'])} />
      <FormButtons label="Turn off" busy={busy} busyLabel="Turning off…" onCancel={onCancel} />
    </form>
  );
}

/** A browser's user agent in a few words: "Firefox on Linux", or the start of it when unknown. */
export function describeUserAgent(userAgent: string | null): string {
  if (!userAgent) return 'Unknown browser';
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /Firefox\//.test(userAgent)
      ? 'Firefox'
      : /Chrom(e|ium)\//.test(userAgent)
        ? 'Chrome'
        : /Safari\//.test(userAgent)
          ? 'Safari'
          : null;
  const os = /Android/.test(userAgent)
    ? 'Android'
    : /iPhone|iPad/.test(userAgent)
      ? 'iOS'
      : /Windows/.test(userAgent)
        ? 'Windows'
        : /Mac OS X|Macintosh/.test(userAgent)
          ? 'macOS'
          : /Linux|X11/.test(userAgent)
            ? 'Linux'
            : null;
  if (browser && os) return `${browser} on ${os}`;
  return browser ?? os ?? userAgent.slice(0, 60);
}

/** The person's sessions, this browser's marked, each other one with a button that ends it. */
function SessionsSection() {
  const sessions = useLoad((signal) => listMySessions(signal), []);
  const [status, setStatus] = useState('');

  return (
    <section class="st-section" aria-labelledby="st-sessions">
      <h2 id="st-sessions">Sessions</h2>
      <p class="muted">
        The browsers signed in as you. A session ends 30 days after signing in, or after 7 days unused.
      </p>
      <p role="status" class="muted">
        {status}
      </p>
      {sessions.error && !sessions.data ? <ErrorNotice error={sessions.error} /> : null}
      {!sessions.data && !sessions.error ? <Loading what="Loading sessions" /> : null}
      {sessions.data ? (
        <div class="table-wrap">
          <table class="misc-table st-table">
            <caption class="visually-hidden">Your sessions</caption>
            <thead>
              <tr>
                <th scope="col">Browser</th>
                <th scope="col">Signed in</th>
                <th scope="col">Last active</th>
                <th scope="col">Ends</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {sessions.data.map((s: MySession) => {
                const what = describeUserAgent(s.userAgent);
                return (
                  <tr key={s.id}>
                    <th scope="row">
                      {what}
                      {s.current ? (
                        <>
                          {' '}
                          <span class="badge badge-passing">This browser</span>
                        </>
                      ) : null}
                    </th>
                    <td data-label="Signed in">{formatDateTime(s.createdAt)}</td>
                    <td data-label="Last active">
                      <time dateTime={s.lastSeenAt} title={formatDateTime(s.lastSeenAt)}>
                        {formatRelative(s.lastSeenAt)}
                      </time>
                    </td>
                    <td data-label="Ends">{formatDateTime(s.expiresAt)}</td>
                    <td class="misc-actions-cell" data-label="Actions">
                      {s.current ? (
                        <span class="muted">Sign out to end it</span>
                      ) : (
                        <ConfirmButton
                          small
                          label={
                            <>
                              End{' '}
                              <span class="visually-hidden">
                                the session of {what} since {formatDateTime(s.createdAt)}
                              </span>
                            </>
                          }
                          question={
                            <>
                              End the session of <strong>{what}</strong>, signed in{' '}
                              {formatDateTime(s.createdAt)}? That browser is signed out at its next request.
                            </>
                          }
                          confirmLabel="End session"
                          onConfirm={async () => {
                            await revokeMySession(s.id);
                            setStatus(`Ended the session of ${what}.`);
                            sessions.reload();
                          }}
                        />
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
