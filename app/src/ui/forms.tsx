import type { ComponentChildren, JSX } from 'preact';
import { useId } from 'preact/hooks';

/**
 * A labelled control with its hint and error. `children` receives the ids to wire: the control takes `id`
 * and `aria-describedby`, and `aria-invalid` when there is an error. The error is read out when it appears.
 */
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: ComponentChildren;
  hint?: ComponentChildren;
  error?: string | null | undefined;
  children: (ids: { id: string; describedBy: string | undefined; invalid: boolean }) => ComponentChildren;
}) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div class={error ? 'field field-invalid' : 'field'}>
      <label for={id}>{label}</label>
      {children({ id, describedBy, invalid: Boolean(error) })}
      {hint ? (
        <p class="field-hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p class="field-error" id={errorId} role="alert">
          <span aria-hidden="true">✕ </span>
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** What every labelled control shows around it: its label, an optional hint, and the error for it. */
type FieldText = {
  /** The visible label, tied to the control by `for`/`id`. */
  label: ComponentChildren;
  /** A sentence under the control, read out with it (`aria-describedby`). */
  hint?: ComponentChildren;
  /** The message of an error for this control (from the API or the form's own check); none: valid. */
  error?: string | null | undefined;
};

/** The attributes {@link Field} wires itself and its controls set from their own props. */
type Wired =
  | 'id'
  | 'value'
  | 'type'
  | 'onInput'
  | 'onChange'
  | 'aria-describedby'
  | 'aria-invalid'
  | 'children';

/**
 * A labelled one-line input ({@link Field} around an `<input>`). `value` is the text shown and `onValue`
 * receives the text typed (a number input's text too: the page parses it). Every other attribute
 * (`required`, `maxLength`, `placeholder`, `spellcheck`, `autoComplete`, `inputMode`, `min`/`max`/`step`,
 * `class`, `name`, `list`, `ref`, `data-*`, `aria-required`) is passed to the `<input>`; `id`,
 * `aria-describedby` and `aria-invalid` (`"true"` while there is an error) are wired by the field.
 */
export function TextField({
  label,
  hint,
  error,
  type = 'text',
  value,
  onValue,
  ...attributes
}: FieldText &
  Omit<JSX.IntrinsicElements['input'], Wired> & {
    /** The input's type; default text. */
    type?: 'text' | 'email' | 'url' | 'tel' | 'number' | 'password' | 'date';
    value: string;
    onValue: (value: string) => void;
  }) {
  return (
    <Field label={label} hint={hint} error={error}>
      {({ id, describedBy, invalid }) => (
        <input
          // Typed by TextField's props; preact's union of input types cannot take them spread as they are.
          {...(attributes as object)}
          id={id}
          // One of the types above (preact types each input type apart).
          type={type as 'text'}
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid ? 'true' : undefined}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/**
 * A labelled multi-line input ({@link Field} around a `<textarea>`): `value` shown, `onValue` receives the
 * text typed; other attributes (`rows`, `required`, `maxLength`, `class`, `spellcheck`, `ref`, `data-*`) go to
 * the `<textarea>`, wired like {@link TextField}.
 */
export function TextAreaField({
  label,
  hint,
  error,
  value,
  onValue,
  ...attributes
}: FieldText &
  Omit<JSX.IntrinsicElements['textarea'], Wired> & {
    value: string;
    onValue: (value: string) => void;
  }) {
  return (
    <Field label={label} hint={hint} error={error}>
      {({ id, describedBy, invalid }) => (
        <textarea
          {...attributes}
          id={id}
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid ? 'true' : undefined}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** A choice of a {@link SelectField}: the value selected and the text shown. */
type SelectOption<V extends string = string> = { value: V; label: string };

/**
 * A labelled `<select>` of `options` ({@link Field} around it): `value` is the chosen option's value and
 * `onValue` receives the value chosen (typed as the options' values). Other attributes (`required`,
 * `class`, `name`, `ref`, `data-*`) go to the `<select>`, wired like {@link TextField}.
 */
export function SelectField<V extends string>({
  label,
  hint,
  error,
  value,
  onValue,
  options,
  ...attributes
}: FieldText &
  Omit<JSX.IntrinsicElements['select'], Wired> & {
    value: V;
    onValue: (value: V) => void;
    options: readonly SelectOption<V>[];
  }) {
  return (
    <Field label={label} hint={hint} error={error}>
      {({ id, describedBy, invalid }) => (
        <select
          // Typed by SelectField's props (a union on `multiple` in preact's types).
          {...(attributes as object)}
          id={id}
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid ? 'true' : undefined}
          onChange={(e) => onValue(e.currentTarget.value as V)}
        >
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** The error of a whole form (one no field was named for), as an alert above the buttons. */
export function FormError({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div class="notice notice-error" role="alert">
      {message}
    </div>
  );
}
