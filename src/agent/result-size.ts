import { type CheckResult, MAX_RESULT_SIZE_BYTES } from '../protocol/index.js';
import {
  type Container,
  childPath,
  escapedPrefix,
  hasToJSON,
  isContainer,
  jsonSizeBytes,
  jsonStringBytes,
  lineSize,
  logsBytes,
  MIN_CUT_CHARS,
  measure,
  type Node,
  own,
  type Slot,
  watchedNode,
} from './json-size.js';

/** Room kept under the limit for the `truncated` note, the cut markers and rounding, bytes. */
const TRIM_MARGIN_BYTES = 16 * 1024;
/** Log lines kept at each end when the lines themselves must go. */
const KEPT_LOG_LINES = 100;
/** Elements kept of any other array when arrays must be cut. */
const KEPT_ARRAY_ITEMS = 100;
/** Room kept for the paths a round of cuts adds to `truncated.fields`, bytes. */
const NOTE_GROWTH_BYTES = 2048;
/** Paths listed in `truncated.fields` at most. */
const MAX_LISTED_FIELDS = 50;
/** JSON bytes `,"truncated":` adds before the note itself (the note goes before the closing brace). */
const NOTE_KEY_BYTES = 13;
/** Bytes a cut marker `…[truncated N bytes]` may take as JSON, at most. */
const MARKER_MAX_BYTES = 40;

/** A string that may be cut, however it is held. */
type Cuttable = {
  readonly text: string;
  readonly bytes: number;
  path(): string;
  set(text: string, bytes: number): void;
};

