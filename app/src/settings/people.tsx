/**
 * The people of the account (`/settings/people`, `/v1/users`): each person's name, email, role, status
 * (active or invited), whether two-factor authentication is on, and their last sign-in. Admins and owners
 * also invite people (a role up to their own), change roles, remove people and end a person's sessions;
 * owners turn off the two-factor authentication of someone who lost their device. The service checks every
 * one of these again: the page only leaves out what the session's role may not do.
 */
import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import {
  changeUserRole,
  type InvitedUser,
  inviteUser,
  listUsers,
  removeUser,
  resetUserTwoFactor,
  revokeUserSessions,
  ROLE_LABELS,
  ROLES,
  type Role,
  type User,
} from '../api/users.js';
import { formatDateTime, formatRelative } from '../ui/format.js';
import { FormError, SelectField, TextField } from '../ui/forms.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import { can, useSession } from '../ui/permissions.js';
import {
  ConfirmButton,
  errorOf,
  FormButtons,
  formLevelError,
  ListStatus,
  OneTimeSecret,
  YesNo,
} from '../ui/widgets.js';
import { SettingsTop } from './page-top.js';

/** Whether `role` may manage people (the `admin` permission: ADMIN and OWNER). */
export function administers(role: Role | undefined): boolean {
  return can(role ?? null, 'admin');
}

/** The roles `role` may give: its own and the weaker ones. */
export function grantableRoles(role: Role): Role[] {
  return ROLES.slice(0, ROLES.indexOf(role) + 1);
}

/** What a person is called in a sentence: their name, or their email before they chose one. */
function nameOf(user: User): string {
  return user.name || user.email;
}

