/**
 * Code snippets of the account (`/settings/snippets`, `/v1/snippets`): setup and teardown scripts that API
 * checks and check groups name by id. Create, edit (a code text area), delete; a snippet still in use
 * cannot be deleted, and the API's answer names its users.
 */
import { useState } from 'preact/hooks';
import { createSnippet, deleteSnippet, listSnippets, updateSnippet } from '../api/snippets.js';
import type { Snippet } from '../api/schemas.js';
import { formatDateTime } from '../ui/format.js';
import { FormError, TextAreaField, TextField } from '../ui/forms.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import { SettingsTop } from './page-top.js';
import { useCan } from '../ui/permissions.js';
import { ConfirmButton, errorOf, FormButtons, formLevelError, ListStatus } from '../ui/widgets.js';

/** The snippets page: the list, and the form that creates or edits one. */
export function SnippetsPage() {
  useTitle('Snippets · Settings');
  const snippets = useLoad((signal) => listSnippets(signal), []);
  /** The snippet being edited; `null`: a new one; undefined: no form open. */
  const [editing, setEditing] = useState<Snippet | null | undefined>(undefined);
  const [status, setStatus] = useState('');
  const canWrite = useCan('write');

  return (
    <>
      <SettingsTop
        title="Snippets"
        formOpen={editing === null}
        newLabel="New snippet"
        onToggle={() => {
          setStatus('');
          setEditing(editing === null ? undefined : null);
        }}
        status={status}
      >
        Server-side JavaScript that API checks and check groups run before a request (setup) or after it
        (teardown), chosen by name in their settings. Each runs in a sandbox of its own, at most 10 s.
      </SettingsTop>
      {editing !== undefined && canWrite ? (
        <SnippetForm
          key={editing?.id ?? 'new'}
          snippet={editing ?? undefined}
          onSaved={(saved) => {
            setEditing(undefined);
            setStatus(`Saved ${saved.name}.`);
            snippets.reload();
          }}
          onCancel={() => setEditing(undefined)}
        />
      ) : null}
      <ListStatus load={snippets} loading="Loading snippets" isEmpty={snippets.data?.length === 0}>
        No snippet yet.
        {canWrite ? (
          <>
            {' '}
            Create one with <strong>New snippet</strong>.
          </>
        ) : null}
      </ListStatus>
      {snippets.data && snippets.data.length > 0 ? (
        <div class="table-wrap">
          <table class="misc-table st-table">
            <caption class="visually-hidden">Snippets</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col" class="num">
                  Lines
                </th>
                <th scope="col">Changed</th>
                {canWrite ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {snippets.data.map((s) => (
                <tr key={s.id}>
                  <th scope="row">{s.name}</th>
                  <td class="num" data-label="Lines">
                    {s.script === '' ? 0 : s.script.split('\n').length}
                  </td>
                  <td data-label="Changed">{formatDateTime(s.updated_at ?? s.created_at)}</td>
                  {canWrite ? (
                    <td class="misc-actions-cell">
                      <div class="st-row-buttons">
                        <button
                          type="button"
                          class="button-secondary misc-small"
                          onClick={() => {
                            setStatus('');
                            setEditing(s);
                          }}
                        >
                          Edit <span class="visually-hidden">{s.name}</span>
                        </button>
                        <ConfirmButton
                          small
                          label={
                            <>
                              Delete <span class="visually-hidden">{s.name}</span>
                            </>
                          }
                          question={
                            <>
                              Delete the snippet <strong>{s.name}</strong>? A snippet that checks or groups
                              still use cannot be deleted.
                            </>
                          }
                          confirmLabel="Delete snippet"
                          onConfirm={async () => {
                            await deleteSnippet(s.id);
                            setStatus(`Deleted ${s.name}.`);
                            snippets.reload();
                          }}
                        />
                      </div>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

/** Create (no `snippet`) or edit a snippet: its name and its script. */
function SnippetForm({
  snippet,
  onSaved,
  onCancel,
}: {
  snippet?: Snippet | undefined;
  onSaved: (s: Snippet) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState(snippet?.name ?? '');
  const [script, setScript] = useState(snippet?.script ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = { name: name.trim(), script };
      onSaved(snippet ? await updateSnippet(snippet.id, body) : await createSnippet(body));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const headingId = snippet ? 'st-snippet-edit' : 'st-snippet-new';
  return (
    <form class="card misc-form" onSubmit={submit} noValidate aria-labelledby={headingId}>
      <h2 id={headingId}>{snippet ? `Edit ${snippet.name}` : 'New snippet'}</h2>
      <TextField
        label="Name"
        error={errorOf(error, 'name')}
        required
        maxLength={255}
        value={name}
        onValue={setName}
      />
      <TextAreaField
        label="Script"
        hint="Server-side JavaScript, at most 128 KiB."
        error={errorOf(error, 'script')}
        rows={14}
        class="st-code"
        spellcheck={false}
        autoComplete="off"
        autoCapitalize="off"
        value={script}
        onValue={setScript}
      />
      <FormError error={formLevelError(error, ['name', 'script'])} />
      <FormButtons label={snippet ? 'Save' : 'Create snippet'} busy={busy} onCancel={onCancel} />
    </form>
  );
}