/** The string of `slot` as a {@link Cuttable}: cutting it copies its holders (copy on write). */
function slotCuttable(slot: Slot): Cuttable {
  return {
    get text() {
      const text = slot.node.value[slot.key];
      return typeof text === 'string' ? text : '';
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
  let k = 0;
  for (const item of eligible) {
    k += 1;
    prefix += item.bytes;
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
  if (isContainer(value) && !hasToJSON(value)) {
    let out = value;
    for (const key of Object.keys(value)) {
      const item = value[key];
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

/** A string body of the result cut in phase 1 (an HTTP body, the TCP reply): its holder, key and JSON bytes. */
type Body = { holder: object; key: string; bytes: number };

/** What the first walk over a result learns: its size and where its cuttable strings are. */
type Measured = {
  /** The result without an earlier `truncated` note (a new one replaces it). */
  bare: Omit<CheckResult, 'truncated'>;
  /** JSON bytes of `bare`. */
  total: number;
  /** JSON bytes of the result as given, its earlier `truncated` note included. */
  originalSizeBytes: number;
  /** JSON bytes of each log line's `msg`, and of each whole line. */
  msgBytes: number[];
  lineBytes: number[];
  bodies: Body[];
  /** Every other string longer than MIN_CUT_CHARS. */
  slots: Slot[];
  /** The nodes of `bare`, `httpCheckResult` and its `response` and `request`, and `tcpCheckResult`. */
  watch: Map<object, Node | null>;
};

/**
 * Measures `result` in one walk: phase 1's strings (log lines and bodies) first, then the rest
 * using their sizes, listing the strings that may be cut.
 */
function measureResult(result: CheckResult): Measured {
  const msgBytes: number[] = [];
  const lineBytes: number[] = [];
  for (const line of result.logs) {
    const bytes = jsonStringBytes(line.msg);
    msgBytes.push(bytes);
    lineBytes.push(lineSize(line, bytes));
  }
  const http = result.httpCheckResult;
  const tcp = result.tcpCheckResult;
  const bodies: Body[] = [];
  if (http?.response && typeof http.response.body === 'string') {
    bodies.push({ holder: http.response, key: 'body', bytes: jsonStringBytes(http.response.body) });
  }
  if (http?.request && typeof http.request.body === 'string') {
    bodies.push({ holder: http.request, key: 'body', bytes: jsonStringBytes(http.request.body) });
  }
  if (tcp && typeof tcp.responseData === 'string') {
    bodies.push({ holder: tcp, key: 'responseData', bytes: jsonStringBytes(tcp.responseData) });
  }
  const { truncated: earlier, ...bare } = result;
  const rootKnown = new Map([['logs', logsBytes(lineBytes)]]);
  const known = new Map<object, Map<string, number>>([[result, rootKnown]]);
  for (const { holder, key, bytes } of bodies) known.set(holder, new Map([[key, bytes]]));
  known.set(bare, rootKnown);
  const watch = new Map<object, Node | null>([[bare, null]]);
  for (const part of [http, http?.response, http?.request, tcp]) if (part) watch.set(part, null);
  const slots: Slot[] = [];
  const total = measure(bare, null, '', { slots, known, watch });
  const originalSizeBytes = earlier === undefined ? total : total + NOTE_KEY_BYTES + jsonSizeBytes(earlier);
  return { bare, total, originalSizeBytes, msgBytes, lineBytes, bodies, slots, watch };
}

/** `node`, or a new one when the walk did not meet the container, now holding `copy` under `parent`. */
function adopt(node: Node | null | undefined, copy: Container, parent: Node, key: string): Node {
  if (!node) return { value: copy, parent, key, owned: true };
  Object.assign(node, { value: copy, parent, key, owned: true });
  return node;
}

/**
 * The copy of a measured result that the cuts change: the root, its log lines, and the containers
 * of the bodies copied; the walk's nodes now lead to the copy, so every other container is copied
 * only where a string in it is cut.
 */
function copyForCuts(measured: Measured): { trimmed: CheckResult; bodies: Cuttable[] } {
  const { bare, watch } = measured;
  const trimmed: CheckResult = { ...bare, logs: bare.logs.map((line) => ({ ...line })) };
  // The walk's root node becomes the copy's: every node found under it now leads to `trimmed`.
  const root = watchedNode(watch, bare);
  Object.assign(root, { value: trimmed, owned: true, path: '' });
  const http0 = bare.httpCheckResult;
  if (http0) {
    const http = { ...http0 };
    trimmed.httpCheckResult = http;
    const httpNode = adopt(watch.get(http0), http, root, 'httpCheckResult');
    if (http0.response) {
      http.response = { ...http0.response };
      adopt(watch.get(http0.response), http.response, httpNode, 'response');
    }
    if (http0.request) {
      http.request = { ...http0.request };
      adopt(watch.get(http0.request), http.request, httpNode, 'request');
    }
  }
  const tcp0 = bare.tcpCheckResult;
  if (tcp0) {
    trimmed.tcpCheckResult = { ...tcp0 };
    adopt(watch.get(tcp0), trimmed.tcpCheckResult, root, 'tcpCheckResult');
  }
  const bodies = measured.bodies.map(({ holder, key, bytes }) =>
    slotCuttable({ node: watchedNode(watch, holder), key, bytes }),
  );
  return { trimmed, bodies };
}

/**
 * One fitting of an oversized result, phase by phase (see {@link fitResult}): the trimmed copy,
 * its JSON size kept exact as strings, lines and arrays are cut, and the paths cut.
 */
class ResultFitting {
  readonly #limitBytes: number;
  readonly #originalSizeBytes: number;
  readonly #targetBytes: number;
  readonly #trimmed: CheckResult;
  readonly #bodies: Cuttable[];
  readonly #slots: Slot[];
  readonly #msgBytes: number[];
  readonly #lineBytes: number[];
  readonly #fields = new FieldList();
  readonly #cutTexts = new Set<string>();
  #lines: CheckResult['logs'];
  #total: number;

  constructor(measured: Measured, limitBytes: number) {
    const { trimmed, bodies } = copyForCuts(measured);
    this.#limitBytes = limitBytes;
    this.#originalSizeBytes = measured.originalSizeBytes;
    this.#targetBytes = Math.max(4096, limitBytes - Math.min(TRIM_MARGIN_BYTES, Math.floor(limitBytes / 8)));
    this.#trimmed = trimmed;
    this.#bodies = bodies;
    this.#slots = measured.slots;
    this.#msgBytes = measured.msgBytes;
    this.#lineBytes = measured.lineBytes;
    this.#lines = trimmed.logs;
    this.#total = measured.total;
  }

  /** Runs the phases until the result fits (or none is left). */
  fit(): FittedResult {
    // 1. Log lines and bodies.
    this.#cut(() => [...this.#logCuttables(), ...this.#bodies]);
    if (this.#excess() <= 0) return this.#finish();

    // 2. Log lines themselves: as many as fit from both ends (at least KEPT_LOG_LINES each).
    if (this.#lines.length > 2 * KEPT_LOG_LINES + 1) {
      this.#dropLogLines();
      if (this.#excess() <= 0) return this.#finish();
    }

    // 3. Every other string, the longest first (phase 1's again with them).
    this.#cut(() => [...this.#logCuttables(), ...this.#bodies, ...this.#slots.map(slotCuttable)]);
    if (this.#excess() <= 0) return this.#finish();

    // 4. Arrays cut to their first KEPT_ARRAY_ITEMS items; 5. the check type's part and assertions dropped.
    const fields: Record<string, unknown> = this.#trimmed;
    for (const key of Object.keys(fields)) {
      fields[key] = cutArrays(fields[key], key, KEPT_ARRAY_ITEMS, this.#fields);
    }
    this.#total = measure(this.#trimmed, null, '', {});
    if (this.#excess() <= 0) return this.#finish();
    this.#dropParts();
    return this.#finish();
  }

  #note(): NonNullable<CheckResult['truncated']> {
    return {
      reason: `the result was ${this.#originalSizeBytes} bytes, over the service's limit of ${this.#limitBytes} bytes; the agent cut it to fit`,
      originalSizeBytes: this.#originalSizeBytes,
      fields: this.#fields.list.slice(),
    };
  }

  /** Bytes over the target, the note counted (`,"truncated":{…}` added before the closing brace). */
  #excess(): number {
    return this.#total + NOTE_KEY_BYTES + jsonSizeBytes(this.#note()) - this.#targetBytes;
  }

  /** The cut paths lengthen the note: a little room for them, then another round if that was not enough. */
  #cut(items: () => Cuttable[]): void {
    for (let round = 0; round < 3 && this.#excess() > 0; round++) {
      this.#total -= cutStrings(items(), this.#excess() + NOTE_GROWTH_BYTES, this.#cutTexts, this.#fields);
    }
  }

  #finish(): FittedResult {
    const truncated = this.#note();
    return {
      result: { ...this.#trimmed, truncated },
      sizeBytes: this.#total + NOTE_KEY_BYTES + jsonSizeBytes(truncated),
    };
  }

  /** The `msg` of each log line long enough to cut; cutting one updates the line's sizes. */
  #logCuttables(): Cuttable[] {
    const msgBytes = this.#msgBytes;
    const lineBytes = this.#lineBytes;
    return this.#lines.flatMap((line, i) =>
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
  }

  /** Phase 2: keeps as many log lines as fit from both ends (at least KEPT_LOG_LINES each), one WARN line for the rest. */
  #dropLogLines(): void {
    const lines = this.#lines;
    const lineBytes = this.#lineBytes;
    const before = logsBytes(lineBytes);
    const marker = { time: '', level: 'WARN' as const, msg: `…[${lines.length} log lines truncated]` };
    // Room for the kept lines: what the logs may take, less the brackets, the marker line and its comma.
    const room = before - this.#excess() - 2 - lineSize(marker, jsonStringBytes(marker.msg)) - 64;
    let keepEach = 0;
    let used = 0;
    while (2 * (keepEach + 1) < lines.length) {
      const more = (lineBytes[keepEach] as number) + (lineBytes[lines.length - 1 - keepEach] as number) + 2;
      if (used + more > room) break;
      used += more;
      keepEach += 1;
    }
    keepEach = Math.max(KEPT_LOG_LINES, keepEach);
    if (2 * keepEach >= lines.length) return;
    const cut = lines.length - 2 * keepEach;
    const warn = {
      time: lines[keepEach]?.time ?? this.#trimmed.stoppedAt,
      level: 'WARN' as const,
      msg: `…[${cut} log lines truncated]`,
    };
    const tail = lines.length - keepEach;
    const warnMsgBytes = jsonStringBytes(warn.msg);
    this.#lines = [...lines.slice(0, keepEach), warn, ...lines.slice(tail)];
    this.#msgBytes.splice(keepEach, tail - keepEach, warnMsgBytes);
    lineBytes.splice(keepEach, tail - keepEach, lineSize(warn, warnMsgBytes));
    this.#trimmed.logs = this.#lines;
    this.#total += logsBytes(lineBytes) - before;
    this.#fields.add('logs');
  }

  /** Phase 5: drops the check type's part and the assertions, then cuts whatever strings are left. */
  #dropParts(): void {
    const trimmed = this.#trimmed;
    for (const part of [
      'httpCheckResult',
      'tcpCheckResult',
      'dnsCheckResult',
      'icmpCheckResult',
      'grpcCheckResult',
    ] as const) {
      if (trimmed[part] !== undefined) {
        delete trimmed[part];
        this.#fields.add(part);
      }
    }
    if (trimmed.assertions.length > 0) {
      trimmed.assertions = [];
      this.#fields.add('assertions');
    }
    const last: Slot[] = [];
    const lastWatch = new Map<object, Node | null>([[trimmed, null]]);
    this.#total = measure(trimmed, null, '', { slots: last, watch: lastWatch });
    watchedNode(lastWatch, trimmed).owned = true;
    this.#cut(() => last.map(slotCuttable));
  }
}

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
  const measured = measureResult(result);
  if (measured.originalSizeBytes <= limitBytes) return { result, sizeBytes: measured.originalSizeBytes };
  return new ResultFitting(measured, limitBytes).fit();
}

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
