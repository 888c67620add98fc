/**
 * The parts of a check group's form its API checks inherit (docs/api.md, "Check group"): `apiCheckDefaults`
 * (base URL, headers, query parameters, assertions, basic auth), setup and teardown scripts (a snippet or a
 * script of the group's own), `environmentVariables`, and the group's alert settings. Each part has a draft
 * (what the controls hold) and a function from the group and back to the API's fields.
 */
import { API_ASSERTION_SOURCES, ASSERTION_COMPARISONS } from '../../../src/protocol/enums.js';
import type { CheckGroup, Snippet } from '../api/schemas.js';
import { SelectField, TextAreaField, TextField } from '../ui/forms.js';
import type { Loaded } from '../ui/hooks.js';
import { Checkbox, errorOf } from '../ui/widgets.js';

/** A header or query parameter row. */
export type KeyValueRow = { key: string; value: string };
/** An assertion row of `apiCheckDefaults`. */
export type AssertionRow = { source: string; property: string; comparison: string; target: string };
/** A variable row; a secret one's value is the API's mask `*****` until replaced (the mask keeps it). */
export type VariableRow = { key: string; value: string; locked: boolean; secret: boolean };
/** Where a setup or teardown script comes from. */
export type ScriptChoice = { kind: 'none' | 'snippet' | 'local'; snippetId: string; script: string };

/** What the defaults controls hold. */
export type DefaultsDraft = {
  url: string;
  headers: KeyValueRow[];
  queryParameters: KeyValueRow[];
  assertions: AssertionRow[];
  basicAuthUsername: string;
  basicAuthPassword: string;
  setup: ScriptChoice;
  tearDown: ScriptChoice;
  variables: VariableRow[];
};

/** The script choice of a group's snippet id and local script: the snippet wins when both are set. */
function scriptChoice(snippetId: number | null | undefined, local: string | null | undefined): ScriptChoice {
  if (typeof snippetId === 'number')
    return { kind: 'snippet', snippetId: String(snippetId), script: local ?? '' };
  if (typeof local === 'string' && local !== '') return { kind: 'local', snippetId: '', script: local };
  return { kind: 'none', snippetId: '', script: '' };
}

/** The draft of `group`'s defaults (empty for a new group). */
export function draftOfDefaults(group: CheckGroup | undefined): DefaultsDraft {
  const d = group?.apiCheckDefaults;
  return {
    url: d?.url ?? '',
    headers: (d?.headers ?? []).map((h) => ({ key: h.key, value: h.value })),
    queryParameters: (d?.queryParameters ?? []).map((q) => ({ key: q.key, value: q.value })),
    assertions: (d?.assertions ?? []).map((a) => ({
      source: a.source,
      property: a.property ?? '',
      comparison: a.comparison,
      target: a.target,
    })),
    basicAuthUsername: d?.basicAuth?.username ?? '',
    basicAuthPassword: d?.basicAuth?.password ?? '',
    setup: scriptChoice(group?.setupSnippetId, group?.localSetupScript),
    tearDown: scriptChoice(group?.tearDownSnippetId, group?.localTearDownScript),
    variables: (group?.environmentVariables ?? []).map((v) => ({
      key: v.key,
      value: v.value,
      locked: v.locked ?? false,
      secret: v.secret ?? false,
    })),
  };
}

/**
 * The API's fields of `draft`: `apiCheckDefaults` whole (rows with an empty key left out; no basic auth when
 * both its fields are empty), the script fields (exactly one of snippet or local script per phase, the
 * other null) and `environmentVariables` (null when there is none).
 */
export function fieldsOfDefaults(draft: DefaultsDraft) {
  const rows = (list: KeyValueRow[]) =>
    list.filter((r) => r.key.trim() !== '').map((r) => ({ key: r.key.trim(), value: r.value }));
  const script = (choice: ScriptChoice) => ({
    snippetId: choice.kind === 'snippet' && choice.snippetId !== '' ? Number(choice.snippetId) : null,
    local: choice.kind === 'local' ? choice.script : null,
  });
  const setup = script(draft.setup);
  const tearDown = script(draft.tearDown);
  const auth = draft.basicAuthUsername !== '' || draft.basicAuthPassword !== '';
  const variables = draft.variables
    .filter((v) => v.key.trim() !== '')
    .map((v) => ({ key: v.key.trim(), value: v.value, locked: v.locked, secret: v.secret }));
  return {
    apiCheckDefaults: {
      url: draft.url.trim(),
      headers: rows(draft.headers),
      queryParameters: rows(draft.queryParameters),
      assertions: draft.assertions.map((a) => ({
        source: a.source,
        property: a.property,
        comparison: a.comparison,
        target: a.target,
      })),
      basicAuth: auth ? { username: draft.basicAuthUsername, password: draft.basicAuthPassword } : null,
    },
    setupSnippetId: setup.snippetId,
    localSetupScript: setup.local,
    tearDownSnippetId: tearDown.snippetId,
    localTearDownScript: tearDown.local,
    environmentVariables: variables.length > 0 ? variables : null,
  };
}

