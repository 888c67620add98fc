import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { CheckResult } from '../../../protocol/index.js';
import type { ResultHook, StoredResult } from '../../context.js';
import { badField, notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/pagination.js';
import type { ErrorGroup, PatchErrorGroup } from './schema.js';
import type { Database } from '../../platform/store/database.js';
import { ErrorGroupQueries, type ErrorGroupRow } from './store.js';
import { CheckQueries } from '../../checks/index.js';

/** Messages are cut to this many characters before cleaning and storing (bounds regex work and rows). */
export const MAX_ERROR_MESSAGE_CHARS = 4096;

type Rule = readonly [RegExp, string];

/** Digits of a kept status code are shifted into the Private Use Area so no later rule sees them as numbers. */
const shield = (digits: string) => digits.replace(/\d/g, (d) => String.fromCharCode(0xe000 + Number(d)));
const unshield = (text: string) => text.replace(/[\uE000-\uE009]/g, (c) => String(c.charCodeAt(0) - 0xe000));

/** Rules before status codes are recognised: values whose digits must not count as numbers. */
const VALUE_RULES: readonly Rule[] = [
  // scheme://… up to a space, quote or bracket; trailing punctuation is left to the sentence.
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>()[\]{}]*[^\s'"`<>()[\]{}.,;:!?]/gi, '<url>'],
  // "…" (with escapes), '…' (not an apostrophe inside a word: can't, users') and `…`.
  [/"(?:[^"\\]|\\.)*"|(?<![\p{L}\p{N}_>])'[^']*'|`[^`]*`/gu, '<value>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  // RFC 9110 HTTP-date, ISO 8601 date-time, ISO date, clock time.
  [
    /\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT\b/g,
    '<timestamp>',
  ],
  [
    /\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?(?!\w)/gi,
    '<timestamp>',
  ],
  [/\b\d{4}-\d{2}-\d{2}\b/g, '<date>'],
  [/(?<![\w:.])\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?![\w:])/g, '<time>'],
  // IPv6 (full, or compressed with ::; node writes `::1:443` with the port fused in), then IPv4.
  [
    /(?<![\w:.>])(?=[:0-9a-f]*[0-9a-f])(?:(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}|(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)?::(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)?)(?![\w:.<])/gi,
    '<ip>',
  ],
  [/(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d)/g, '<ip>'],
  // A port after an address or a dotted host name (not after any word: `status:500` is no port).
  [/(?<=<ip>|\]|\blocalhost|\.[a-z][a-z0-9-]{1,62}):\d{1,5}(?![\w:]|\.\d)/gi, ':<port>'],
  [/\b0x[0-9a-f]+\b/gi, '<hex>'],
  // Hashes and hex ids: 12+ hex digits with at least one digit and one letter (pure digits are numbers).
  [/(?<![\w-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}(?![\w-])/gi, '<hex>'],
  // Other generated ids: 20+ word characters or hyphens holding at least 4 digits and a letter.
  [/(?<![\w-])(?=(?:[a-z_-]*\d){4})(?=[\w-]*[a-z])[\w-]{20,}(?![\w-])/gi, '<id>'],
  [
    /(?<![\w.])\d+(?:[.,]\d+)? ?(?:ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|µs|us|ns)(?!\w)/gi,
    '<duration>',
  ],
  [/(?<![\w.])\d+(?:[.,]\d+)? ?(?:bytes?|B|[kKMGT]i?B)(?!\w)/g, '<size>'],
];

/** `HTTP/1.1`, `HTTP/2`: the protocol version is kept, not a number. */
const HTTP_VERSION = /\bHTTP\/\d(?:\.\d)?(?![\w.])/gi;
/**
 * HTTP status codes are kept: a failing 500 and a failing 404 are different problems.
 * A status code is a 3-digit integer from 100 to 599 that directly follows a status
 * word (`HTTP`, `HTTP/1.1`, `status`, `status code`, `statusCode`, `code`, `got`,
 * `received`, `returned`, `expected`, `responded with`, `response`; optionally with
 * `:` or `=` between), or that stands in a `; `-separated part of the
 * message naming the STATUS_CODE assertion source (our executors' assertion errors).
 */
const STATUS_AFTER_WORD =
  /\b(HTTP(?:\/[\uE000-\uE009](?:\.[\uE000-\uE009])?)?|status(?: ?code)?|statusCode|code|got|received|returned|expected|responded with|response)( ?[:=]? ?)([1-5]\d\d)(?![\w.])/gi;
