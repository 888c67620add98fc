/**
 * The controls of the check form, each bound to a path of the form's data (`request.url`,
 * `request.headers[0].key`) through a {@link FormApi}: it reads the value there, writes changes back, and
 * shows the error the API (or the form's own required checks) gave for that path, with `aria-invalid` and
 * `aria-describedby` on the control. Rows (headers, query parameters, assertions, variables, files) label
 * every input by its row ("Header 1 name") and have a "Remove header 1" button.
 */
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import type { CheckType } from '../../../api/schemas.js';
import { SelectField, TextAreaField, TextField } from '../../../ui/forms.js';

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

/**
 * The id of a control bound to a path, the error the form shows for it, and the ARIA attributes that tie
 * the two together (`aria-invalid`, `aria-describedby` of the error paragraph `${id}-error`).
 */
export function useBound(fx: FormApi, ...paths: string[]) {
  const id = useId();
  const error = fx.error(...paths);
  const aria = {
    'aria-invalid': error ? ('true' as const) : undefined,
    'aria-describedby': error ? `${id}-error` : undefined,
  };
  return { id, error, aria };
}

/** The ids a control with a hint (`${id}-hint`) and an error (`${id}-error`) is described by, or undefined. */
function describedByOf(id: string, hint: ComponentChildren, error: string | undefined): string | undefined {
  return [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
}

/** The hint paragraph under a control or a group, when there is one. */
export function Hint({ id, hint }: { id: string; hint: ComponentChildren }) {
  return hint ? (
    <p class="field-hint" id={id}>
      {hint}
    </p>
  ) : null;
}

/** One radio button with its label after it (a choice between the ways a field is given). */
export function RadioLine({
  id,
  name,
  label,
  checked,
  onChoose,
}: {
  id: string;
  name: string;
  label: ComponentChildren;
  checked: boolean;
  onChoose: () => void;
}) {
  return (
    <div class="check-line">
      <input id={id} type="radio" name={name} checked={checked} onChange={onChoose} />
      <label for={id}>{label}</label>
    </div>
  );
}

/** Text as the form keeps it: '' for a nullable field that is null. */
export function text(value: unknown): string {
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
  const describedBy = describedByOf(id, hint, error);
  return (
    <div class="field field-check">
      <div class="check-line">
        <input
          id={id}
          type="checkbox"
          checked={fx.get(path) === true}
          aria-describedby={describedBy}
          aria-invalid={error ? 'true' : undefined}
          onChange={(e) => fx.set(path, e.currentTarget.checked)}
        />
        <label for={id}>{label}</label>
      </div>
      <Hint id={`${id}-hint`} hint={hint} />
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
  const describedBy = describedByOf(id, hint, error);
  return (
    <fieldset class="check-group" aria-describedby={describedBy}>
      <legend>{legend}</legend>
      <Hint id={`${id}-hint`} hint={hint} />
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
