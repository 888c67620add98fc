/**
 * JSON sizes measured without serialising (what JSON.stringify would write, in bytes), and the walk
 * that measures a result once while noting where its strings are, so that a later cut copies only
 * the containers it changes (copy on write). The size fitting of results (result-size.ts) uses them.
 */

/** Texts this short are never cut (their marker would be as long), characters: the walk does not list them. */
export const MIN_CUT_CHARS = 64;

/** Bytes of `value` as JSON (what the result post sends). */
export function jsonSizeBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}

/** JSON bytes of an ASCII code unit below 0x20: 2 for `\b \t \n \f \r`, 6 (`\u00XX`) for the rest. */
function controlBytes(c: number): number {
  return c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
}
/** A code unit JSON.stringify writes as something other than one byte. */
const NOT_PLAIN = /[^\x20\x21\x23-\x5b\x5d-\x7e]/;

/**
 * Bytes of `text` as JSON, quotes included, in one pass and without building the JSON:
 * `"` `\` and control characters escaped, lone surrogates as `\uXXXX`, the rest UTF-8.
 */
export function jsonStringBytes(text: string): number {
  if (text.length >= 32 && !NOT_PLAIN.test(text)) return text.length + 2;
  return 2 + escapedPrefix(text, Number.POSITIVE_INFINITY).bytes;
}

/**
 * The longest head of `text` whose JSON (quotes not counted) is at most `budget` bytes, never
 * splitting a surrogate pair; one pass over the head only.
 */
export function escapedPrefix(text: string, budget: number): { end: number; bytes: number } {
  let bytes = 0;
  let i = 0;
  const length = text.length;
  while (i < length) {
    const c = text.charCodeAt(i);
    let cost: number;
    let width = 1;
    if (c < 0x80) cost = c < 0x20 ? controlBytes(c) : c === 0x22 || c === 0x5c ? 2 : 1;
    else if (c < 0x800) cost = 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < length ? text.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        cost = 4;
        width = 2;
      } else cost = 6;
    } else if (c >= 0xdc00 && c <= 0xdfff) cost = 6;
    else cost = 3;
    if (bytes + cost > budget) break;
    bytes += cost;
    i += width;
  }
  return { end: i, bytes };
}

/** An object or array of the result, its entries by key or position. */
export type Container = Record<string | number, unknown>;

/** `value` is an object or an array (not null, not a function). */
export function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null;
}

/** `value` is written as JSON by its `toJSON` (a Date, say), not entry by entry. */
export function hasToJSON(value: object): value is { toJSON(key: string): unknown } {
  return 'toJSON' in value && typeof value.toJSON === 'function';
}

/**
 * A container met while measuring: copied (copy on write) the first time one of its strings
 * is cut, so the input result is never changed.
 */
export type Node = {
  value: Container;
  parent: Node | null;
  key: string | number;
  owned: boolean;
  path?: string;
};

/** The JSON path of `node` from the root (`''`): `httpCheckResult.response`, `logs[3]`. */
function nodePath(node: Node): string {
  if (node.path !== undefined) return node.path;
  const parent = node.parent ? nodePath(node.parent) : '';
  node.path = !node.parent
    ? ''
    : typeof node.key === 'number'
      ? `${parent}[${node.key}]`
      : parent === ''
        ? node.key
        : `${parent}.${node.key}`;
  return node.path;
}

/**
 * The container of `node`, copied into its (copied) parent first if it is still the input's.
 * @throws Error when `node` is a root that is not owned (the fitting owns every root it cuts under).
 */
export function own(node: Node): Container {
  if (!node.owned) {
    if (node.parent === null)
      throw new Error('a measured root must be owned before anything under it is cut');
    const parent = own(node.parent);
    node.value = shallowCopy(node.value);
    parent[node.key] = node.value;
    node.owned = true;
  }
  return node.value;
}

/** A shallow copy of `value`: an array's is an array (holes kept), an object's a plain object. */
function shallowCopy(value: Container): Container {
  const copy: unknown = Array.isArray(value) ? value.slice() : { ...value };
  return isContainer(copy) ? copy : value;
}

