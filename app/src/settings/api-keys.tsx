/**
 * The account's API keys (`/settings/api-keys`, `/v1/api-keys`): every key by its name and first
 * characters, when it was made and last used; creating one (the key shown once, with a copy button) and
 * revoking one. The key this browser signed in with cannot be revoked from its own session (the API
 * answers 409, shown in the question).
 */
import { useState } from 'preact/hooks';
import { createApiKey, listApiKeys, revokeApiKey } from '../api/api-keys.js';
import type { CreatedApiKey } from '../api/schemas.js';
import { fetchSession } from '../api/session.js';
import { formatDateTime, formatRelative } from '../ui/format.js';
import { FormError, TextField } from '../ui/forms.js';
import { useLoad, useTitle } from '../ui/hooks.js';
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
  const session = useLoad(() => fetchSession(), []);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [status, setStatus] = useState('');
  const ownPrefix = session.data?.keyPrefix;

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
      >
        Keys of the account for the API (<code>Authorization: Bearer op_…</code>) and for signing in here.
        Each key can do everything in the account. Outpost stores only a hash of each key: a key is shown
        once, when it is made. Revoking a key ends the sessions opened with it.
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
      {creating ? (
        <CreateKeyForm
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
                      <ConfirmButton
                        small
                        label={
                          <>
                            Revoke <span class="visually-hidden">{name}</span>
                          </>
                        }
                        question={
                          <>
                            Revoke <strong>{name}</strong> (<code>{k.keyPrefix}…</code>)? It stops working at
                            once, and every session opened with it ends.
                          </>
                        }
                        confirmLabel="Revoke key"
                        onConfirm={async () => {
                          await revokeApiKey(k.id);
                          setStatus(`Revoked ${name}.`);
                          keys.reload();
                        }}
                      />
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

/** The form that creates a key: its name. */
function CreateKeyForm({
  onCreated,
  onCancel,
}: {
  onCreated: (key: CreatedApiKey) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onCreated(await createApiKey(name.trim()));
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
      <FormError error={formLevelError(error, ['name'])} />
      <FormButtons label="Create API key" busy={busy} busyLabel="Creating…" onCancel={onCancel} />
    </form>
  );
}
