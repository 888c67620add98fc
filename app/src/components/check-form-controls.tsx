/**
 * The controls of the check form, each bound to a path of the form's data (`request.url`,
 * `request.headers[0].key`) through a {@link FormApi}: it reads the value there, writes changes back, and
 * shows the error the API (or the form's own required checks) gave for that path, with `aria-invalid` and
 * `aria-describedby` on the control. Rows (headers, query parameters, assertions, variables, files) label
 * every input by its row ("Header 1 name") and have a "Remove header 1" button.
 */
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import type { CheckType } from '../types.js';
import { SelectField, TextAreaField, TextField } from './forms.js';
import { ASSERTION_COMPARISONS } from '../../../src/protocol/enums.js';
import type { Json } from './check-form-model.js';

/** How a control reaches the form: its data, a setter, and the error to show for a path. */
export type FormApi = {
  /** The type of the check being created or edited. */
  type: CheckType;
  /** The value at a dotted path of the form's data (`request.url`). */
  get: (path: string) => unknown;
  /** Sets the value at a dotted path; `undefined` removes the field. */
  set: (path: string, value: unknown) => void;
  /**
   * The message to show at the control of `paths[0]` (its other paths are fields shown by the same
   * control); registers the paths as shown on the form, so an API error about them lands here.
   */
  error: (...paths: string[]) => string | undefined;
  /** True while the form is being sent. */
  busy: boolean;
};

/** An option of a select: the value sent and its text. */
export type Option = { value: string; label: string };

/** Text as the form keeps it: '' for a nullable field that is null. */
function text(value: unknown): string {
  return value === null || value === undefined ? '' : String(value);
}

/**
 * A one-line text input. `nullable`: an empty input sets null (the API's "not set"), else ''.
 */
export function TextInput({
  fx,
  path,
  label,
  hint,
  nullable = false,
  required = false,
  type = 'text',
  mono = false,
  autoComplete = 'off',
  inputMode,
  list,
}: {
  fx: FormApi;
  path: string;
  label: ComponentChildren;
  hint?: ComponentChildren;
  nullable?: boolean;
  required?: boolean;
  type?: 'text' | 'url' | 'password';
  mono?: boolean;
  autoComplete?: string;
  inputMode?: 'text' | 'url' | 'numeric';
  list?: string;
}) {
  return (
    <TextField
      label={label}
      hint={hint}
      error={fx.error(path)}
      type={type}
      class={mono ? 'mono' : undefined}
      value={text(fx.get(path))}
      required={required}
      aria-required={required ? 'true' : undefined}
      autoComplete={autoComplete}
      spellcheck={false}
      {...(inputMode ? { inputMode } : {})}
      {...(list ? { list } : {})}
      onValue={(value) => fx.set(path, nullable && value === '' ? null : value)}
    />
  );
}

/**
 * A number input. The form does not refuse values out of range itself: the API's message is shown instead,
 * so `min` and `max` only guide the spin buttons. An empty input sets null (`nullable`) or removes the field.
 */
export function NumberInput({
  fx,
  path,
  label,
  hint,
  min,
  max,
  step,
  nullable = false,
  required = false,
  aliases = [],
}: {
  fx: FormApi;
  path: string;
  label: ComponentChildren;
  hint?: ComponentChildren;
  min?: number;
  max?: number;
  step?: number | 'any';
  nullable?: boolean;
  required?: boolean;
  aliases?: string[];
}) {
  return (
    <TextField
      label={label}
      hint={hint}
      error={fx.error(path, ...aliases)}
      type="number"
      class="input-number"
      value={text(fx.get(path))}
      required={required}
      aria-required={required ? 'true' : undefined}
      {...(min === undefined ? {} : { min })}
      {...(max === undefined ? {} : { max })}
      {...(step === undefined ? {} : { step })}
      onValue={(raw) => {
        if (raw.trim() === '') {
          fx.set(path, nullable ? null : undefined);
          return;
        }
        const value = Number(raw);
        if (Number.isFinite(value)) fx.set(path, value);
      }}
    />
  );
}

