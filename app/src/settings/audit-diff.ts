/**
 * What changed between two documents of the audit log, field by field: the dotted paths whose values differ
 * (`config.headers[0].value`), each with its value before and after. Bounded: at most {@link MAX_CHANGES}
 * changes and {@link MAX_DEPTH} levels, so a large document never holds the page up.
 */

/** One changed field: its path, and its value before and after (undefined where the field is absent). */
export type FieldChange = { path: string; before: unknown; after: unknown };

/** Most changes listed; past it the list ends with one `…` row. */
export const MAX_CHANGES = 500;
const MAX_DEPTH = 12;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The changes from `before` to `after` (either may be null: a create or a delete lists every field). */
export function diffDocuments(before: unknown, after: unknown): FieldChange[] {
  const changes: FieldChange[] = [];
  const walk = (a: unknown, b: unknown, path: string, depth: number): void => {
    if (changes.length > MAX_CHANGES) return;
    if (depth < MAX_DEPTH && Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.max(a.length, b.length); i++) walk(a[i], b[i], `${path}[${i}]`, depth + 1);
      return;
    }
    if (
      depth < MAX_DEPTH &&
      (isObject(a) || a == null) &&
      (isObject(b) || b == null) &&
      (isObject(a) || isObject(b))
    ) {
      const keys = new Set([...Object.keys(isObject(a) ? a : {}), ...Object.keys(isObject(b) ? b : {})]);
      for (const key of keys) {
        walk(
          isObject(a) ? a[key] : undefined,
          isObject(b) ? b[key] : undefined,
          path ? `${path}.${key}` : key,
          depth + 1,
        );
      }
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b))
      changes.push({ path: path || '(document)', before: a, after: b });
  };
  walk(before ?? undefined, after ?? undefined, '', 0);
  if (changes.length > MAX_CHANGES) {
    changes.length = MAX_CHANGES;
    changes.push({ path: '…', before: undefined, after: undefined });
  }
  return changes;
}

/** A value as the diff shows it: JSON, or an em dash where the field is absent. */
export function shownValue(value: unknown): string {
  return value === undefined ? '—' : JSON.stringify(value);
}
