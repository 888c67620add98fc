import { planRetry } from '../protocol/retry.js';
import { type CheckResult, type Job, MAX_RESULT_SIZE_BYTES, type RunOutcome } from '../protocol/index.js';
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
  return {
    status: 'FAILED',
    hasFailures: true,
    hasErrors: true,
    isDegraded: false,
    overMaxResponseTime: false,
    responseTime: Math.max(0, Math.round(responseTimeMs)),
    startedAt: startedAt.toISOString(),
    stoppedAt,
    errorMessage: message,
    assertions: [],
    logs: [{ time: stoppedAt, level: 'ERROR', msg: message }],
  };
}

/**
 * The result the agent posts for a run: the executor's outcome plus the agent-filled fields
 * `runLocation`, `attempts` (= `job.attempt`), `artifacts`, and `resultType`: ATTEMPT when the
 * job's retry strategy retries this outcome (src/checks/retry.ts `planRetry`, the rule the
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
/** Paths listed in `truncated.fields` at most. */
const MAX_LISTED_FIELDS = 50;

/** Bytes of `value` as JSON (what the result post sends). */
export function jsonSizeBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}

/** A string of the result that may be cut: where it is, and how to read and replace it. */
type StringSlot = { path: string; get(): string; set(value: string): void };

function slotOf(holder: Record<string, unknown> | unknown[], key: string | number, path: string): StringSlot {
  const h = holder as Record<string | number, unknown>;
  return { path, get: () => h[key] as string, set: (value) => (h[key] = value) };
}

/** Every string leaf under `value` (object values and array items; keys are never cut). */
function stringSlots(value: unknown, path: string, out: StringSlot[]): StringSlot[] {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (typeof item === 'string') out.push(slotOf(value, i, `${path}[${i}]`));
      else stringSlots(item, `${path}[${i}]`, out);
    });
  } else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const [key, item] of Object.entries(record)) {
      const at = path === '' ? key : `${path}.${key}`;
      if (typeof item === 'string') out.push(slotOf(record, key, at));
      else stringSlots(item, at, out);
    }
  }
  return out;
}

/**
 * Cuts the longest strings of `slots` to one common length (the longest go first, the
 * short ones are left whole) until `size()` is at most `targetBytes` or nothing is left
 * to cut. Each cut string keeps its head and ends `…[truncated N bytes]`, N counted in
 * UTF-8 bytes of the original text.
 */
function cutStrings(
  slots: StringSlot[],
  size: () => number,
  targetBytes: number,
  originalBytes: Map<string, number>,
  fields: Set<string>,
): boolean {
  for (let round = 0; round < 6; round++) {
    const excess = size() - targetBytes;
    if (excess <= 0) return true;
    const texts = slots.flatMap((slot) => {
      const text = slot.get();
      return text.length > MIN_CUT_CHARS
        ? [{ slot, text, bytesPerChar: jsonSizeBytes(text) / text.length }]
        : [];
    });
    // Only texts over MIN_CUT_CHARS are cut; each cut costs its marker (about 40 bytes).
    const gain = (cap: number) =>
      texts.reduce(
        (sum, t) =>
          sum +
          (t.text.length > cap && t.text.length > MIN_CUT_CHARS
            ? (t.text.length - cap) * t.bytesPerChar - 40
            : 0),
        0,
      );
    const longest = texts.reduce((max, t) => Math.max(max, t.text.length), 0);
    if (gain(0) <= 0) return false;
    // The largest common length whose cuts free enough, with slack for the markers and escapes
    // (which the per-string average misjudges), more each round.
    const needed = excess * (1 + round / 3) + 4096 * (round + 1);
    let low = 0;
    let high = longest;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (gain(mid) >= needed) low = mid;
      else high = mid - 1;
    }
    for (const { slot, text } of texts) {
      if (text.length <= low || text.length <= MIN_CUT_CHARS) continue;
      let keep = low;
      // Never split a surrogate pair.
      if (keep > 0 && /[\uD800-\uDBFF]/.test(text[keep - 1] ?? '')) keep -= 1;
      const original = originalBytes.get(slot.path) ?? Buffer.byteLength(text);
      originalBytes.set(slot.path, original);
      const head = text.slice(0, keep).replace(/…\[truncated \d+ bytes\]$/, '');
      slot.set(`${head}…[truncated ${original - Buffer.byteLength(head)} bytes]`);
      fields.add(slot.path);
    }
  }
  return size() <= targetBytes;
}

