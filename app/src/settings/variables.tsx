/**
 * Environment variables of the account (`/settings/variables`, `/v1/variables`): `{{KEY}}` in API checks,
 * and `process.env.KEY` in scripts, wherever a check or its group has no variable of that key. Create, edit,
 * delete. A secret variable's value is never shown again: the API answers `*****` for it, and this page never
 * puts a typed value anywhere but the request that saves it.
 */
import { useState } from 'preact/hooks';
import { createVariable, deleteVariable, listVariables, updateVariable } from '../api/variables.js';
import type { Variable } from '../api/schemas.js';
import { FormError, TextAreaField, TextField } from '../ui/forms.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import { SettingsTop } from './page-top.js';
import { useCan } from '../ui/permissions.js';
import { Checkbox, ConfirmButton, errorOf, FormButtons, formLevelError, ListStatus } from '../ui/widgets.js';

/** What the API answers for a secret value, and takes back to mean "keep the stored value". */
export const SECRET_MASK = '*****';

/**
 * The body of a save: a secret variable edited with its value left empty keeps its stored value (the mask is
 * sent, which the API reads as "unchanged"); otherwise the value typed.
 */
export function variableBody(
  editing: Variable | undefined,
  fields: { value: string; locked: boolean; secret: boolean },
): { value: string; locked: boolean; secret: boolean } {
  const keep = editing?.secret === true && fields.value === '';
  return { value: keep ? SECRET_MASK : fields.value, locked: fields.locked, secret: fields.secret };
}

/** The variables page: the list, and the form that creates or edits one. */
export function VariablesPage() {
  useTitle('Variables · Settings');
  const variables = useLoad((signal) => listVariables(signal), []);
  /** The variable being edited; `null`: a new one; undefined: no form open. */
  const [editing, setEditing] = useState<Variable | null | undefined>(undefined);
  const [status, setStatus] = useState('');
  const canWrite = useCan('write');

  return (
    <>
      <SettingsTop
        title="Environment variables"
        formOpen={editing === null}
        newLabel="New variable"
        onToggle={() => {
          setStatus('');
          setEditing(editing === null ? undefined : null);
        }}
        status={status}
      >
        The account's variables: <code>{'{{KEY}}'}</code> in an API check's URL, headers and body, and{' '}
        <code>process.env.KEY</code> in scripts. A check's own variables win, then its group's, then these. A{' '}
        <strong>locked</strong> value is hidden on this page until shown; a <strong>secret</strong> one is
        never shown again, is stored encrypted and is masked in every result.
      </SettingsTop>
      {editing !== undefined && canWrite ? (
        <VariableForm
          key={editing?.key ?? '(new)'}
          variable={editing ?? undefined}
          onSaved={(saved) => {
            setEditing(undefined);
            setStatus(`Saved ${saved.key}.`);
            variables.reload();
          }}
          onCancel={() => setEditing(undefined)}
        />
      ) : null}
      <ListStatus load={variables} loading="Loading variables" isEmpty={variables.data?.length === 0}>
        No variable yet.
        {canWrite ? (
          <>
            {' '}
            Create one with <strong>New variable</strong>.
          </>
        ) : null}
      </ListStatus>
      {variables.data && variables.data.length > 0 ? (
        <VariablesTable
          variables={variables.data}
          onEdit={(v) => {
            setStatus('');
            setEditing(v);
          }}
          onDeleted={(key) => {
            setStatus(`Deleted ${key}.`);
            variables.reload();
          }}
        />
      ) : null}
    </>
  );
}

/** A variable's value as the list shows it: a secret's mask, a locked value hidden until shown. */
function ValueCell({ variable }: { variable: Variable }) {
  const [shown, setShown] = useState(false);
  if (variable.secret) return <span class="muted">Secret: never shown</span>;
  if (variable.locked && !shown) {
    return (
      <button type="button" class="button-secondary misc-small" onClick={() => setShown(true)}>
        Show value <span class="visually-hidden">of {variable.key}</span>
      </button>
    );
  }
  return variable.value === '' ? (
    <span class="muted">(empty)</span>
  ) : (
    <code class="st-value">{variable.value}</code>
  );
}

