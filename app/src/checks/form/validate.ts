/**
 * The form's own checks before sending (required fields, blank rows, tags); the API checks everything else.
 */
import type { CheckType } from '../../api/schemas.js';
import { getIn } from './model/paths.js';
import type { Json } from './model/paths.js';
import { setIn } from './model/paths.js';
import { isObject } from './model/paths.js';

/** An error being shown: its field (null: none), its message and, once placed, the control it is shown at. */
export type Problem = {
  field: string | null;
  message: string;
  /** The path of the control showing it; null: the top of the form; undefined: not placed yet. */
  at?: string | null;
};

/** `tags` from the comma-separated text: trimmed, empty ones and repeats left out. */
export function parseTags(text: string): string[] {
  return [
    ...new Set(
      text
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== ''),
    ),
  ];
}

/** Rows left entirely blank (added, never filled) are dropped before sending, so indexes match the API's. */
export function dropBlankRows(form: Json): Json {
  let next = form;
  const lists: [string, (row: Json) => boolean][] = [
    ['request.headers', (r) => !r.key && !r.value],
    ['request.queryParameters', (r) => !r.key && !r.value],
    ['environmentVariables', (r) => !r.key && !r.value],
    ['dependencies', (r) => !r.path && !r.content],
  ];
  for (const [path, blank] of lists) {
    const list = getIn(next, path);
    if (Array.isArray(list) && list.some((r) => isObject(r) && blank(r))) {
      next = setIn(
        next,
        path,
        list.filter((r) => !(isObject(r) && blank(r))),
      );
    }
  }
  return next;
}

/** The form's own checks of required fields, first failure only (the API checks everything else). */
export function missingRequired(type: CheckType, form: Json): Problem | null {
  const required: [string, string][] = [['name', 'Name']];
  if (type === 'API' || type === 'URL') required.push(['request.url', 'URL']);
  if (type === 'TCP' || type === 'ICMP') required.push(['request.hostname', 'Hostname']);
  if (type === 'TCP') required.push(['request.port', 'Port']);
  if (type === 'DNS') required.push(['request.query', 'Query']);
  if (type === 'GRPC') {
    required.push(['request.url', 'Host'], ['request.port', 'Port']);
    if (getIn(form, 'request.grpcConfig.mode') !== 'HEALTH')
      required.push(['request.grpcConfig.method', 'Method']);
  }
  if (type === 'SSL') required.push(['request.sslConfig.hostname', 'Hostname']);
  if (type === 'TRACEROUTE') required.push(['request.url', 'Host']);
  if (type === 'BROWSER' || type === 'MULTI_STEP') required.push(['script', 'Script']);
  if (type === 'AGENTIC') required.push(['prompt', 'Prompt']);
  if (type === 'HEARTBEAT') {
    const hb = getIn(form, 'heartbeat');
    if (isObject(hb) && hb.schedule != null) required.push(['heartbeat.schedule', 'Cron schedule']);
    else required.push(['heartbeat.period', 'Period']);
    required.push(['heartbeat.grace', 'Grace']);
  }
  const rows: [string, string, string][] = [
    ['request.headers', 'key', 'Header {n} name'],
    ['request.queryParameters', 'key', 'Query parameter {n} name'],
    ['environmentVariables', 'key', 'Variable {n} name'],
    ['dependencies', 'path', 'File {n} path'],
  ];
  for (const [path, label] of required) {
    const value = getIn(form, path);
    if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
      return { field: path, message: `${label} is required.` };
    }
  }
  for (const [path, key, label] of rows) {
    const list = getIn(form, path);
    if (!Array.isArray(list)) continue;
    const at = list.findIndex((r) => isObject(r) && String(r[key] ?? '').trim() === '');
    if (at >= 0)
      return {
        field: `${path}[${at}].${key}`,
        message: `${label.replace('{n}', String(at + 1))} is required.`,
      };
  }
  return null;
}
