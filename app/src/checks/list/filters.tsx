/**
 * The checks list's filters: the status summary (each count links to its filter) and the filter fieldset.
 */
import { CHECK_TYPE_LABELS, STATUS_ORDER, STATUS_WORDS } from '../labels.js';
import type { CheckDisplayStatus } from '../../ui/status.js';
import { NO_GROUP } from './sorting.js';
import { FilterSelect } from './controls.js';
import type { FilterOptions, Filters } from './rows.js';

/** The count of checks in each status, each a link that toggles that status's filter. */
export function StatusSummary({
  counts,
  active,
  hrefFor,
}: {
  counts: Map<CheckDisplayStatus, number>;
  active: string;
  hrefFor: (status: string) => string;
}) {
  return (
    <ul class="checks-summary">
      {STATUS_ORDER.filter((s) => counts.get(s)).map((s) => (
        <li key={s}>
          <a
            href={hrefFor(active === s ? '' : s)}
            class={`checks-summary-item checks-summary-${s}`}
            aria-current={active === s ? 'true' : undefined}
          >
            <span class="checks-summary-count">
              {counts.get(s)} {STATUS_WORDS[s]}
            </span>
          </a>
        </li>
      ))}
    </ul>
  );
}

/** The search field, the four filter selects and, when any filter is set, Clear filters. */
export function ChecksFilters({
  filters,
  options,
  setFilter,
  onClear,
}: {
  filters: Filters;
  options: FilterOptions;
  setFilter: (name: keyof Filters, value: string) => void;
  onClear: () => void;
}) {
  const filtered = Boolean(filters.q || filters.type || filters.status || filters.tag || filters.group);
  return (
    <fieldset class="checks-filters">
      <legend class="visually-hidden">Filter checks</legend>
      <div class="field">
        <label for="checks-q">Search by name</label>
        <input
          id="checks-q"
          type="search"
          value={filters.q}
          autocomplete="off"
          onInput={(e) => setFilter('q', e.currentTarget.value)}
        />
      </div>
      <FilterSelect
        id="checks-type"
        label="Type"
        value={filters.type}
        onChange={(v) => setFilter('type', v)}
        options={options.types.map((t) => [t, CHECK_TYPE_LABELS[t] ?? t])}
      />
      <FilterSelect
        id="checks-status"
        label="Status"
        value={filters.status}
        onChange={(v) => setFilter('status', v)}
        options={STATUS_ORDER.map((s) => [s, STATUS_WORDS[s].replace(/^./, (c) => c.toUpperCase())])}
      />
      <FilterSelect
        id="checks-tag"
        label="Tag"
        value={filters.tag}
        onChange={(v) => setFilter('tag', v)}
        options={options.tags.map((t) => [t, t])}
      />
      <FilterSelect
        id="checks-group"
        label="Group"
        value={filters.group}
        onChange={(v) => setFilter('group', v)}
        options={[
          [NO_GROUP, 'No group'],
          ...options.groups.map((g): [string, string] => [String(g.id), g.name]),
        ]}
      />
      {filtered ? (
        <button type="button" class="button-secondary checks-clear" onClick={onClear}>
          Clear filters
        </button>
      ) : null}
    </fieldset>
  );
}