/** A select of `options`; `parse` turns the chosen value into what is stored (default: the string). */
export function SelectInput({
  fx,
  path,
  label,
  hint,
  options,
  parse = (value) => value,
  format = text,
  aliases = [],
  onChoose,
}: {
  fx: FormApi;
  path: string;
  label: ComponentChildren;
  hint?: ComponentChildren;
  options: readonly Option[];
  parse?: (value: string) => unknown;
  format?: (value: unknown) => string;
  aliases?: string[];
  /** Replaces the default write (`fx.set(path, parse(value))`), for a choice that sets several fields. */
  onChoose?: (value: string) => void;
}) {
  const current = format(fx.get(path));
  const known = options.some((o) => o.value === current);
  return (
    <SelectField
      label={label}
      hint={hint}
      error={fx.error(path, ...aliases)}
      value={current}
      // A stored value the form does not offer stays shown (and selected) as it is.
      options={known ? options : [{ value: current, label: current || '(not set)' }, ...options]}
      onValue={(value) => {
        if (onChoose) onChoose(value);
        else fx.set(path, parse(value));
      }}
    />
  );
}

/** A multi-line input in the monospace font (scripts, bodies). `nullable`: empty sets null. */
export function TextArea({
  fx,
  path,
  label,
  hint,
  rows = 6,
  nullable = false,
  required = false,
  aliases = [],
}: {
  fx: FormApi;
  path: string;
  label: ComponentChildren;
  hint?: ComponentChildren;
  rows?: number;
  nullable?: boolean;
  required?: boolean;
  /** Other fields whose errors this control shows. */
  aliases?: string[];
}) {
  return (
    <TextAreaField
      label={label}
      hint={hint}
      error={fx.error(path, ...aliases)}
      rows={rows}
      class="code"
      value={text(fx.get(path))}
      required={required}
      aria-required={required ? 'true' : undefined}
      spellcheck={false}
      autoComplete="off"
      onValue={(value) => fx.set(path, nullable && value === '' ? null : value)}
    />
  );
}

/** The error paragraph of a control that is not a {@link Field} (checkboxes, groups, rows). */
export function InlineError({ id, error }: { id: string; error: string | undefined }) {
  if (!error) return null;
  return (
    <p class="field-error" id={id} role="alert">
      <span aria-hidden="true">✕ </span>
      {error}
    </p>
  );
}

