/**
 * The checks list's controls: sortable column headers, filters and the New check menu.
 */
import { useRef } from 'preact/hooks';
import { NEW_CHECK_CHOICES } from '../labels.js';
import type { SortKey } from './sorting.js';

/** The words of each sort key, as the table's caption says the order ("sorted by last result"). */
export const SORT_LABELS: Record<SortKey, string> = {
  status: 'status',
  name: 'name',
  lastRun: 'last result',
  availability: 'availability',
};

/** A column header that sorts the table: a button inside, the order in `aria-sort` on the cell. */
export function SortHeader({
  label,
  column,
  sort,
  onSort,
  numeric = false,
}: {
  label: string;
  column: SortKey;
  sort: { key: SortKey; desc: boolean };
  onSort: (value: string) => void;
  numeric?: boolean;
}) {
  const active = sort.key === column;
  // The first press sorts the most useful way: names A→Z, the latest run and the lowest availability first.
  const firstDesc = column === 'lastRun';
  const nextDesc = active ? !sort.desc : firstDesc;
  const value = column === 'status' && !nextDesc ? '' : `${nextDesc ? '-' : ''}${column}`;
  return (
    <th
      scope="col"
      class={numeric ? 'num' : undefined}
      aria-sort={active ? (sort.desc ? 'descending' : 'ascending') : undefined}
    >
      <button type="button" class="checks-sort" onClick={() => onSort(value)}>
        {label}
        <span aria-hidden="true" class="checks-sort-arrow">
          {active ? (sort.desc ? '▼' : '▲') : '↕'}
        </span>
      </button>
    </th>
  );
}

/** A labelled select of one filter, "All" first. */
export function FilterSelect({
  id,
  label,
  value,
  options,
  onChange,
}: {
  id: string;
  label: string;
  value: string;
  options: readonly (readonly [string, string])[];
  onChange: (value: string) => void;
}) {
  // A value from the address that no check has any more is kept selectable, so the view explains itself.
  const all = value && !options.some(([v]) => v === value) ? [...options, [value, value] as const] : options;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="">All</option>
        {all.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The "New check" menu: a disclosure of links to the form of each type. */
export function NewCheckMenu() {
  const ref = useRef<HTMLDetailsElement>(null);
  return (
    <details
      class="checks-new-menu"
      ref={ref}
      onKeyDown={(e) => {
        // Escape closes the menu and gives the focus back to its button.
        if (e.key === 'Escape' && ref.current?.open) {
          ref.current.open = false;
          ref.current.querySelector('summary')?.focus();
        }
      }}
    >
      <summary class="button">New check</summary>
      <ul>
        {NEW_CHECK_CHOICES.map((c) => (
          <li key={c.type}>
            <a href={`/checks/new?type=${c.type}`}>
              <span class="checks-new-label">{c.label}</span>
              <span class="checks-new-hint">{c.hint}</span>
            </a>
          </li>
        ))}
      </ul>
    </details>
  );
}
