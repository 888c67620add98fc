import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import type { ServiceView } from '../api/schemas.js';
import { Checkbox } from '../ui/widgets.js';

/**
 * Status-page services, which incidents concern and status-page cards show: the loader and the picker the
 * incidents and status-pages pages share.
 */

/**
 * The services to pick from, as checkboxes in a fieldset named `legend`; `selected` holds service ids.
 * Shows `empty` when the account has no service, and `error` (the API's message about the field) under it.
 */
export function ServicePicker({
  legend,
  services,
  selected,
  onChange,
  empty,
  error,
}: {
  legend: string;
  services: readonly ServiceView[];
  selected: ReadonlySet<string>;
  onChange: (selected: Set<string>) => void;
  empty: ComponentChildren;
  error?: string | undefined;
}) {
  const id = useId();
  return (
    <fieldset class="misc-service-picker" aria-describedby={error ? `${id}-error` : undefined}>
      <legend>{legend}</legend>
      {services.length === 0 ? <p class="muted">{empty}</p> : null}
      <div class="misc-service-grid">
        {services.map((service) => (
          <Checkbox
            key={service.id}
            label={service.name}
            checked={selected.has(service.id)}
            onChange={(on) => {
              const next = new Set(selected);
              if (on) next.add(service.id);
              else next.delete(service.id);
              onChange(next);
            }}
          />
        ))}
      </div>
      {error ? (
        <p class="field-error" id={`${id}-error`} role="alert">
          <span aria-hidden="true">✕ </span>
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
