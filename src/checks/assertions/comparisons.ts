import { isDeepStrictEqual } from 'node:util';
import type { AssertionComparison } from '../../protocol/index.js';

/** Why one value failed a comparison; null when it held. */
export type ComparisonFailure = string | null;

/** A short, bounded rendering of a value for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
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
): ComparisonFailure {
  const wanted = parseTargetNumber(target);
  if (wanted === null) return `target ${describeValue(target)} is not a number`;
  const actual = asNumber(value);
  if (actual === null) return `${describeValue(value)} is not a number`;
  return test(actual, wanted) ? null : `${describeValue(value)} is not ${word} ${target}`;
}

/**
 * Applies one comparison of reference/check-types.md ("Assertions") to one value.
 * `target` is the assertion's string target ('' when absent); GREATER_THAN and
 * LESS_THAN parse it and the value as numbers.
 */
export function compare(comparison: AssertionComparison, value: unknown, target: string): ComparisonFailure {
  const shown = describeValue(value);
  const quoted = describeValue(target);
  switch (comparison) {
    case 'EQUALS':
      return equalsTarget(value, target) ? null : `${shown} does not equal ${quoted}`;
    case 'NOT_EQUALS':
      return equalsTarget(value, target) ? `${shown} equals ${quoted}` : null;
    case 'HAS_KEY':
      return isObject(value) && Object.hasOwn(value, target) ? null : `${shown} has no key ${quoted}`;
    case 'NOT_HAS_KEY':
      return isObject(value) && Object.hasOwn(value, target) ? `${shown} has the key ${quoted}` : null;
    case 'HAS_VALUE':
      return hasValue(value, target) ? null : `${shown} has no value ${quoted}`;
    case 'NOT_HAS_VALUE':
      return hasValue(value, target) ? `${shown} has the value ${quoted}` : null;
    case 'IS_EMPTY':
      return isEmpty(value) ? null : `${shown} is not empty`;
    case 'NOT_EMPTY':
      return isEmpty(value) ? `${shown} is empty` : null;
    case 'GREATER_THAN':
      return numeric(value, target, (a, b) => a > b, 'greater than');
    case 'LESS_THAN':
      return numeric(value, target, (a, b) => a < b, 'less than');
    case 'CONTAINS':
      return contains(value, target) ? null : `${shown} does not contain ${quoted}`;
    case 'NOT_CONTAINS':
      return contains(value, target) ? `${shown} contains ${quoted}` : null;
    case 'IS_NULL':
      return value === null || value === undefined ? null : `${shown} is not null`;
    case 'NOT_NULL':
      return value === null || value === undefined ? 'the value is null' : null;
  }
}
