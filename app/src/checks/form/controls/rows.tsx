/**
 * Lists of rows bound to the form (headers, query parameters, assertions): each input labelled by its row,
 * with a Remove button per row.
 */
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { ASSERTION_COMPARISONS } from '../../../../../src/protocol/enums.js';
import { Hint } from './inputs.js';
import { InlineError } from './inputs.js';
import type { FormApi } from './inputs.js';
import type { Json } from '../model/paths.js';
import { useBound } from './inputs.js';
import { text } from './inputs.js';

/** One input of a row, labelled for screen readers by its row ("Header 2 value"). */
export function RowInput({
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
  const { id, error, aria } = useBound(fx, path);
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
        {...aria}
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
  const { id, error, aria } = useBound(fx, path);
  const current = text(fx.get(path));
  return (
    <div class="row-cell">
      <label class="row-label" for={id}>
        {label}
      </label>
      <select id={id} value={current} {...aria} onChange={(e) => fx.set(path, e.currentTarget.value)}>
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
export function Rows({
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
  const { id, error, aria } = useBound(fx, path);
  return (
    <fieldset class="rows" aria-describedby={hint ? `${id}-hint` : undefined}>
      <legend>{legend}</legend>
      <Hint id={`${id}-hint`} hint={hint} />
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
      <button type="button" class="button-secondary rows-add" onClick={onAdd} {...aria}>
        <span aria-hidden="true">+</span> {addLabel}
      </button>
    </fieldset>
  );
}

/** Removes row `index` of the list at `path`. */
export function removeRow(fx: FormApi, path: string, index: number): void {
  const list = fx.get(path);
  if (!Array.isArray(list)) return;
  fx.set(
    path,
    list.filter((_, i) => i !== index),
  );
}

/** Appends `row` to the list at `path` (creating the list). */
export function addRow(fx: FormApi, path: string, row: Json): void {
  const list = fx.get(path);
  fx.set(path, [...(Array.isArray(list) ? list : []), row]);
}

/**
 * The Remove button of a row: "Remove header 2". The focus then moves to the next row's Remove button (or
 * the previous one's, or the add button), not to the page's start.
 */
export function RemoveButton({ label, onClick }: { label: string; onClick: () => void }) {
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
export function RowErrors({ fx, paths }: { fx: FormApi; paths: string[] }) {
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
  const { id, error, aria } = useBound(fx, path);
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
        {...aria}
        onInput={(e) => fx.set(path, e.currentTarget.value === '' ? undefined : e.currentTarget.value)}
      />
      <InlineError id={`${id}-error`} error={error} />
    </>
  );
}