/** The body fields {@link DefaultsFieldsets} show errors for. */
export const DEFAULTS_FIELDS = [
  'apiCheckDefaults',
  'setupSnippetId',
  'localSetupScript',
  'tearDownSnippetId',
  'localTearDownScript',
  'environmentVariables',
] as const;

/** Rows of key and value (headers, query parameters): add, edit, remove. */
function KeyValueRows({
  legend,
  rows,
  onChange,
  error,
}: {
  legend: string;
  rows: KeyValueRow[];
  onChange: (rows: KeyValueRow[]) => void;
  error: string | undefined;
}) {
  const set = (i: number, patch: Partial<KeyValueRow>) =>
    onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <fieldset>
      <legend>{legend}</legend>
      {rows.map((row, i) => (
        <div class="cg-row" key={i}>
          <TextField
            label={`Name ${i + 1}`}
            value={row.key}
            onValue={(key) => set(i, { key })}
            spellcheck={false}
          />
          <TextField
            label={`Value ${i + 1}`}
            value={row.value}
            onValue={(value) => set(i, { value })}
            spellcheck={false}
          />
          <button
            type="button"
            class="button-secondary misc-small"
            onClick={() => onChange(rows.filter((_, j) => j !== i))}
          >
            Remove <span class="visually-hidden">{`${legend.toLowerCase()} ${i + 1}`}</span>
          </button>
        </div>
      ))}
      <button
        type="button"
        class="button-secondary misc-small"
        onClick={() => onChange([...rows, { key: '', value: '' }])}
      >
        Add a row <span class="visually-hidden">to {legend.toLowerCase()}</span>
      </button>
      {error ? (
        <p class="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

/** One phase's script: none, a snippet of the account, or a script of the group's own. */
function ScriptFieldset({
  legend,
  choice,
  onChange,
  snippets,
  error,
}: {
  legend: string;
  choice: ScriptChoice;
  onChange: (choice: ScriptChoice) => void;
  snippets: Loaded<Snippet[]>;
  error: string | undefined;
}) {
  const list = snippets.data ?? [];
  const known = list.some((s) => String(s.id) === choice.snippetId);
  return (
    <fieldset>
      <legend>{legend}</legend>
      <SelectField
        label="Script"
        value={choice.kind}
        onValue={(kind) => onChange({ ...choice, kind })}
        options={[
          { value: 'none', label: 'None' },
          { value: 'snippet', label: 'A snippet' },
          { value: 'local', label: 'A script of this group' },
        ]}
      />
      {choice.kind === 'snippet' ? (
        <SelectField
          label="Snippet"
          hint={
            list.length === 0 && snippets.data ? 'No snippet yet: make one in Settings, Snippets.' : undefined
          }
          value={choice.snippetId}
          onValue={(snippetId) => onChange({ ...choice, snippetId })}
          options={[
            { value: '', label: 'Choose a snippet' },
            ...list.map((s) => ({ value: String(s.id), label: s.name })),
            ...(choice.snippetId !== '' && !known && snippets.data
              ? [{ value: choice.snippetId, label: `Snippet ${choice.snippetId} (not found)` }]
              : []),
          ]}
        />
      ) : null}
      {choice.kind === 'local' ? (
        <TextAreaField
          label="Script of this group"
          hint="Server-side JavaScript, at most 128 KiB."
          rows={6}
          class="cg-code"
          spellcheck={false}
          value={choice.script}
          onValue={(script) => onChange({ ...choice, script })}
        />
      ) : null}
      {error ? (
        <p class="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

/**
 * The fieldsets of the group's API-check defaults, scripts and variables. `error` is the API's error of the
 * last save, shown next to the part it names.
 */
export function DefaultsFieldsets({
  draft,
  onChange,
  snippets,
  error,
}: {
  draft: DefaultsDraft;
  onChange: (draft: DefaultsDraft) => void;
  snippets: Loaded<Snippet[]>;
  error: unknown;
}) {
  const set = (patch: Partial<DefaultsDraft>) => onChange({ ...draft, ...patch });
  const setAssertion = (i: number, patch: Partial<AssertionRow>) =>
    set({ assertions: draft.assertions.map((a, j) => (j === i ? { ...a, ...patch } : a)) });
  const setVariable = (i: number, patch: Partial<VariableRow>) =>
    set({ variables: draft.variables.map((v, j) => (j === i ? { ...v, ...patch } : v)) });
  return (
    <>
      <h3>Defaults of its API checks</h3>
      <TextField
        label="Base URL (optional)"
        hint="Its API checks can start their URL with {{GROUP_BASE_URL}}."
        type="url"
        spellcheck={false}
        maxLength={2048}
        error={errorOf(error, 'apiCheckDefaults.url')}
        value={draft.url}
        onValue={(url) => set({ url })}
      />
      <KeyValueRows
        legend="Headers"
        rows={draft.headers}
        onChange={(headers) => set({ headers })}
        error={errorOf(error, 'apiCheckDefaults.headers')}
      />
      <KeyValueRows
        legend="Query parameters"
        rows={draft.queryParameters}
        onChange={(queryParameters) => set({ queryParameters })}
        error={errorOf(error, 'apiCheckDefaults.queryParameters')}
      />
      <fieldset>
        <legend>Assertions</legend>
        {draft.assertions.map((a, i) => (
          <div class="cg-row" key={i}>
            <SelectField
              label={`Source ${i + 1}`}
              value={a.source}
              onValue={(source) => setAssertion(i, { source })}
              options={API_ASSERTION_SOURCES.map((s) => ({ value: s, label: s }))}
            />
            <TextField
              label={`Property ${i + 1}`}
              value={a.property}
              spellcheck={false}
              onValue={(property) => setAssertion(i, { property })}
            />
            <SelectField
              label={`Comparison ${i + 1}`}
              value={a.comparison}
              onValue={(comparison) => setAssertion(i, { comparison })}
              options={ASSERTION_COMPARISONS.map((c) => ({ value: c, label: c }))}
            />
            <TextField
              label={`Target ${i + 1}`}
              value={a.target}
              spellcheck={false}
              onValue={(target) => setAssertion(i, { target })}
            />
            <button
              type="button"
              class="button-secondary misc-small"
              onClick={() => set({ assertions: draft.assertions.filter((_, j) => j !== i) })}
            >
              Remove <span class="visually-hidden">assertion {i + 1}</span>
            </button>
          </div>
        ))}
        <button
          type="button"
          class="button-secondary misc-small"
          onClick={() =>
            set({
              assertions: [
                ...draft.assertions,
                { source: 'STATUS_CODE', property: '', comparison: 'EQUALS', target: '200' },
              ],
            })
          }
        >
          Add <span class="visually-hidden">an</span> assertion
        </button>
        {errorOf(error, 'apiCheckDefaults.assertions') ? (
          <p class="field-error" role="alert">
            {errorOf(error, 'apiCheckDefaults.assertions')}
          </p>
        ) : null}
      </fieldset>
      <fieldset>
        <legend>Basic authentication</legend>
        <div class="cg-row">
          <TextField
            label="Username"
            autoComplete="off"
            value={draft.basicAuthUsername}
            onValue={(basicAuthUsername) => set({ basicAuthUsername })}
          />
          <TextField
            label="Password"
            type="password"
            autoComplete="new-password"
            hint="Stored encrypted; ***** keeps the stored one."
            value={draft.basicAuthPassword}
            onValue={(basicAuthPassword) => set({ basicAuthPassword })}
          />
        </div>
        {errorOf(error, 'apiCheckDefaults.basicAuth') ? (
          <p class="field-error" role="alert">
            {errorOf(error, 'apiCheckDefaults.basicAuth')}
          </p>
        ) : null}
      </fieldset>
      <ScriptFieldset
        legend="Setup script"
        choice={draft.setup}
        onChange={(setup) => set({ setup })}
        snippets={snippets}
        error={errorOf(error, 'setupSnippetId') ?? errorOf(error, 'localSetupScript')}
      />
      <ScriptFieldset
        legend="Teardown script"
        choice={draft.tearDown}
        onChange={(tearDown) => set({ tearDown })}
        snippets={snippets}
        error={errorOf(error, 'tearDownSnippetId') ?? errorOf(error, 'localTearDownScript')}
      />
      <fieldset>
        <legend>Environment variables</legend>
        <p class="field-hint">
          Its checks see these over the account's; a check's own win. A secret value reads ***** and is kept
          while it does.
        </p>
        {draft.variables.map((v, i) => (
          <div class="cg-var" key={i}>
            <div class="cg-row">
              <TextField
                label={`Key ${i + 1}`}
                value={v.key}
                spellcheck={false}
                onValue={(key) => setVariable(i, { key })}
              />
              <TextField
                label={`Value ${i + 1}`}
                type={v.secret ? 'password' : 'text'}
                autoComplete="off"
                spellcheck={false}
                value={v.value}
                onValue={(value) => setVariable(i, { value })}
              />
            </div>
            <div class="cg-row">
              <Checkbox label="Locked" checked={v.locked} onChange={(locked) => setVariable(i, { locked })} />
              <Checkbox label="Secret" checked={v.secret} onChange={(secret) => setVariable(i, { secret })} />
              <button
                type="button"
                class="button-secondary misc-small"
                onClick={() => set({ variables: draft.variables.filter((_, j) => j !== i) })}
              >
                Remove <span class="visually-hidden">variable {i + 1}</span>
              </button>
            </div>
          </div>
        ))}
        <button
          type="button"
          class="button-secondary misc-small"
          onClick={() =>
            set({ variables: [...draft.variables, { key: '', value: '', locked: false, secret: false }] })
          }
        >
          Add <span class="visually-hidden">a</span> variable
        </button>
        {errorOf(error, 'environmentVariables') ? (
          <p class="field-error" role="alert">
            {errorOf(error, 'environmentVariables')}
          </p>
        ) : null}
      </fieldset>
    </>
  );
}
