import { planRetry } from '../protocol/retry.js';
import { type CheckResult, type Job, MAX_RESULT_SIZE_BYTES, type RunOutcome } from '../protocol/index.js';
import { failedOutcome } from '../checks/outcome.js';
import type { RejectedJob } from './service-client.js';

/** Longest `errorMessage` the agent writes, characters. */
const MAX_REASON_LENGTH = 1024;

/**
 * The outcome of a run the agent could not carry out (bad job, no executor,
 * executor crash or timeout): `hasErrors` and `hasFailures` true, status FAILED,
 * `reason` as `errorMessage` and as one ERROR log line.
 *
 * @param startedAt when the run started; `stoppedAt` is now.
 * @param responseTimeMs time spent before giving up, milliseconds (0 when nothing ran).
 */
export function errorOutcome(reason: string, startedAt: Date, responseTimeMs: number): RunOutcome {
  const stoppedAt = new Date().toISOString();
  const message = reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH)}…` : reason;
  return failedOutcome({
    startedAt: startedAt.toISOString(),
    stoppedAt,
    errorMessage: message,
    logs: [{ time: stoppedAt, level: 'ERROR', msg: message }],
    responseTime: Math.max(0, Math.round(responseTimeMs)),
    hasErrors: true,
  });
}

/**
 * The result the agent posts for a run: the executor's outcome plus the agent-filled fields
 * `runLocation`, `attempts` (= `job.attempt`), `artifacts`, and `resultType`: ATTEMPT when the
 * job's retry strategy retries this outcome (src/protocol/retry.ts `planRetry`, the rule the
 * service applies too), else FINAL.
 *
 * @param nowMs epoch ms the run ended; default now.
 */
export function toCheckResult(
  outcome: RunOutcome,
  job: Pick<Job, 'runLocation' | 'attempt'> & Partial<Pick<Job, 'retryStrategy' | 'runStartedAt'>>,
  artifacts: CheckResult['artifacts'] = [],
  nowMs = Date.now(),
): CheckResult {
  const runStartedAtMs = job.runStartedAt ? Date.parse(job.runStartedAt) : Number.NaN;
  const retry = planRetry({
    strategy: job.retryStrategy ?? null,
    attempt: job.attempt,
    runStartedAtMs: Number.isNaN(runStartedAtMs) ? Date.parse(outcome.startedAt) || nowMs : runStartedAtMs,
    nowMs,
    outcome,
  });
  return {
    ...outcome,
    runLocation: job.runLocation,
    attempts: job.attempt,
    resultType: retry.retry ? 'ATTEMPT' : 'FINAL',
    artifacts,
  };
}

/** The error result of a job the claim answer held but that did not match `JobSchema`. */
export function rejectedJobResult(rejected: RejectedJob): CheckResult {
  return toCheckResult(errorOutcome(rejected.reason, new Date(), 0), {
    runLocation: rejected.runLocation ?? 'unknown',
    attempt: rejected.attempt ?? 1,
  });
}

/** Room kept under the limit for the `truncated` note, the cut markers and rounding, bytes. */
const TRIM_MARGIN_BYTES = 16 * 1024;
/** Log lines kept at each end when the lines themselves must go. */
const KEPT_LOG_LINES = 100;
/** Elements kept of any other array when arrays must be cut. */
const KEPT_ARRAY_ITEMS = 100;
/** Texts this short are never cut (their marker would be as long), characters. */
const MIN_CUT_CHARS = 64;
/** Room kept for the paths a round of cuts adds to `truncated.fields`, bytes. */
const NOTE_GROWTH_BYTES = 2048;
/** Paths listed in `truncated.fields` at most. */
const MAX_LISTED_FIELDS = 50;

/** Bytes of `value` as JSON (what the result post sends). */
export function jsonSizeBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}

/** JSON bytes of each ASCII code unit below 0x20: 2 for `\b \t \n \f \r`, 6 (`\u00XX`) for the rest. */
const CONTROL_BYTES = Array.from({ length: 32 }, (_, c) => ([8, 9, 10, 12, 13].includes(c) ? 2 : 6));
/** A code unit JSON.stringify writes as something other than one byte. */
const NOT_PLAIN = /[^\x20\x21\x23-\x5b\x5d-\x7e]/;
/** Bytes a cut marker `…[truncated N bytes]` may take as JSON, at most. */
const MARKER_MAX_BYTES = 40;

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
function escapedPrefix(text: string, budget: number): { end: number; bytes: number } {
  let bytes = 0;
  let i = 0;
  const length = text.length;
  while (i < length) {
    const c = text.charCodeAt(i);
    let cost: number;
    let width = 1;
    if (c < 0x80) cost = c < 0x20 ? (CONTROL_BYTES[c] as number) : c === 0x22 || c === 0x5c ? 2 : 1;
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

/**
 * A container met while measuring: copied (copy on write) the first time one of its strings
 * is cut, so the input result is never changed.
 */
type Node = {
  value: Record<string, unknown> | unknown[];
  parent: Node | null;
  key: string | number;
  owned: boolean;
  path?: string;
};

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

/** The container of `node`, copied into its (copied) parent first if it is still the input's. */
function own(node: Node): Record<string | number, unknown> {
  if (!node.owned) {
    const parent = own(node.parent as Node);
    node.value = Array.isArray(node.value) ? node.value.slice() : { ...node.value };
    parent[node.key] = node.value;
    node.owned = true;
  }
  return node.value as Record<string | number, unknown>;
}

/** A string of the result that may be cut: its holder, its key, and its JSON bytes now. */
type Slot = { node: Node; key: string | number; bytes: number };

function childPath(node: Node, key: string | number): string {
  const at = nodePath(node);
  return typeof key === 'number' ? `${at}[${key}]` : at === '' ? key : `${at}.${key}`;
}

/** What a measuring walk collects and substitutes. */
type Walk = {
  /** Strings longer than MIN_CUT_CHARS are listed here (when given). */
  slots?: Slot[];
  /** Known JSON bytes of some entries (holder → key → bytes), used instead of walking them. */
  known?: Map<object, Map<string, number>>;
  /** Nodes of these containers are kept here. */
  watch?: Map<object, Node | null>;
};

/**
 * Bytes of `value` as JSON.stringify writes it (`undefined`, functions and symbols left out
 * of objects and `null` in arrays, non-finite numbers `null`, `toJSON` honoured), in one walk.
 */
function measure(value: unknown, parent: Node | null, key: string | number, walk: Walk): number {
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
      break;
    default:
      return 0;
  }
  if (value === null) return 4;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return measure((value as { toJSON(key: string): unknown }).toJSON(String(key)), null, key, {});
  }
  const node: Node = { value: value as Node['value'], parent, key, owned: false };
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
    const item: unknown = (value as Record<string, unknown>)[name];
    const t = typeof item;
    if (item === undefined || t === 'function' || t === 'symbol') continue;
    const given = known?.get(name);
    bytes += jsonStringBytes(name) + 1 + (given ?? measure(item, node, name, walk));
    count += 1;
  }
  return bytes + Math.max(0, count - 1);
}

/** A string that may be cut, however it is held. */
type Cuttable = {
  readonly text: string;
  readonly bytes: number;
  path(): string;
  set(text: string, bytes: number): void;
};

function slotCuttable(slot: Slot): Cuttable {
  return {
    get text() {
      return (slot.node.value as Record<string | number, unknown>)[slot.key] as string;
    },
    get bytes() {
      return slot.bytes;
    },
    path: () => childPath(slot.node, slot.key),
    set: (text, bytes) => {
      own(slot.node)[slot.key] = text;
      slot.bytes = bytes;
    },
  };
}

/**
 * Cuts the largest strings of `items` to one common JSON byte budget (the largest go first, the
 * short ones are left whole) so that `excessBytes` go, or as much as can. The budget is computed
 * from the sizes alone (sorted once); each cut then reads only the head it keeps. Each cut text
 * keeps its head and ends `…[truncated N bytes]`, N counted in UTF-8 bytes of the original text.
 *
 * @returns the bytes freed (exact).
 */
function cutStrings(
  items: Cuttable[],
  excessBytes: number,
  cutTexts: Set<string>,
  fields: FieldList,
): number {
  if (excessBytes <= 0) return 0;
  const eligible = items
    .filter((item) => item.text.length > MIN_CUT_CHARS && item.bytes > MARKER_MAX_BYTES + 2)
    .sort((a, b) => b.bytes - a.bytes);
  if (eligible.length === 0) return 0;
  // Each string over the budget B ends at most B + quotes + marker bytes: the largest B that frees enough.
  const overhead = 2 + MARKER_MAX_BYTES;
  let budget = -1;
  let prefix = 0;
  for (let k = 1; k <= eligible.length; k++) {
    prefix += (eligible[k - 1] as Cuttable).bytes;
    budget = Math.max(budget, Math.floor((prefix - excessBytes) / k) - overhead);
  }
  budget = Math.max(0, budget);
  let freed = 0;
  for (const item of eligible) {
    if (item.bytes <= budget + overhead) break;
    const { text } = item;
    const { end, bytes: headBytes } = escapedPrefix(text, budget);
    const head = text.slice(0, end);
    // A text this function cut before: N counts from the text before its first cut.
    const previous = cutTexts.has(cutKey(text)) ? /…\[truncated (\d+) bytes\]$/.exec(text.slice(-48)) : null;
    const originalBytes = previous
      ? Buffer.byteLength(text) - Buffer.byteLength(previous[0]) + Number(previous[1])
      : Buffer.byteLength(text);
    const marker = `…[truncated ${originalBytes - Buffer.byteLength(head)} bytes]`;
    const cut = `${head}${marker}`;
    const bytes = 2 + headBytes + Buffer.byteLength(marker);
    freed += item.bytes - bytes;
    item.set(cut, bytes);
    cutTexts.add(cutKey(cut));
    fields.add(item.path);
  }
  return freed;
}

/** What {@link cutStrings} remembers of a text it made: its length and its end (hashing the whole would cost a pass). */
function cutKey(text: string): string {
  return `${text.length}:${text.slice(-48)}`;
}

/**
 * Every array under `value` longer than `keep` is cut to its first `keep` items (copied, the
 * input is not changed); their paths are added. Returns `value` itself when nothing was cut.
 */
function cutArrays(value: unknown, path: string, keep: number, fields: FieldList): unknown {
  if (Array.isArray(value)) {
    let out = value;
    if (value.length > keep) {
      out = value.slice(0, keep);
      fields.add(path);
    }
    for (let i = 0; i < out.length; i++) {
      const item: unknown = out[i];
      const cut = cutArrays(item, `${path}[${i}]`, keep, fields);
      if (cut !== item) {
        if (out === value) out = value.slice();
        out[i] = cut;
      }
    }
    return out;
  }
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { toJSON?: unknown }).toJSON !== 'function'
  ) {
    let out = value as Record<string, unknown>;
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key];
      const cut = cutArrays(item, path === '' ? key : `${path}.${key}`, keep, fields);
      if (cut !== item) {
        if (out === value) out = { ...out };
        out[key] = cut;
      }
    }
    return out;
  }
  return value;
}

/** The first MAX_LISTED_FIELDS distinct paths cut; a path is only built while there is room for it. */
class FieldList {
  readonly list: string[] = [];
  add(path: string | (() => string)): void {
    if (this.list.length >= MAX_LISTED_FIELDS) return;
    const at = typeof path === 'string' ? path : path();
    if (!this.list.includes(at)) this.list.push(at);
  }
}

/** A trimmed result and its exact JSON size. */
export type FittedResult = { result: CheckResult; sizeBytes: number };

/**
 * Fits a result under the service's result limit (MAX_RESULT_SIZE_BYTES, answered 413 above
 * it) instead of letting it be dropped (issue 9 item 2.4). In this order, until it fits:
 * 1. log lines and bodies (`logs[].msg`, the HTTP response and request bodies, the TCP reply),
 *    the longest first, each cut text ending `…[truncated N bytes]`;
 * 2. log lines themselves: as many as fit kept from both ends (at least 100 each), one WARN line
 *    saying how many went;
 * 3. every other string (headers, assertion values, `errorMessage`…), the longest first;
 * 4. arrays (assertions, redirects, ping results…) cut to their first 100 items;
 * 5. the check type's result part and the assertions dropped.
 * The returned result carries `truncated` (why, the size before, the paths cut).
 *
 * Linear in the result's size: every field is measured once (its JSON bytes, computed without
 * serialising), the cuts are computed from the sizes, and each cut reads only the head it keeps;
 * the result is walked whole again only when phases 4 and 5 are reached. The input is never
 * copied whole: containers are copied only where something in them is cut.
 *
 * @param limitBytes the JSON size to fit in, bytes; default MAX_RESULT_SIZE_BYTES.
 * @returns the result (`result` itself when it fits already, else a trimmed copy; the input is
 *   not changed) and its exact JSON size, bytes.
 */
export function fitResult(result: CheckResult, limitBytes: number = MAX_RESULT_SIZE_BYTES): FittedResult {
  // Phase 1's strings measured first; the rest of the result in one walk that uses their sizes.
  const logs0 = result.logs;
  const msgBytes = logs0.map((line) => jsonStringBytes(line.msg));
  const lineBytes = logs0.map((line, i) => lineSize(line, msgBytes[i] as number));
  const logsBytes = (lines: number[]) => lines.reduce((sum, b) => sum + b, 2 + Math.max(0, lines.length - 1));
  const http0 = result.httpCheckResult;
  const holders: { holder: Record<string, unknown>; key: string }[] = [];
  if (http0?.response && typeof http0.response.body === 'string') {
    holders.push({ holder: http0.response as Record<string, unknown>, key: 'body' });
  }
  if (http0?.request && typeof http0.request.body === 'string') {
    holders.push({ holder: http0.request as Record<string, unknown>, key: 'body' });
  }
  const tcp0 = result.tcpCheckResult as Record<string, unknown> | undefined;
  if (tcp0 && typeof tcp0.responseData === 'string') holders.push({ holder: tcp0, key: 'responseData' });
  const bodyBytes = holders.map(({ holder, key }) => jsonStringBytes(holder[key] as string));
  const known = new Map<object, Map<string, number>>([[result, new Map([['logs', logsBytes(lineBytes)]])]]);
  holders.forEach(({ holder, key }, i) => {
    known.set(holder, new Map([[key, bodyBytes[i] as number]]));
  });
  const { truncated: earlier, ...bare } = result;
  const watch = new Map<object, Node | null>([[bare, null]]);
  for (const part of [http0, http0?.response, http0?.request, tcp0]) if (part) watch.set(part, null);
  const slots: Slot[] = [];
  // Measured without an earlier `truncated` note (a new one replaces it).
  known.set(bare, known.get(result) as Map<string, number>);
  let total = measure(bare, null, '', { slots, known, watch });
  const originalSizeBytes = earlier === undefined ? total : total + 13 + jsonSizeBytes(earlier);
  if (originalSizeBytes <= limitBytes) return { result, sizeBytes: originalSizeBytes };

  // Copies of what phases 1 and 2 change; other containers are copied only where a string is cut.
  const trimmed = { ...bare, logs: logs0.map((line) => ({ ...line })) } as CheckResult;
  // The walk's root node becomes the copy's: every node found under it now leads to `trimmed`.
  const root = watch.get(bare) as Node;
  Object.assign(root, { value: trimmed, owned: true, path: '' });
  const adopt = (original: object, copy: Record<string, unknown>, parent: Node, key: string) => {
    const node = watch.get(original) ?? ({} as Node);
    Object.assign(node, { value: copy, parent, key, owned: true });
    return node;
  };
  const bodies: Cuttable[] = [];
  if (http0) {
    const http = { ...http0 } as Record<string, unknown>;
    trimmed.httpCheckResult = http as NonNullable<CheckResult['httpCheckResult']>;
    const httpNode = adopt(http0, http, root, 'httpCheckResult');
    for (const side of ['response', 'request'] as const) {
      const part = http0[side];
      if (part) {
        const copy = { ...part } as Record<string, unknown>;
        http[side] = copy;
        adopt(part, copy, httpNode, side);
      }
    }
  }
  if (tcp0) {
    const copy = { ...tcp0 };
    trimmed.tcpCheckResult = copy as NonNullable<CheckResult['tcpCheckResult']>;
    adopt(tcp0, copy, root, 'tcpCheckResult');
  }
  holders.forEach(({ holder, key }, i) => {
    const node = watch.get(holder) as Node;
    const slot: Slot = { node, key, bytes: bodyBytes[i] as number };
    bodies.push(slotCuttable(slot));
  });

  const fields = new FieldList();
  const cutTexts = new Set<string>();
  const targetBytes = Math.max(4096, limitBytes - Math.min(TRIM_MARGIN_BYTES, Math.floor(limitBytes / 8)));
  const note = (): NonNullable<CheckResult['truncated']> => ({
    reason: `the result was ${originalSizeBytes} bytes, over the service's limit of ${limitBytes} bytes; the agent cut it to fit`,
    originalSizeBytes,
    fields: fields.list.slice(),
  });
  // `,"truncated":{…}` added before the closing brace.
  const noteBytes = () => 13 + jsonSizeBytes(note());
  const excess = () => total + noteBytes() - targetBytes;
  // The cut paths lengthen the note: a little room for them, then another round if that was not enough.
  const cut = (items: () => Cuttable[]) => {
    for (let round = 0; round < 3 && excess() > 0; round++) {
      total -= cutStrings(items(), excess() + NOTE_GROWTH_BYTES, cutTexts, fields);
    }
  };
  const finish = (): FittedResult => {
    const truncated = note();
    return { result: { ...trimmed, truncated }, sizeBytes: total + 13 + jsonSizeBytes(truncated) };
  };
  let lines = trimmed.logs;
  const logCuttables = (): Cuttable[] =>
    lines.flatMap((line, i) =>
      line.msg.length <= MIN_CUT_CHARS
        ? []
        : [
            {
              get text() {
                return line.msg;
              },
              get bytes() {
                return msgBytes[i] as number;
              },
              path: () => `logs[${i}].msg`,
              set: (text, bytes) => {
                line.msg = text;
                lineBytes[i] = (lineBytes[i] as number) + bytes - (msgBytes[i] as number);
                msgBytes[i] = bytes;
              },
            },
          ],
    );

  // 1. Log lines and bodies.
  cut(() => [...logCuttables(), ...bodies]);
  if (excess() <= 0) return finish();

  // 2. Log lines themselves: as many as fit from both ends (at least KEPT_LOG_LINES each).
  if (lines.length > 2 * KEPT_LOG_LINES + 1) {
    const before = logsBytes(lineBytes);
    const marker = { time: '', level: 'WARN' as const, msg: `…[${lines.length} log lines truncated]` };
    // Room for the kept lines: what the logs may take, less the brackets, the marker line and its comma.
    const room = before - excess() - 2 - lineSize(marker, jsonStringBytes(marker.msg)) - 64;
    let keepEach = 0;
    let used = 0;
    while (2 * (keepEach + 1) < lines.length) {
      const more = (lineBytes[keepEach] as number) + (lineBytes[lines.length - 1 - keepEach] as number) + 2;
      if (used + more > room) break;
      used += more;
      keepEach += 1;
    }
    keepEach = Math.max(KEPT_LOG_LINES, keepEach);
    if (2 * keepEach < lines.length) {
      const cut = lines.length - 2 * keepEach;
      const warn = {
        time: lines[keepEach]?.time ?? trimmed.stoppedAt,
        level: 'WARN' as const,
        msg: `…[${cut} log lines truncated]`,
      };
      const tail = lines.length - keepEach;
      const warnMsgBytes = jsonStringBytes(warn.msg);
      lines = [...lines.slice(0, keepEach), warn, ...lines.slice(tail)];
      msgBytes.splice(keepEach, tail - keepEach, warnMsgBytes);
      lineBytes.splice(keepEach, tail - keepEach, lineSize(warn, warnMsgBytes));
      trimmed.logs = lines;
      total += logsBytes(lineBytes) - before;
      fields.add('logs');
    }
    if (excess() <= 0) return finish();
  }

  // 3. Every other string, the longest first (phase 1's again with them).
  cut(() => [...logCuttables(), ...bodies, ...slots.map(slotCuttable)]);
  if (excess() <= 0) return finish();

  // 4. Arrays cut to their first KEPT_ARRAY_ITEMS items; 5. the check type's part and assertions dropped.
  for (const key of Object.keys(trimmed) as (keyof CheckResult)[]) {
    (trimmed as Record<string, unknown>)[key] = cutArrays(trimmed[key], key, KEPT_ARRAY_ITEMS, fields);
  }
  total = measure(trimmed, null, '', {});
  if (excess() <= 0) return finish();
  for (const part of ['httpCheckResult', 'tcpCheckResult', 'dnsCheckResult', 'icmpCheckResult'] as const) {
    if (trimmed[part] !== undefined) {
      delete trimmed[part];
      fields.add(part);
    }
  }
  if (trimmed.assertions.length > 0) {
    trimmed.assertions = [];
    fields.add('assertions');
  }
  const last: Slot[] = [];
  const lastWatch = new Map<object, Node | null>([[trimmed, null]]);
  total = measure(trimmed, null, '', { slots: last, watch: lastWatch });
  (lastWatch.get(trimmed) as Node).owned = true;
  cut(() => last.map(slotCuttable));
  return finish();
}

/** JSON bytes of one log line whose `msg` is `msgBytes` bytes. */
function lineSize(line: object, msgBytes: number): number {
  let bytes = 2;
  let count = 0;
  for (const name of Object.keys(line)) {
    const item: unknown = (line as Record<string, unknown>)[name];
    const t = typeof item;
    if (item === undefined || t === 'function' || t === 'symbol') continue;
    bytes += jsonStringBytes(name) + 1 + (name === 'msg' ? msgBytes : measure(item, null, name, NO_WALK));
    count += 1;
  }
  return bytes + Math.max(0, count - 1);
}

const NO_WALK: Walk = {};

/**
 * {@link fitResult}'s result alone: `result` itself when it fits in `limitBytes` (default
 * MAX_RESULT_SIZE_BYTES), else a trimmed copy carrying `truncated`. See {@link fitResult}.
 */
export function fitResultToLimit(
  result: CheckResult,
  limitBytes: number = MAX_RESULT_SIZE_BYTES,
): CheckResult {
  return fitResult(result, limitBytes).result;
}
