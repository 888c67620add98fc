import { isDeepStrictEqual } from 'node:util';
import type { AssertionComparison } from '../../protocol/index.js';

/** Why one value failed a comparison; null when it held. */
export type ComparisonFailure = string | null;

/** Longest rendering of a value in an error message, characters (then cut, ending with `…`). */
export const MAX_DESCRIBED_LENGTH = 200;

/**
 * A short, bounded rendering of a value for error messages: JSON, cut at `maxLength`
 * characters (default 200) with `…`, or uncut when `raw` (for a caller that scrubs first and
 * cuts then). Never throws: a value nested too deep for JSON.stringify is described as such.
 */
export function describeValue(value: unknown, options: { maxLength?: number; raw?: boolean } = {}): string {
  if (value === undefined) return 'nothing';
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = Array.isArray(value)
      ? '[an array nested too deep to show]'
      : '{an object nested too deep to show}';
  }
  if (options.raw) return text;
  const maxLength = options.maxLength ?? MAX_DESCRIBED_LENGTH;
  return text.length > maxLength ? `${text.slice(0, maxLength)}…` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseTargetNumber(target: string): number | null {
  if (target.trim() === '') return null;
  const number = Number(target);
  return Number.isFinite(number) ? number : null;
}

function asNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string') return parseTargetNumber(value);
  return null;
}

/**
 * Whether `value` equals the string `target`: numbers compare numerically (`"1.0"` equals 1),
 * booleans and null by their JSON text, strings as they are, objects and arrays deeply
 * against `target` parsed as JSON.
 */
export function equalsTarget(value: unknown, target: string): boolean {
  if (value === null || value === undefined) return target === 'null';
  if (typeof value === 'number') return parseTargetNumber(target) === value;
  if (typeof value === 'string') return value === target;
  if (typeof value === 'boolean') return String(value) === target;
  try {
    return isDeepStrictEqual(value, JSON.parse(target));
  } catch {
    return false;
  }
}

function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isObject(value)) return Object.keys(value).length === 0;
  return false;
}

function contains(value: unknown, target: string): boolean {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.some((item) => equalsTarget(item, target));
  if (isObject(value)) return JSON.stringify(value).includes(target);
  return String(value).includes(target);
}

function hasValue(value: unknown, target: string): boolean {
  if (Array.isArray(value)) return value.some((item) => equalsTarget(item, target));
  if (isObject(value)) return Object.values(value).some((item) => equalsTarget(item, target));
  return false;
}

function numeric(
  value: unknown,
  target: string,
  test: (a: number, b: number) => boolean,
  word: string,
  describe: (value: unknown) => string,
): ComparisonFailure {
  const wanted = parseTargetNumber(target);
  if (wanted === null) return `target ${describe(target)} is not a number`;
  const actual = asNumber(value);
  if (actual === null) return `${describe(value)} is not a number`;
  return test(actual, wanted) ? null : `${describe(value)} is not ${word} ${target}`;
}

/**
 * Applies one comparison of docs/checks.md ("Assertions") to one value.
 * `target` is the assertion's string target ('' when absent); GREATER_THAN and
 * LESS_THAN parse it and the value as numbers. `describe` renders values in the failure
 * (default {@link describeValue}; the engine passes one that scrubs before cutting).
 */
export function compare(
  comparison: AssertionComparison,
  value: unknown,
  target: string,
  describe: (value: unknown) => string = describeValue,
): ComparisonFailure {
  switch (comparison) {
    case 'EQUALS':
      return equalsTarget(value, target) ? null : `${describe(value)} does not equal ${describe(target)}`;
    case 'NOT_EQUALS':
      return equalsTarget(value, target) ? `${describe(value)} equals ${describe(target)}` : null;
    case 'HAS_KEY':
      return isObject(value) && Object.hasOwn(value, target)
        ? null
        : `${describe(value)} has no key ${describe(target)}`;
    case 'NOT_HAS_KEY':
      return isObject(value) && Object.hasOwn(value, target)
        ? `${describe(value)} has the key ${describe(target)}`
        : null;
    case 'HAS_VALUE':
      return hasValue(value, target) ? null : `${describe(value)} has no value ${describe(target)}`;
    case 'NOT_HAS_VALUE':
      return hasValue(value, target) ? `${describe(value)} has the value ${describe(target)}` : null;
    case 'IS_EMPTY':
      return isEmpty(value) ? null : `${describe(value)} is not empty`;
    case 'NOT_EMPTY':
      return isEmpty(value) ? `${describe(value)} is empty` : null;
    case 'GREATER_THAN':
      return numeric(value, target, (a, b) => a > b, 'greater than', describe);
    case 'LESS_THAN':
      return numeric(value, target, (a, b) => a < b, 'less than', describe);
    case 'CONTAINS':
      return contains(value, target) ? null : `${describe(value)} does not contain ${describe(target)}`;
    case 'NOT_CONTAINS':
      return contains(value, target) ? `${describe(value)} contains ${describe(target)}` : null;
    case 'IS_NULL':
      return value === null || value === undefined ? null : `${describe(value)} is not null`;
    case 'NOT_NULL':
      return value === null || value === undefined ? 'the value is null' : null;
  }
}