/** A string of the result that may be cut: its holder, its key, and its JSON bytes now. */
export type Slot = { node: Node; key: string | number; bytes: number };

/** The JSON path of entry `key` of `node`. */
export function childPath(node: Node, key: string | number): string {
  const at = nodePath(node);
  return typeof key === 'number' ? `${at}[${key}]` : at === '' ? key : `${at}.${key}`;
}

/** What a measuring walk collects and substitutes. */
export type Walk = {
  /** Strings longer than MIN_CUT_CHARS are listed here (when given). */
  slots?: Slot[];
  /** Known JSON bytes of some entries (holder → key → bytes), used instead of walking them. */
  known?: Map<object, Map<string, number>>;
  /** Nodes of these containers are kept here. */
  watch?: Map<object, Node | null>;
};

/** The node a walk kept for `value` (which it was asked to watch). @throws Error when the walk did not meet it. */
export function watchedNode(watch: Map<object, Node | null>, value: object): Node {
  const node = watch.get(value);
  if (!node) throw new Error('a watched container was not met by the measuring walk');
  return node;
}

/**
 * Bytes of `value` as JSON.stringify writes it (`undefined`, functions and symbols left out
 * of objects and `null` in arrays, non-finite numbers `null`, `toJSON` honoured), in one walk.
 */
export function measure(value: unknown, parent: Node | null, key: string | number, walk: Walk): number {
  if (!isContainer(value)) return measureScalar(value, parent, key, walk);
  if (hasToJSON(value)) return measure(value.toJSON(String(key)), null, key, {});
  const node: Node = { value, parent, key, owned: false };
  if (walk.watch?.has(value)) walk.watch.set(value, node);
  if (Array.isArray(value)) {
    let bytes = 2 + Math.max(0, value.length - 1);
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const t = typeof item;
      bytes += item === undefined || t === 'function' || t === 'symbol' ? 4 : measure(item, node, i, walk);
    }
    return bytes;
  }
  const known = walk.known?.get(value);
  let bytes = 2;
  let count = 0;
  for (const name of Object.keys(value)) {
    const item = value[name];
    const t = typeof item;
    if (item === undefined || t === 'function' || t === 'symbol') continue;
    const given = known?.get(name);
    bytes += jsonStringBytes(name) + 1 + (given ?? measure(item, node, name, walk));
    count += 1;
  }
  return bytes + Math.max(0, count - 1);
}

/** {@link measure} of anything but an object or array: null, a string, a number…; 0 for what JSON leaves out. */
function measureScalar(value: unknown, parent: Node | null, key: string | number, walk: Walk): number {
  switch (typeof value) {
    case 'string': {
      const bytes = jsonStringBytes(value);
      if (walk.slots && parent && value.length > MIN_CUT_CHARS) walk.slots.push({ node: parent, key, bytes });
      return bytes;
    }
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4;
    case 'boolean':
      return value ? 4 : 5;
    case 'bigint':
      return String(value).length;
    case 'object':
      return 4; // null
    default:
      return 0;
  }
}

/** JSON bytes of one log line (or any flat object) whose `msg` is `msgBytes` bytes. */
export function lineSize(line: Record<string, unknown>, msgBytes: number): number {
  let bytes = 2;
  let count = 0;
  for (const name of Object.keys(line)) {
    const item = line[name];
    const t = typeof item;
    if (item === undefined || t === 'function' || t === 'symbol') continue;
    bytes += jsonStringBytes(name) + 1 + (name === 'msg' ? msgBytes : measure(item, null, name, NO_WALK));
    count += 1;
  }
  return bytes + Math.max(0, count - 1);
}

const NO_WALK: Walk = {};

/** JSON bytes of an array of log lines of `lineBytes` bytes each. */
export function logsBytes(lineBytes: number[]): number {
  return lineBytes.reduce((sum, b) => sum + b, 2 + Math.max(0, lineBytes.length - 1));
}