/** The variables as a table: key, value, flags, and editing and deleting each. */
function VariablesTable({
  variables,
  onEdit,
  onDeleted,
}: {
  variables: Variable[];
  onEdit: (v: Variable) => void;
  onDeleted: (key: string) => void;
}) {
  const canWrite = useCan('write');
  return (
    <div class="table-wrap">
      <table class="misc-table st-table">
        <caption class="visually-hidden">Environment variables</caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Value</th>
            <th scope="col">Flags</th>
            {canWrite ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {variables.map((v) => (
            <tr key={v.key}>
              <th scope="row">
                <code>{v.key}</code>
              </th>
              <td data-label="Value">
                <ValueCell variable={v} />
              </td>
              <td data-label="Flags">
                <span class="st-flags">
                  {v.secret ? <span class="badge badge-paused">Secret</span> : null}
                  {v.locked ? <span class="badge badge-paused">Locked</span> : null}
                  {!v.secret && !v.locked ? <span class="muted">—</span> : null}
                </span>
              </td>
              {canWrite ? (
                <td class="misc-actions-cell">
                  <div class="st-row-buttons">
                    <button type="button" class="button-secondary misc-small" onClick={() => onEdit(v)}>
                      Edit <span class="visually-hidden">{v.key}</span>
                    </button>
                    <ConfirmButton
                      small
                      label={
                        <>
                          Delete <span class="visually-hidden">{v.key}</span>
                        </>
                      }
                      question={
                        <>
                          Delete <code>{v.key}</code>? Checks that use <code>{`{{${v.key}}}`}</code> get no
                          value for it.
                        </>
                      }
                      confirmLabel="Delete variable"
                      onConfirm={async () => {
                        await deleteVariable(v.key);
                        onDeleted(v.key);
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
  );
}

/** Create (no `variable`) or edit a variable: key (fixed once made), value, locked, secret. */
function VariableForm({
  variable,
  onSaved,
  onCancel,
}: {
  variable?: Variable | undefined;
  onSaved: (v: Variable) => void;
  onCancel: () => void;
}) {
  const [key, setKey] = useState(variable?.key ?? '');
  // A secret's value is never known here: the field starts empty, and empty keeps it.
  const [value, setValue] = useState(variable && !variable.secret ? variable.value : '');
  const [locked, setLocked] = useState(variable?.locked ?? false);
  const [secret, setSecret] = useState(variable?.secret ?? false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = variableBody(variable, { value, locked, secret });
      const saved = variable
        ? await updateVariable(variable.key, body)
        : await createVariable({ key: key.trim(), ...body });
      onSaved(saved);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const headingId = variable ? 'st-var-edit' : 'st-var-new';
  return (
    <form class="card misc-form" onSubmit={submit} noValidate aria-labelledby={headingId}>
      <h2 id={headingId}>{variable ? `Edit ${variable.key}` : 'New variable'}</h2>
      {variable ? (
        <p>
          Key: <code>{variable.key}</code> <span class="muted">(a key cannot change)</span>
        </p>
      ) : (
        <TextField
          label="Key"
          hint="Letters, digits and underscores, not starting with a digit (BASE_URL, API_TOKEN)."
          error={errorOf(error, 'key')}
          required
          maxLength={128}
          spellcheck={false}
          autoComplete="off"
          value={key}
          onValue={setKey}
        />
      )}
      <TextAreaField
        label="Value"
        hint={
          variable?.secret
            ? 'The current value is secret and is not shown. Leave this empty to keep it, or type a new one.'
            : 'At most 131,072 characters.'
        }
        error={errorOf(error, 'value')}
        rows={3}
        class="st-code"
        spellcheck={false}
        autoComplete="off"
        value={value}
        onValue={setValue}
      />
      <Checkbox
        label="Locked"
        checked={locked}
        onChange={setLocked}
        hint="The value is hidden on this page until someone shows it."
      />
      <Checkbox
        label="Secret"
        checked={secret}
        disabled={variable?.secret === true}
        onChange={setSecret}
        hint={
          variable?.secret
            ? 'A secret variable stays secret.'
            : 'The value is never shown again, is stored encrypted and reads ***** in results and logs.'
        }
      />
      {errorOf(error, 'secret') || errorOf(error, 'locked') ? (
        <p class="field-error" role="alert">
          {errorOf(error, 'secret') ?? errorOf(error, 'locked')}
        </p>
      ) : null}
      <FormError error={formLevelError(error, ['key', 'value', 'secret', 'locked'])} />
      <FormButtons label={variable ? 'Save' : 'Create variable'} busy={busy} onCancel={onCancel} />
    </form>
  );
}
