import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { ApiError } from '../api.js';

/**
 * Where to show an API error in a form: the field the service named (`attributes.field`, a dotted path such
 * as `request.url`), or null for an error of the whole form.
 */
export function fieldOfError(error: unknown): string | null {
  return error instanceof ApiError && error.field ? error.field : null;
}

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