/** The people page: the list, the invitation form and the link of an invitation no email carried. */
export function PeoplePage() {
  useTitle('People · Settings');
  const session = useSession();
  const users = useLoad((signal) => listUsers(signal), []);
  const [inviting, setInviting] = useState(false);
  const [link, setLink] = useState<{ email: string; url: string } | null>(null);
  const [status, setStatus] = useState('');
  const myRole = session?.role;
  const me = session?.user?.id;
  const admin = administers(myRole);

  /** Whether this session may change, remove or sign out `user`: never itself, an owner only if an owner. */
  const manages = (user: User) => admin && user.id !== me && (user.role !== 'OWNER' || myRole === 'OWNER');

  return (
    <>
      {admin ? (
        <SettingsTop
          title="People"
          formOpen={inviting}
          newLabel="Invite someone"
          onToggle={() => {
            setStatus('');
            setInviting(!inviting);
          }}
          status={status}
        >
          The people who sign in to this account, each with a role: read only, read & write (change the
          monitoring), admin (also people, API keys and private locations) or owner. An invitation is emailed
          and works for 7 days.
        </SettingsTop>
      ) : (
        <>
          <h1>People</h1>
          <p class="muted st-intro">
            The people who sign in to this account, each with a role. Admins and owners invite people and
            change their roles.
          </p>
        </>
      )}
      {link ? (
        <OneTimeSecret
          title={
            <>
              No email was sent (the service has no SMTP server): send <strong>{link.email}</strong> this
              invitation link yourself.
            </>
          }
          label={`Invitation link for ${link.email}`}
          secret={link.url}
          onDismiss={() => setLink(null)}
        >
          <p class="muted">It works once, for 7 days. Whoever opens it joins the account as this person.</p>
        </OneTimeSecret>
      ) : null}
      {inviting && myRole ? (
        <InviteForm
          myRole={myRole}
          onInvited={(user) => {
            setInviting(false);
            setStatus(
              user.invitationUrl
                ? `Invited ${user.email}.`
                : `Invited ${user.email}: the invitation is emailed.`,
            );
            setLink(user.invitationUrl ? { email: user.email, url: user.invitationUrl } : null);
            users.reload();
          }}
          onCancel={() => setInviting(false)}
        />
      ) : null}
      <ListStatus load={users} loading="Loading people" isEmpty={users.data?.length === 0}>
        Nobody signs in to this account with a password yet.
      </ListStatus>
      {users.data && users.data.length > 0 ? (
        <div class="table-wrap">
          <table class="misc-table st-table">
            <caption class="visually-hidden">People</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Two-factor</th>
                <th scope="col">Last sign-in</th>
                {admin ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {users.data.map((u) => (
                <PersonRow
                  key={u.id}
                  user={u}
                  isMe={u.id === me}
                  showActions={admin}
                  manages={manages(u)}
                  grantable={myRole ? grantableRoles(myRole) : []}
                  owner={myRole === 'OWNER'}
                  onChanged={(message) => {
                    setStatus(message);
                    users.reload();
                  }}
                />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

/** One person's row, with the actions this session may take on them. */
function PersonRow({
  user,
  isMe,
  showActions,
  manages,
  grantable,
  owner,
  onChanged,
}: {
  user: User;
  isMe: boolean;
  /** The table has an Actions column. */
  showActions: boolean;
  /** This session may change, remove and sign out this person. */
  manages: boolean;
  /** The roles this session may give. */
  grantable: readonly Role[];
  /** This session is an owner's (may turn off someone's two-factor authentication). */
  owner: boolean;
  onChanged: (message: string) => void;
}) {
  const name = nameOf(user);
  const [role, setRole] = useState<Role>(user.role);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const choices = grantable.includes(user.role) ? grantable : [...grantable, user.role];

  async function saveRole(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await changeUserRole(user.id, role);
      onChanged(`${name} is now ${ROLE_LABELS[role].toLowerCase()}.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <tr>
      <th scope="row">
        {user.name || <span class="muted">Not chosen yet</span>}
        {isMe ? (
          <>
            {' '}
            <span class="badge badge-passing">You</span>
          </>
        ) : null}
      </th>
      <td data-label="Email">{user.email}</td>
      <td data-label="Role">{ROLE_LABELS[user.role]}</td>
      <td data-label="Status">
        {user.status === 'INVITED' ? (
          <span class="badge badge-degraded">
            <span aria-hidden="true" class="badge-glyph">
              ✉
            </span>
            Invited
          </span>
        ) : (
          <span class="badge badge-passing">
            <span aria-hidden="true" class="badge-glyph">
              ✓
            </span>
            Active
          </span>
        )}
        {user.sso ? <span class="muted st-note"> Single sign-on</span> : null}
      </td>
      <td data-label="Two-factor">
        <YesNo value={user.twoFactorEnabled} yes="On" no="Off" />
      </td>
      <td data-label="Last sign-in">
        {user.lastSignInAt ? (
          <time dateTime={user.lastSignInAt} title={formatDateTime(user.lastSignInAt)}>
            {formatRelative(user.lastSignInAt)}
          </time>
        ) : (
          <span class="muted">Never</span>
        )}
      </td>
      {showActions ? (
        <td class="misc-actions-cell" data-label="Actions">
          {manages ? (
            <div class="st-row-buttons">
              <form class="st-role-form" onSubmit={saveRole} aria-label={`Change the role of ${name}`}>
                <SelectField
                  label={<span class="visually-hidden">Role of {name}</span>}
                  value={role}
                  onValue={setRole}
                  options={choices.map((r) => ({ value: r, label: ROLE_LABELS[r] }))}
                  error={error instanceof Error ? error.message : undefined}
                />
                <button type="submit" class="misc-small" disabled={busy || role === user.role}>
                  {busy ? 'Saving…' : 'Change role'} <span class="visually-hidden">of {name}</span>
                </button>
              </form>
              {user.status === 'ACTIVE' ? (
                <ConfirmButton
                  small
                  label={
                    <>
                      Sign out <span class="visually-hidden">{name}</span> everywhere
                    </>
                  }
                  question={
                    <>
                      End every session of <strong>{name}</strong>? They sign in again with their password.
                    </>
                  }
                  confirmLabel="End sessions"
                  onConfirm={async () => {
                    await revokeUserSessions(user.id);
                    onChanged(`Signed ${name} out everywhere.`);
                  }}
                />
              ) : null}
              {owner && user.twoFactorEnabled ? (
                <ConfirmButton
                  small
                  label={
                    <>
                      Turn off two-factor <span class="visually-hidden">of {name}</span>
                    </>
                  }
                  question={
                    <>
                      Turn off the two-factor authentication of <strong>{name}</strong>? Do this only when you
                      know they lost their device: their password alone then signs them in.
                    </>
                  }
                  confirmLabel="Turn off two-factor"
                  onConfirm={async () => {
                    await resetUserTwoFactor(user.id);
                    onChanged(`Turned off the two-factor authentication of ${name}.`);
                  }}
                />
              ) : null}
              <ConfirmButton
                small
                label={
                  <>
                    {user.status === 'INVITED' ? 'Withdraw invitation' : 'Remove'}{' '}
                    <span class="visually-hidden">{name}</span>
                  </>
                }
                question={
                  user.status === 'INVITED' ? (
                    <>
                      Withdraw the invitation of <strong>{name}</strong>? Its link stops working.
                    </>
                  ) : (
                    <>
                      Remove <strong>{name}</strong> from the account? Their sessions end at once.
                    </>
                  )
                }
                confirmLabel={user.status === 'INVITED' ? 'Withdraw' : 'Remove'}
                onConfirm={async () => {
                  await removeUser(user.id);
                  onChanged(
                    user.status === 'INVITED' ? `Withdrew the invitation of ${name}.` : `Removed ${name}.`,
                  );
                }}
              />
            </div>
          ) : isMe ? (
            <a href="/settings/account">My account</a>
          ) : (
            <span class="muted">Only an owner changes an owner</span>
          )}
        </td>
      ) : null}
    </tr>
  );
}

/** The invitation form: the email, an optional name and a role up to `myRole`. */
function InviteForm({
  myRole,
  onInvited,
  onCancel,
}: {
  myRole: Role;
  onInvited: (user: InvitedUser) => void;
  onCancel: () => void;
}) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('READ_ONLY');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onInvited(
        await inviteUser({ email: email.trim(), role, ...(name.trim() ? { name: name.trim() } : {}) }),
      );
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const taken = error instanceof ApiError && error.code === 'OUTPOST_ERR_EMAIL_TAKEN';
  return (
    <form class="card misc-form" onSubmit={submit} noValidate aria-labelledby="st-invite">
      <h2 id="st-invite">Invite someone</h2>
      <TextField
        label="Email"
        type="email"
        autoComplete="off"
        spellcheck={false}
        required
        maxLength={320}
        error={taken ? (error as ApiError).message : errorOf(error, 'email')}
        value={email}
        onValue={setEmail}
      />
      <TextField
        label="Name (optional)"
        hint="They can choose their own when they accept."
        maxLength={200}
        error={errorOf(error, 'name')}
        value={name}
        onValue={setName}
      />
      <SelectField
        label="Role"
        hint="Up to your own role."
        value={role}
        onValue={setRole}
        options={grantableRoles(myRole).map((r) => ({ value: r, label: ROLE_LABELS[r] }))}
        error={errorOf(error, 'role')}
      />
      <FormError error={taken ? null : formLevelError(error, ['email', 'name', 'role'])} />
      <FormButtons label="Send invitation" busy={busy} busyLabel="Inviting…" onCancel={onCancel} />
    </form>
  );
}
