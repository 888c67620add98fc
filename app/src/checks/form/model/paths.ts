/** A plain JSON object. */
export type Json = Record<string, unknown>;

/** True for a plain object (not null, not an array). */
export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A path of the form's data as segments: `request.headers[0].key` → `['request', 'headers', 0, 'key']`. */
function pathSegments(path: string): (string | number)[] {
  const segments: (string | number)[] = [];
  for (const part of path.split('.')) {
    const match = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    if (!match) {
      segments.push(part);
      continue;
    }
    if (match[1]) segments.push(match[1]);
    for (const index of (match[2] ?? '').matchAll(/\[(\d+)\]/g)) segments.push(Number(index[1]));
  }
  return segments;
}

/** The value at `path` of `data`, or undefined. */
export function getIn(data: unknown, path: string): unknown {
  let current: unknown = data;
  for (const segment of pathSegments(path)) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

/**
 * A copy of `data` with `value` at `path` (objects and arrays along the way copied, missing ones created);
 * `undefined` removes the field.
 */
export function setIn<T>(data: T, path: string, value: unknown): T {
  const segments = pathSegments(path);
  const write = (node: unknown, index: number): unknown => {
    const segment = segments[index]!;
    const last = index === segments.length - 1;
    if (typeof segment === 'number') {
      const array = Array.isArray(node) ? [...node] : [];
      if (last) {
        if (value === undefined) array.splice(segment, 1);
        else array[segment] = value;
      } else array[segment] = write(array[segment], index + 1);
      return array;
    }
    const object: Json = isObject(node) ? { ...node } : {};
    if (last) {
      if (value === undefined) delete object[segment];
      else object[segment] = value;
    } else object[segment] = write(object[segment], index + 1);
    return object;
  };
  return write(data, 0) as T;
}

/**
 * Where an error about `field` (a dotted path from the API, `request.assertions[0].target`) is shown: the
 * control whose path is the field itself or the longest path it lies under (`request.headers[2].locked` →
 * `request.headers[2]`); null when no control shows it (then it goes to the top of the form). Between
 * controls of the same path the later wins: the advanced section comes last, and a field given there
 * overrides the control's value, so the value refused is the one typed there.
 * @param controls the paths of the controls on the form now, in the form's order, the advanced section's last.
 * @param aliases fields shown by another field's control (`frequencyOffset` → `frequency`).
 */
export function controlForField(
  field: string,
  controls: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): string | null {
  const target = aliases[field] ?? field;
  let best: string | null = null;
  for (const path of controls) {
    const under = target === path || target.startsWith(`${path}.`) || target.startsWith(`${path}[`);
    if (under && (best === null || path.length >= best.length)) best = path;
  }
  return best;
}
