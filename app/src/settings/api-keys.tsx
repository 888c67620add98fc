/**
 * The account's API keys (`/settings/api-keys`, `/v1/api-keys`, permission `admin`): every key by its name
 * and first characters, its role, when it expires, when it was made and last used; creating one with a role
 * (at most the session's) and an optional expiry date (the key shown once, with a copy button) and revoking
 * one. The key this browser signed in with cannot be revoked from its own session (the API answers 409,
 * shown in the question), nor can a key of a stronger role than the session's (not offered).
 */
import { useState } from 'preact/hooks';
import { type NewApiKey, createApiKey, listApiKeys, revokeApiKey } from '../api/api-keys.js';
import type { ApiKey, CreatedApiKey } from '../api/schemas.js';
import { formatDateTime, formatRelative } from '../ui/format.js';
import { FormError, SelectField, TextField } from '../ui/forms.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import { ROLE_SUMMARIES, type Role, rankOf, rolesUpTo, useSession } from '../ui/permissions.js';
import { SettingsTop } from './page-top.js';
import {
  ConfirmButton,
  errorOf,
  FormButtons,
  formLevelError,
  ListStatus,
  OneTimeSecret,
} from '../ui/widgets.js';

/** The API keys page: the list, the form that creates one and the key just created. */
export function ApiKeysPage() {
  useTitle('API keys · Settings');
  const keys = useLoad((signal) => listApiKeys(signal), []);
  const session = useSession();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [status, setStatus] = useState('');
  const ownPrefix = session?.keyPrefix ?? undefined;
  const sessionRank = session ? rankOf(session.role) : -1;

  return (
    <>
      <SettingsTop
        title="API keys"
        formOpen={creating}
        newLabel="New API key"
        onToggle={() => {
          setStatus('');
          setCreating(!creating);
        }}
        status={status}
        permission="admin"
      >
        Keys of the account for the API (<code>Authorization: Bearer op_…</code>) and for signing in here.
        Each key acts with its role (READ_ONLY reads, READ_WRITE also changes the monitoring, ADMIN also
        manages keys and private locations, OWNER owns the account) until it expires. Outpost stores only a
        hash of each key: a key is shown once, when it is made. Revoking a key, or its expiry, ends the
        sessions opened with it.
      </SettingsTop>
      {created ? (
        <OneTimeSecret
          title={
            <>
              API key <strong>{created.name}</strong> created:
            </>
          }
          label={`API key ${created.name ?? ''}`}
          secret={created.rawKey}
          onDismiss={() => setCreated(null)}
        >
          <p class="muted">
            Send it as <code>Authorization: Bearer …</code>, or sign in to this app with it.
          </p>
        </OneTimeSecret>
      ) : null}
      {creating && session ? (
        <CreateKeyForm
          sessionRole={session.role}
          onCreated={(key) => {
            setCreating(false);
            setCreated(key);
            keys.reload();
          }}
          onCancel={() => setCreating(false)}
        />
      ) : null}
      <ListStatus load={keys} loading="Loading API keys" isEmpty={keys.data?.length === 0}>
        No API key is listed. Create one with <strong>New API key</strong>.
      </ListStatus>
      {keys.data && keys.data.length > 0 ? (
        <div class="table-wrap">
          <table class="misc-table st-table">
            <caption class="visually-hidden">API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Role</th>
                <th scope="col">Expires</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {keys.data.map((k) => {
                const name = k.name ?? 'First key';
                const own = ownPrefix !== undefined && k.keyPrefix === ownPrefix;
                return (
                  <tr key={k.id}>
                    <th scope="row">
                      {name}
                      {own ? (
                        <>
                          {' '}
                          <span class="badge badge-passing">This session</span>
                        </>
                      ) : null}
                    </th>
                    <td data-label="Key">
                      <code>{k.keyPrefix}…</code>
                    </td>
                    <td data-label="Role">
                      <code>{k.role}</code>
                    </td>
                    <td data-label="Expires">
                      <Expiry expiresAt={k.expiresAt} />
                    </td>
                    <td data-label="Created">{formatDateTime(k.createdAt)}</td>
                    <td data-label="Last used">
                      {k.lastUsedAt ? (
                        <time dateTime={k.lastUsedAt} title={formatDateTime(k.lastUsedAt)}>
                          {formatRelative(k.lastUsedAt)}
                        </time>
                      ) : (
                        <span class="muted">Never</span>
                      )}
                    </td>
                    <td class="misc-actions-cell">
                      {rankOf(k.role) > sessionRank ? (
                        <span class="muted">Stronger than your role</span>
                      ) : (
                        <ConfirmButton
                          small
                          label={
                            <>
                              Revoke <span class="visually-hidden">{name}</span>
                            </>
                          }
                          question={
                            <>
                              Revoke <strong>{name}</strong> (<code>{k.keyPrefix}…</code>)? It stops working
                              at once, and every session opened with it ends.
                            </>
                          }
                          confirmLabel="Revoke key"
                          onConfirm={async () => {
                            await revokeApiKey(k.id);
                            setStatus(`Revoked ${name}.`);
                            keys.reload();
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
    </>
  );
}

/** When a key expires: never, its date, or "Expired" once past (to the minute, as the service keeps it). */
function Expiry({ expiresAt, nowMs = Date.now() }: { expiresAt: ApiKey['expiresAt']; nowMs?: number }) {
  if (expiresAt === null) return <span class="muted">Never</span>;
  const past = new Date(expiresAt).getTime() <= nowMs;
  return (
    <>
      {past ? <span class="badge badge-failing">Expired</span> : null}{' '}
      <time dateTime={expiresAt} title={formatDateTime(expiresAt)}>
        {past
          ? formatDateTime(expiresAt)
          : `${formatDateTime(expiresAt)} (${formatRelative(expiresAt, nowMs)})`}
      </time>
    </>
  );
}

/**
 * The end of the local day `date` (`YYYY-MM-DD`, an `<input type="date">`'s value) as ISO 8601: a key
 * "expiring on" a day works through that whole day where the browser is. Undefined for an empty or
 * malformed date.
 */
export function endOfLocalDay(date: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!match) return undefined;
  const end = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]), 23, 59, 59, 999);
  return Number.isNaN(end.getTime()) ? undefined : end.toISOString();
}

/** Today where the browser is, as `YYYY-MM-DD`: the earliest expiry date the form offers. */
function localToday(now = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

/**
 * The form that creates a key: its name, its role (the session's roles and the weaker ones; the session's
 * by default) and an optional expiry date (the key works until the end of that day, local time).
 */
function CreateKeyForm({
  sessionRole,
  onCreated,
  onCancel,
}: {
  sessionRole: Role;
  onCreated: (key: CreatedApiKey) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>(sessionRole);
  const [expiresOn, setExpiresOn] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const body: NewApiKey = { name: name.trim(), role };
    const expiresAt = endOfLocalDay(expiresOn);
    if (expiresAt !== undefined) body.expiresAt = expiresAt;
    try {
      onCreated(await createApiKey(body));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="card misc-form" onSubmit={submit} noValidate aria-labelledby="st-key-new">
      <h2 id="st-key-new">New API key</h2>
      <TextField
        label="Name"
        hint="What uses it, to tell keys apart: CI deploy, Grafana, Terraform."
        error={errorOf(error, 'name')}
        required
        maxLength={100}
        value={name}
        onValue={setName}
      />
      <SelectField
        label="Role"
        hint="What the key may do: at most what your own role may."
        error={errorOf(error, 'role')}
        value={role}
        onValue={setRole}
        options={rolesUpTo(sessionRole).map((r) => ({ value: r, label: `${r}: ${ROLE_SUMMARIES[r]}` }))}
      />
      <TextField
        label="Expires on (optional)"
        hint="The key works until the end of this day, your time. Empty: it never expires."
        error={errorOf(error, 'expiresAt')}
        type="date"
        min={localToday()}
        value={expiresOn}
        onValue={setExpiresOn}
      />
      <FormError error={formLevelError(error, ['name', 'role', 'expiresAt'])} />
      <FormButtons label="Create API key" busy={busy} busyLabel="Creating…" onCancel={onCancel} />
    </form>
  );
}