/** Every array under `value` longer than `keep` is cut to its first `keep` items; their paths are added. */
function cutArrays(value: unknown, path: string, keep: number, fields: Set<string>): void {
  if (Array.isArray(value)) {
    if (value.length > keep) {
      value.splice(keep);
      fields.add(path);
    }
    for (const [i, item] of value.entries()) cutArrays(item, `${path}[${i}]`, keep, fields);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      cutArrays(item, path === '' ? key : `${path}.${key}`, keep, fields);
    }
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
 * @param limitBytes the JSON size to fit in, bytes; default MAX_RESULT_SIZE_BYTES.
 * @returns `result` itself when it fits already, else a trimmed copy (the input is not changed).
 */
export function fitResultToLimit(
  result: CheckResult,
  limitBytes: number = MAX_RESULT_SIZE_BYTES,
): CheckResult {
  const originalSizeBytes = jsonSizeBytes(result);
  if (originalSizeBytes <= limitBytes) return result;
  // Copies of what phases 1 and 2 change; the rest is copied only if phase 3 is reached.
  let trimmed: CheckResult = { ...result, logs: result.logs.map((line) => ({ ...line })) };
  const http0 = result.httpCheckResult;
  if (http0) {
    trimmed.httpCheckResult = {
      ...http0,
      ...(http0.response ? { response: { ...http0.response } } : {}),
      ...(http0.request ? { request: { ...http0.request } } : {}),
    };
  }
  if (result.tcpCheckResult) trimmed.tcpCheckResult = { ...result.tcpCheckResult };
  const fields = new Set<string>();
  const originalBytes = new Map<string, number>();
  const targetBytes = Math.max(4096, limitBytes - Math.min(TRIM_MARGIN_BYTES, Math.floor(limitBytes / 8)));
  const note = (): NonNullable<CheckResult['truncated']> => ({
    reason: `the result was ${originalSizeBytes} bytes, over the service's limit of ${limitBytes} bytes; the agent cut it to fit`,
    originalSizeBytes,
    fields: [...fields].slice(0, MAX_LISTED_FIELDS),
  });
  const size = () => jsonSizeBytes({ ...trimmed, truncated: note() });
  const finish = () => ({ ...trimmed, truncated: note() });

  const primary: StringSlot[] = trimmed.logs.map((line, i) => slotOf(line, 'msg', `logs[${i}].msg`));
  const http = trimmed.httpCheckResult;
  if (http?.response && typeof http.response.body === 'string') {
    primary.push(slotOf(http.response, 'body', 'httpCheckResult.response.body'));
  }
  if (http?.request && typeof http.request.body === 'string') {
    primary.push(slotOf(http.request, 'body', 'httpCheckResult.request.body'));
  }
  if (trimmed.tcpCheckResult) {
    primary.push(slotOf(trimmed.tcpCheckResult, 'responseData', 'tcpCheckResult.responseData'));
  }
  if (cutStrings(primary, size, targetBytes, originalBytes, fields)) return finish();

  if (trimmed.logs.length > 2 * KEPT_LOG_LINES + 1) {
    // Keep as many lines as fit (at least the first and last KEPT_LOG_LINES), half from each end.
    const logsBytes = jsonSizeBytes(trimmed.logs);
    const perLine = logsBytes / trimmed.logs.length;
    const room = targetBytes - (size() - logsBytes) - 1024;
    const keepEach = Math.max(KEPT_LOG_LINES, Math.floor((0.95 * room) / perLine / 2));
    if (2 * keepEach < trimmed.logs.length) {
      const cut = trimmed.logs.length - 2 * keepEach;
      const marker = {
        time: trimmed.logs[keepEach]?.time ?? trimmed.stoppedAt,
        level: 'WARN' as const,
        msg: `…[${cut} log lines truncated]`,
      };
      trimmed.logs = [
        ...trimmed.logs.slice(0, keepEach),
        marker,
        ...trimmed.logs.slice(trimmed.logs.length - keepEach),
      ];
      fields.add('logs');
    }
    if (size() <= targetBytes) return finish();
  }

  trimmed = structuredClone(trimmed);
  if (cutStrings(stringSlots(trimmed, '', []), size, targetBytes, originalBytes, fields)) return finish();

  cutArrays(trimmed, '', KEPT_ARRAY_ITEMS, fields);
  if (size() <= targetBytes) return finish();

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
  cutStrings(stringSlots(trimmed, '', []), size, targetBytes, originalBytes, fields);
  return finish();
}