const STATUS_IN_PART = /(?<![\w.])[1-5]\d\d(?![\w.])/g;

/** Every number left after the rules above: measurements, counts, ids, ports of unknown form. */
const NUMBER: Rule = [/(?<![\w.])-?\d+(?:[.,]\d+)*(?!\w)/g, '<number>'];

/**
 * The message used for grouping (docs/api.md, "Error group": `cleanedErrorMessage`): the
 * raw message with what varies between runs of one problem replaced by placeholders,
 * in this order: URLs `<url>`; quoted values `<value>`; UUIDs `<uuid>`; HTTP dates
 * and ISO date-times `<timestamp>`, dates `<date>`, clock times `<time>`; IPv6 and
 * IPv4 addresses `<ip>`; ports after an address or dotted host `:<port>`; `0x…` and
 * long hex strings `<hex>`; other long generated ids `<id>`; durations (`812 ms`,
 * `30s`) `<duration>`; sizes (`512 bytes`, `4 KiB`) `<size>`; every other number
 * `<number>` except HTTP status codes (see STATUS_AFTER_WORD). Words, error codes
 * (ECONNREFUSED, NXDOMAIN), host names and numbers inside identifiers (`http2`,
 * `error:0A000086`) are kept. Whitespace runs become one space. Input is cut to
 * MAX_ERROR_MESSAGE_CHARS first. Idempotent.
 */
export function cleanErrorMessage(raw: string): string {
  let text = raw.slice(0, MAX_ERROR_MESSAGE_CHARS).replace(/\s+/g, ' ').trim();
  for (const [pattern, placeholder] of VALUE_RULES) text = text.replace(pattern, placeholder);
  text = text.replace(HTTP_VERSION, shield);
  text = text.replace(
    STATUS_AFTER_WORD,
    (_m, word: string, sep: string, code: string) => `${word}${sep}${shield(code)}`,
  );
  text = text
    .split('; ')
    .map((part) => (/\bSTATUS_CODE\b/.test(part) ? part.replace(STATUS_IN_PART, shield) : part))
    .join('; ');
  text = text.replace(NUMBER[0], NUMBER[1]);
  return unshield(text).replace(/\s+/g, ' ').trim();
}

/** `errorHash` of a cleaned message: SHA-256, lower-case hex (64 characters). */
export function errorHash(cleaned: string): string {
  return createHash('sha256').update(cleaned).digest('hex');
}

/**
 * The message a failing result is grouped by: its `errorMessage`, else its first
 * failed assertion written as the executors write it
 * (`assertion SOURCE property COMPARISON target failed: error`), else null.
 */
export function errorMessageOf(result: CheckResult): string | null {
  const message = result.errorMessage?.trim();
  if (message) return message;
  const failed = result.assertions.find((a) => a.error !== null && a.error.trim() !== '');
  if (!failed) return null;
  const described = [failed.source, failed.property, failed.comparison, failed.target]
    .filter((p) => p !== '')
    .join(' ');
  return `assertion ${described} failed: ${failed.error}`;
}

/** One failure to count in an error group. `seenAtMs`: epoch ms of the failing run. */
export type ErrorEvent = { accountId: string; checkId: string; rawMessage: string; seenAtMs: number };

/**
 * Adds one failure to its group (check id + hash of the cleaned message), creating
 * the group on first sight. An existing group gets `lastSeen` = the later of both
 * times, `firstSeen` the earlier, and `rawErrorMessage` the message of the latest
 * run. Archive semantics: a group archived until the next event reopens
 * (`archivedUntilNextEvent` false); a group archived for ever stays archived but
 * still records `lastSeen` and the latest message, so unarchiving it shows the truth.
 * One upsert statement (ErrorGroupQueries.record), so concurrent results for one group cannot collide.
 */
export async function recordErrorEvent(db: Kysely<Database>, event: ErrorEvent): Promise<void> {
  const raw = event.rawMessage.slice(0, MAX_ERROR_MESSAGE_CHARS);
  const cleaned = cleanErrorMessage(raw);
  await new ErrorGroupQueries(db).record({
    accountId: event.accountId,
    checkId: event.checkId,
    rawMessage: raw,
    cleanedMessage: cleaned,
    errorHash: errorHash(cleaned),
    seenAtMs: event.seenAtMs,
  });
}