/** A checkbox with its label after it and an optional hint. */
export function Checkbox({
  fx,
  path,
  label,
  hint,
}: {
  fx: FormApi;
  path: string;
  label: ComponentChildren;
  hint?: ComponentChildren;
}) {
  const id = useId();
  const error = fx.error(path);
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class="field field-check">
      <div class="check-line">
        <input
          id={id}
          type="checkbox"
          checked={fx.get(path) === true}
          aria-describedby={describedBy || undefined}
          aria-invalid={error ? 'true' : undefined}
          onChange={(e) => fx.set(path, e.currentTarget.checked)}
        />
        <label for={id}>{label}</label>
      </div>
      {hint ? (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      <InlineError id={`${id}-error`} error={error} />
    </div>
  );
}

/**
 * A group of checkboxes over a list of strings at `path` (locations by name, private locations by slug):
 * checking adds the value, unchecking removes it.
 */
export function CheckboxGroup({
  fx,
  path,
  legend,
  hint,
  options,
  empty,
}: {
  fx: FormApi;
  path: string;
  legend: string;
  hint?: ComponentChildren;
  options: readonly Option[];
  empty?: ComponentChildren;
}) {
  const id = useId();
  const error = fx.error(path);
  const value = fx.get(path);
  const chosen = Array.isArray(value) ? (value as string[]) : [];
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <fieldset class="check-group" aria-describedby={describedBy || undefined}>
      <legend>{legend}</legend>
      {hint ? (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      <InlineError id={`${id}-error`} error={error} />
      {options.length === 0 && empty ? <p class="muted">{empty}</p> : null}
      <ul class="check-grid">
        {options.map((o, i) => (
          <li key={o.value}>
            <input
              id={`${id}-${i}`}
              type="checkbox"
              checked={chosen.includes(o.value)}
              aria-invalid={error && i === 0 ? 'true' : undefined}
              aria-describedby={error && i === 0 ? `${id}-error` : undefined}
              onChange={(e) => {
                const next = e.currentTarget.checked
                  ? [...chosen, o.value]
                  : chosen.filter((v) => v !== o.value);
                fx.set(path, next);
              }}
            />
            <label for={`${id}-${i}`}>{o.label}</label>
          </li>
        ))}
      </ul>
    </fieldset>
  );
}

/** One input of a row, labelled for screen readers by its row ("Header 2 value"). */
function RowInput({
  fx,
  path,
  label,
  type = 'text',
  placeholder,
  mono = true,
}: {
  fx: FormApi;
  path: string;
  label: string;
  type?: 'text' | 'password';
  placeholder?: string;
  mono?: boolean;
}) {
  const id = useId();
  const error = fx.error(path);
  return (
    <div class="row-cell">
      <label class="row-label" for={id}>
        {label}
      </label>
      <input
        id={id}
        type={type as 'text'}
        class={mono ? 'mono' : undefined}
        value={text(fx.get(path))}
        placeholder={placeholder}
        autoComplete="off"
        spellcheck={false}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onInput={(e) => fx.set(path, e.currentTarget.value)}
      />
      <InlineError id={`${id}-error`} error={error} />
    </div>
  );
}

/** One select of a row, labelled by its row ("Assertion 1 source"). */
function RowSelect({
  fx,
  path,
  label,
  options,
}: {
  fx: FormApi;
  path: string;
  label: string;
  options: readonly string[];
}) {
  const id = useId();
  const error = fx.error(path);
  const current = text(fx.get(path));
  return (
    <div class="row-cell">
      <label class="row-label" for={id}>
        {label}
      </label>
      <select
        id={id}
        value={current}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(e) => fx.set(path, e.currentTarget.value)}
      >
        {options.includes(current) ? null : <option value={current}>{current || '(choose)'}</option>}
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
      <InlineError id={`${id}-error`} error={error} />
    </div>
  );
}

/** The frame of a list of rows: legend, hint, column headings, the rows, the list's error and an add button. */
function Rows({
  fx,
  path,
  legend,
  hint,
  columns,
  count,
  addLabel,
  onAdd,
  children,
  empty,
}: {
  fx: FormApi;
  path: string;
  legend: string;
  hint?: ComponentChildren;
  columns: string[];
  count: number;
  addLabel: string;
  onAdd: () => void;
  children: ComponentChildren;
  empty: string;
}) {
  const id = useId();
  const error = fx.error(path);
  return (
    <fieldset class="rows" aria-describedby={hint ? `${id}-hint` : undefined}>
      <legend>{legend}</legend>
      {hint ? (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {count === 0 ? (
        <p class="muted rows-empty">{empty}</p>
      ) : columns.length > 0 ? (
        <div class={`rows-head row-${columns.length}`} aria-hidden="true">
          {columns.map((c, i) => (
            <span key={i}>{c}</span>
          ))}
        </div>
      ) : null}
      <ol class="rows-list">{children}</ol>
      <InlineError id={`${id}-error`} error={error} />
      <button
        type="button"
        class="button-secondary rows-add"
        onClick={onAdd}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
      >
        <span aria-hidden="true">+</span> {addLabel}
      </button>
    </fieldset>
  );
}

/** Removes row `index` of the list at `path`. */
function removeRow(fx: FormApi, path: string, index: number): void {
  const list = fx.get(path);
  if (!Array.isArray(list)) return;
  fx.set(
    path,
    list.filter((_, i) => i !== index),
  );
}

/** Appends `row` to the list at `path` (creating the list). */
function addRow(fx: FormApi, path: string, row: Json): void {
  const list = fx.get(path);
  fx.set(path, [...(Array.isArray(list) ? list : []), row]);
}

/**
 * The Remove button of a row: "Remove header 2". The focus then moves to the next row's Remove button (or
 * the previous one's, or the add button), not to the page's start.
 */
function RemoveButton({ label, onClick }: { label: string; onClick: () => void }) {
  return (
    <button
      type="button"
      class="button-secondary row-remove"
      aria-label={label}
      title={label}
      onClick={(e) => {
        const fieldset = e.currentTarget.closest('fieldset');
        const index = fieldset
          ? Array.from(fieldset.querySelectorAll('.row-remove')).indexOf(e.currentTarget)
          : -1;
        onClick();
        setTimeout(() => {
          if (!fieldset) return;
          const left = Array.from(fieldset.querySelectorAll<HTMLElement>('.row-remove'));
          (left[index] ?? left[index - 1] ?? fieldset.querySelector<HTMLElement>('.rows-add'))?.focus();
        }, 0);
      }}
    >
      <span aria-hidden="true">✕</span>
      <span class="row-remove-text" aria-hidden="true">
        Remove
      </span>
    </button>
  );
}

/**
 * Key/value rows (an API check's headers or query parameters: `{ key, value, locked }`); a `locked` row's
 * value is masked, and a credential header's value the API answered as `*****` is kept when sent back.
 */
export function KeyValueRows({
  fx,
  path,
  noun,
  legend,
  hint,
}: {
  fx: FormApi;
  path: string;
  /** Singular, lower case: `header`, `query parameter`. */
  noun: string;
  legend: string;
  hint?: ComponentChildren;
}) {
  const list = (fx.get(path) as Json[] | undefined) ?? [];
  const Noun = noun.charAt(0).toUpperCase() + noun.slice(1);
  return (
    <Rows
      fx={fx}
      path={path}
      legend={legend}
      hint={hint}
      columns={['Name', 'Value', '']}
      count={list.length}
      addLabel={`Add ${noun}`}
      onAdd={() => addRow(fx, path, { key: '', value: '' })}
      empty={`No ${noun}s.`}
    >
      {list.map((row, i) => (
        <li key={i} class="row row-3">
          <RowInput fx={fx} path={`${path}[${i}].key`} label={`${Noun} ${i + 1} name`} />
          <RowInput
            fx={fx}
            path={`${path}[${i}].value`}
            label={`${Noun} ${i + 1} value`}
            type={row.locked === true ? 'password' : 'text'}
          />
          <RemoveButton label={`Remove ${noun} ${i + 1}`} onClick={() => removeRow(fx, path, i)} />
          <RowErrors fx={fx} paths={[`${path}[${i}]`, `${path}[${i}].locked`]} />
        </li>
      ))}
    </Rows>
  );
}

/** Errors about a whole row (or a field of it without an input), under the row. */
function RowErrors({ fx, paths }: { fx: FormApi; paths: string[] }) {
  const id = useId();
  const error = fx.error(...paths);
  return error ? (
    <div class="row-error">
      <InlineError id={id} error={error} />
    </div>
  ) : null;
}

/** What the `property` of an assertion is for each source (docs/checks.md, "Assertions"). */
const PROPERTY_HINTS: Record<string, string> = {
  LATENCY: 'avg, min, max or stdDev',
  JSON_RESPONSE: 'JSONPath, e.g. $.packetLoss',
  JSON_BODY: 'JSONPath, e.g. $.status',
  JSON_ANSWER: 'JSONPath, e.g. $.Answer[0].data',
  HEADERS: 'header name',
};

/**
 * Assertion rows `{ source, property, comparison, target, regex }` with the sources of the check's type
 * and every comparison. `target` is always text, numbers too (`"200"`).
 */
export function AssertionRows({
  fx,
  path,
  sources,
  hint,
}: {
  fx: FormApi;
  path: string;
  sources: readonly string[];
  hint?: ComponentChildren;
}) {
  const list = (fx.get(path) as Json[] | undefined) ?? [];
  return (
    <Rows
      fx={fx}
      path={path}
      legend="Assertions"
      hint={hint}
      columns={['Source', 'Property', 'Comparison', 'Target', 'Regex', '']}
      count={list.length}
      addLabel="Add assertion"
      onAdd={() =>
        addRow(fx, path, { source: sources[0] ?? '', property: '', comparison: 'EQUALS', target: '' })
      }
      empty="No assertions: the run is judged by its type's own rules and the response time limits."
    >
      {list.map((row, i) => {
        const n = i + 1;
        const regexPath = `${path}[${i}].regex`;
        return (
          <li key={i} class="row row-6">
            <RowSelect
              fx={fx}
              path={`${path}[${i}].source`}
              label={`Assertion ${n} source`}
              options={sources}
            />
            <RowInput
              fx={fx}
              path={`${path}[${i}].property`}
              label={`Assertion ${n} property`}
              placeholder={PROPERTY_HINTS[String(row.source)] ?? ''}
            />
            <RowSelect
              fx={fx}
              path={`${path}[${i}].comparison`}
              label={`Assertion ${n} comparison`}
              options={ASSERTION_COMPARISONS}
            />
            <RowInput fx={fx} path={`${path}[${i}].target`} label={`Assertion ${n} target`} />
            <div class="row-cell">
              <RegexInput fx={fx} path={regexPath} label={`Assertion ${n} regex`} />
            </div>
            <RemoveButton label={`Remove assertion ${n}`} onClick={() => removeRow(fx, path, i)} />
            <RowErrors fx={fx} paths={[`${path}[${i}]`]} />
          </li>
        );
      })}
    </Rows>
  );
}

/** An assertion's optional `regex`: empty means none (the field is left out). */
function RegexInput({ fx, path, label }: { fx: FormApi; path: string; label: string }) {
  const id = useId();
  const error = fx.error(path);
  return (
    <>
      <label class="row-label" for={id}>
        {label}
      </label>
      <input
        id={id}
        class="mono"
        value={text(fx.get(path))}
        placeholder="optional"
        autoComplete="off"
        spellcheck={false}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onInput={(e) => fx.set(path, e.currentTarget.value === '' ? undefined : e.currentTarget.value)}
      />
      <InlineError id={`${id}-error`} error={error} />
    </>
  );
}

/**
 * Environment variable rows `{ key, value, locked, secret }` (docs/api.md, "Environment variable"): a secret's
 * value reads `*****` once saved and is kept when sent back so; a secret cannot be made non-secret.
 */
export function VariableRows({ fx, path, hint }: { fx: FormApi; path: string; hint?: ComponentChildren }) {
  const list = (fx.get(path) as Json[] | null | undefined) ?? [];
  return (
    <Rows
      fx={fx}
      path={path}
      legend="Environment variables"
      hint={hint}
      columns={['Name', 'Value', 'Secret', '']}
      count={list.length}
      addLabel="Add variable"
      onAdd={() => addRow(fx, path, { key: '', value: '', locked: false, secret: false })}
      empty="No variables of this check (its group's and the account's still apply)."
    >
      {list.map((row, i) => {
        const n = i + 1;
        const savedSecret = row.secret === true && row.value === '*****';
        return (
          <li key={i} class="row row-4">
            <RowInput fx={fx} path={`${path}[${i}].key`} label={`Variable ${n} name`} />
            <RowInput
              fx={fx}
              path={`${path}[${i}].value`}
              label={`Variable ${n} value`}
              type={row.secret === true || row.locked === true ? 'password' : 'text'}
            />
            <SecretBox
              fx={fx}
              path={`${path}[${i}].secret`}
              label={`Variable ${n} secret`}
              locked={savedSecret}
            />
            <RemoveButton label={`Remove variable ${n}`} onClick={() => removeRow(fx, path, i)} />
            <RowErrors fx={fx} paths={[`${path}[${i}]`, `${path}[${i}].locked`]} />
          </li>
        );
      })}
    </Rows>
  );
}

/** The secret checkbox of a variable row; a saved secret cannot be unchecked. */
function SecretBox({
  fx,
  path,
  label,
  locked,
}: {
  fx: FormApi;
  path: string;
  label: string;
  locked: boolean;
}) {
  const id = useId();
  const error = fx.error(path);
  return (
    <div class="row-cell row-check">
      <input
        id={id}
        type="checkbox"
        checked={fx.get(path) === true}
        disabled={locked}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(e) => fx.set(path, e.currentTarget.checked)}
      />
      <label for={id}>
        <span class="visually-hidden">{label}</span>
        <span aria-hidden="true">Secret</span>
      </label>
      <InlineError id={`${id}-error`} error={error} />
    </div>
  );
}

/**
 * The files of a Playwright check suite's project (`dependencies`: `{ path, content }`), each with its path
 * and its content in a monospace text area; files can also be read from disk (as text, by file name).
 */
export function FileRows({ fx, path, hint }: { fx: FormApi; path: string; hint?: ComponentChildren }) {
  const list = (fx.get(path) as Json[] | null | undefined) ?? [];
  const uploadId = useId();
  return (
    <Rows
      fx={fx}
      path={path}
      legend="Project files"
      hint={hint}
      columns={[]}
      count={list.length}
      addLabel="Add file"
      onAdd={() => addRow(fx, path, { path: '', content: '' })}
      empty="No files yet: the project needs a package.json and a playwright.config.ts at its root."
    >
      {list.map((_, i) => {
        const n = i + 1;
        return (
          <li key={i} class="file-row">
            <div class="file-row-head">
              <FileField fx={fx} path={`${path}[${i}].path`} label={`File ${n} path`} />
              <RemoveButton label={`Remove file ${n}`} onClick={() => removeRow(fx, path, i)} />
            </div>
            <FileField fx={fx} path={`${path}[${i}].content`} label={`File ${n} content`} multiline />
            <RowErrors fx={fx} paths={[`${path}[${i}]`]} />
          </li>
        );
      })}
      <li class="file-upload">
        <label for={uploadId}>Add files from disk</label>
        <input
          id={uploadId}
          type="file"
          multiple
          onChange={async (e) => {
            const input = e.currentTarget;
            const files = Array.from(input.files ?? []);
            let next = [...list];
            for (const file of files) {
              const content = await file.text();
              const filePath = file.webkitRelativePath || file.name;
              const at = next.findIndex((f) => f.path === filePath);
              if (at >= 0) next = next.map((f, j) => (j === at ? { path: filePath, content } : f));
              else next.push({ path: filePath, content });
            }
            fx.set(path, next);
            input.value = '';
          }}
        />
      </li>
    </Rows>
  );
}

/** A labelled path input or content text area of a file row. */
function FileField({
  fx,
  path,
  label,
  multiline = false,
}: {
  fx: FormApi;
  path: string;
  label: string;
  multiline?: boolean;
}) {
  const id = useId();
  const error = fx.error(path);
  const common = {
    id,
    value: text(fx.get(path)),
    spellcheck: false,
    autoComplete: 'off',
    'aria-invalid': error ? ('true' as const) : undefined,
    'aria-describedby': error ? `${id}-error` : undefined,
  };
  return (
    <div class={multiline ? 'file-content' : 'file-path'}>
      <label for={id}>{label}</label>
      {multiline ? (
        <textarea {...common} class="code" rows={8} onInput={(e) => fx.set(path, e.currentTarget.value)} />
      ) : (
        <input {...common} class="mono" onInput={(e) => fx.set(path, e.currentTarget.value)} />
      )}
      <InlineError id={`${id}-error`} error={error} />
    </div>
  );
}