/**
 * The results error groups are built from: FINAL results that failed (`hasFailures`) or errored
 * (`hasErrors`). Attempts, passes and degradations are ignored, and get no outbox row for this hook.
 */
export function errorGroupsTake(result: CheckResult): boolean {
  return result.resultType === 'FINAL' && (result.hasFailures || result.hasErrors);
}

/**
 * The result hook that builds error groups (docs/architecture.md: results → error groups).
 * For a result errorGroupsTake takes that has a message (see errorMessageOf), records one
 * event at the run's `startedAt` (the store's time when that does not parse).
 * Register with `resultHooks: [{ name, run: errorGroupsHook(db), takes: errorGroupsTake }, …]`.
 */
export function errorGroupsHook(db: Kysely<Database>): ResultHook {
  return async ({ accountId, checkId, result }: StoredResult) => {
    // Rows written before the hook had a filter, or by a service registering it without one.
    if (!errorGroupsTake(result)) return;
    const rawMessage = errorMessageOf(result);
    if (rawMessage === null) return;
    const startedAt = Date.parse(result.startedAt);
    await recordErrorEvent(db, {
      accountId,
      checkId,
      rawMessage,
      seenAtMs: Number.isNaN(startedAt) ? Date.now() : startedAt,
    });
  };
}

/** The API view of an error group (docs/api.md, "Error group"; see ErrorGroupSchema). */
export function presentErrorGroup(row: ErrorGroupRow): ErrorGroup {
  return {
    id: row.id,
    checkId: row.check_id,
    errorHash: row.error_hash,
    rawErrorMessage: row.raw_error_message,
    cleanedErrorMessage: row.cleaned_error_message,
    firstSeen: iso(row.first_seen)!,
    lastSeen: iso(row.last_seen)!,
    archivedUntilNextEvent: row.archived_until_next_event === 1,
    archivedForEver: row.archived_forever === 1,
    rootCauseAnalyses: [],
  };
}

/** Error groups as the API reads and archives them, always scoped to one account. */
export class ErrorGroups {
  readonly #rows: ErrorGroupQueries;
  readonly #checks: CheckQueries;
  constructor(db: Kysely<Database>) {
    this.#rows = new ErrorGroupQueries(db);
    this.#checks = new CheckQueries(db);
  }

  /** @throws HttpError 404 when the group is not in the account. */
  async get(accountId: string, id: string): Promise<ErrorGroupRow> {
    const row = await this.#rows.get(accountId, id);
    if (!row) throw notFound('error group', id);
    return row;
  }

  /**
   * One page of a check's groups, most recently seen first.
   * @throws HttpError 404 when the check is not in the account (even if groups remain from a deleted check).
   */
  async listForCheck(
    accountId: string,
    checkId: string,
    page: { limit: number; offset: number },
  ): Promise<ErrorGroupRow[]> {
    if (!(await this.#checks.exists(accountId, checkId))) throw notFound('check', checkId);
    return this.#rows.listForCheck(accountId, checkId, page);
  }

  /** One page of the account's groups (of checks it still has), most recently seen first. */
  async list(accountId: string, page: { limit: number; offset: number }): Promise<ErrorGroupRow[]> {
    return this.#rows.list(accountId, page);
  }

  /**
   * Sets or clears the archive flags (docs/api.md, "States and transitions"): `archiveForEver`
   * sets `archivedForEver`, `archivedUntilNextEvent` sets that flag; `false` clears.
   * The flags are independent: a group is archived while either is true.
   * @throws HttpError 400 naming `archivedUntilNextEvent` when the body has neither
   *   field; 404 when the group is not in the account.
   */
  async patch(accountId: string, id: string, body: PatchErrorGroup, nowMs: number): Promise<ErrorGroupRow> {
    if (body.archiveForEver === undefined && body.archivedUntilNextEvent === undefined) {
      throw badField('archivedUntilNextEvent', 'or archiveForEver is required', 'required');
    }
    const before = await this.get(accountId, id);
    await this.#rows.setArchived(
      accountId,
      id,
      {
        archived_forever:
          body.archiveForEver === undefined ? before.archived_forever : body.archiveForEver ? 1 : 0,
        archived_until_next_event:
          body.archivedUntilNextEvent === undefined
            ? before.archived_until_next_event
            : body.archivedUntilNextEvent
              ? 1
              : 0,
      },
      nowMs,
    );
    // Read back: a result hook may have moved lastSeen meanwhile.
    return this.get(accountId, id);
  }
}
