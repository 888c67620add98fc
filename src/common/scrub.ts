import { SECRET_HEADERS } from './credential-headers.js';
import { decodedView, findAll, folded, foldedNeedle, MAYBE_ESCAPED } from './decoded-view.js';
import { REDACTED } from './redaction.js';

/**
 * Longest secret value scrubbed, characters: 128 KB (docs/checks.md, SERVICE_SECRET_*).
 * A longer value puts the scrubber in its overflow state (see {@link Scrubber.overflowed}).
 */
export const MAX_SECRET_LENGTH = 131_072;

/** Secrets shorter than this are not scrubbed: masking `1` or `a` everywhere would destroy every output. */
export const MIN_SECRET_LENGTH = 3;

/**
 * Most distinct secret values one scrubber searches for. Each costs one linear pass per
 * scrubbed text, so the bound keeps scrubbing linear in the text's size; one value more puts
 * the scrubber in its overflow state (see {@link Scrubber.overflowed}).
 */
export const MAX_SECRETS = 256;

/** Shortest base64 fragment of a secret searched for (at the two unaligned offsets), characters. */
const MIN_BASE64_FORM_LENGTH = 8;

/**
 * The forms of a secret that {@link Scrubber.bytes} searches for in binary data: the value,
 * its `encodeURIComponent` form with `!'()*` percent-encoded too (so `!` appears as `%21`),
 * its `application/x-www-form-urlencoded` form (spaces as `+`), its JSON-escaped form and its
 * base64 forms. Text is searched more broadly (see {@link Scrubber.text}).
 */
export function secretForms(value: string): string[] {
  const forms = new Set<string>([value]);
  const strict = encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  forms.add(strict);
  // Some clients encode `~` too (RFC 3986 leaves it unreserved; encodeURIComponent does not).
  forms.add(strict.replace(/~/g, '%7E'));
  forms.add(encodeURIComponent(value));
  forms.add(strict.replace(/%20/g, '+'));
  forms.add(JSON.stringify(value).slice(1, -1));
  for (const form of base64Forms(value)) forms.add(form);
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/**
 * The base64 and base64url text of `value`'s UTF-8 bytes wherever they sit in a longer
 * encoded stream: at each of the 3 byte alignments, the characters that depend on the
 * secret's bytes only (for alignment 0 also the whole padded encoding).
 */
export function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value);
  const forms = new Set<string>();
  const whole = bytes.toString('base64');
  if (whole.length >= 4) forms.add(whole);
  for (const shift of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    // Characters mixing pad and secret bits at the start; a partial last group at the end.
    const skip = shift === 0 ? 0 : shift === 1 ? 2 : 3;
    const fullGroups = Math.floor((shift + bytes.length) / 3);
    const middle = encoded.slice(skip, fullGroups * 4);
    if (middle.length >= MIN_BASE64_FORM_LENGTH || (shift === 0 && middle.length >= 4)) forms.add(middle);
  }
  for (const form of [...forms]) forms.add(form.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''));
  return [...forms].filter((f) => f.length >= 4);
}

/**
 * What text() searches for: `exact` values in the raw text, `folded` (decoded, case-folded)
 * values in the folded decoded view, `foldedRaw` values (those holding something that looks
 * like an escape, `\b`) case-folded in the folded raw text, `base64` forms in the decoded view.
 */
type Needles = { exact: string[]; folded: string[]; foldedRaw: string[]; base64: string[]; longest: number };

/**
 * Replaces secret values in everything that leaves the agent. Build one per run with the
 * values of variables marked `secret`, `SERVICE_SECRET_*` values scripts set, basic-auth
 * passwords and credential header values; `add` more as they become known.
 *
 * A secret is found in text however it was passed on: as written, upper- or lower-cased,
 * percent-encoded (any characters, upper or lower hex, `+` for a space), JSON/JavaScript
 * escaped (`\u003c`), as HTML character references, and in base64 or base64url at any byte
 * alignment. The work is linear in the text: one decoding pass, then one `indexOf` scan per
 * form, and at most {@link MAX_SECRETS} values.
 *
 * It never fails open: a value it cannot search for — one more than {@link MAX_SECRETS}, or one
 * longer than {@link MAX_SECRET_LENGTH} — puts it in its overflow state for good
 * ({@link overflowed}), where every text, cut, tail and string of a value becomes `*****` and
 * every byte `*`. Callers replace a run's output then (see releaseOutcome in
 * src/checks/outcome.ts).
 */
export class Scrubber {
  readonly #values = new Set<string>();
  #overflow: string | null = null;
  readonly #forms = new Set<string>();
  #needles: Needles | null = null;
  #bytePatterns: Buffer[] | null = null;

  constructor(secrets: Iterable<string> = []) {
    for (const s of secrets) this.add(s);
  }

  /**
   * Adds a secret. Values shorter than MIN_SECRET_LENGTH are ignored; one longer than
   * MAX_SECRET_LENGTH, or a new value past MAX_SECRETS, puts the scrubber in its overflow state.
   */
  add(value: string): this {
    if (this.#overflow !== null || typeof value !== 'string' || value.length < MIN_SECRET_LENGTH) return this;
    // Cutting a long value would leave its tail in clear; searching for a piece of it, forms
    // split at the cut (base64, escapes) in clear: such a value is refused, as one too many is.
    if (value.length > MAX_SECRET_LENGTH) {
      this.#overflow = `a secret value longer than ${MAX_SECRET_LENGTH} characters`;
      return this;
    }
    if (this.#values.has(value)) return this;
    if (this.#values.size >= MAX_SECRETS) {
      this.#overflow = `more than ${MAX_SECRETS} secret values`;
      return this;
    }
    this.#values.add(value);
    for (const form of secretForms(value)) this.#forms.add(form);
    this.#needles = null;
    this.#bytePatterns = null;
    return this;
  }

  /**
   * True once a secret was refused (one more than MAX_SECRETS, or one longer than
   * MAX_SECRET_LENGTH): nothing this scrubber returns holds anything of its input any more.
   */
  get overflowed(): boolean {
    return this.#overflow !== null;
  }

  /** Why the scrubber overflowed (`more than 256 secret values`), or null. */
  get overflowReason(): string | null {
    return this.#overflow;
  }

  /** Number of distinct forms searched for in binary data. */
  get size(): number {
    return this.#forms.size;
  }

  /** The secret values added (to rebuild an equal scrubber elsewhere, e.g. in a worker). */
  secrets(): string[] {
    return [...this.#values];
  }

  #getNeedles(): Needles {
    if (this.#needles === null) {
      const exact = new Set<string>();
      const fold = new Set<string>();
      const foldedRaw = new Set<string>();
      const base64 = new Set<string>();
      for (const value of this.#values) {
        exact.add(value);
        if (MAYBE_ESCAPED.test(value)) foldedRaw.add(folded(value));
        const needle = foldedNeedle(value);
        if (needle.length >= MIN_SECRET_LENGTH) fold.add(needle);
        for (const form of base64Forms(value)) base64.add(form);
      }
      const all = [...exact, ...fold, ...base64];
      this.#needles = {
        exact: [...exact],
        folded: [...fold],
        foldedRaw: [...foldedRaw],
        base64: [...base64],
        // A percent-encoded 4-byte character is 12 characters for 2 code units.
        longest: Math.max(0, ...all.map((f) => f.length)) * 6,
      };
    }
    return this.#needles;
  }

  /** The text with every secret, in any of the forms above, replaced by `*****`. */
  text(text: string): string {
    if (this.#overflow !== null) return text.length === 0 ? text : REDACTED;
    if (this.#values.size === 0 || text.length === 0) return text;
    const needles = this.#getNeedles();
    const ranges: number[] = [];
    for (const needle of needles.exact) findAll(text, needle, ranges);
    if (needles.foldedRaw.length > 0) {
      const foldedText = folded(text);
      for (const needle of needles.foldedRaw) findAll(foldedText, needle, ranges);
    }
    const view = decodedView(text);
    const fold = folded(view.text);
    const viewRanges: number[] = [];
    for (const needle of needles.folded) findAll(fold, needle, viewRanges);
    // A secret that looks escaped (`\r`, `%00`) and was then encoded decodes to itself as written.
    for (const needle of needles.foldedRaw) findAll(fold, needle, viewRanges);
    for (const needle of needles.base64) findAll(view.text, needle, viewRanges);
    for (let k = 0; k < viewRanges.length; k += 2) {
      ranges.push(...view.rawRange(viewRanges[k] as number, viewRanges[k + 1] as number));
    }
    if (ranges.length === 0) return text;
    return replaceRanges(text, ranges);
  }

  /**
   * `text` scrubbed and then cut to at most `maxChars` characters (plus `…` when cut), with
   * no recognisable start of a secret left at the cut: scrubbing before cutting finds a
   * secret the cut would have split, and a tail that still begins a secret's form is masked.
   * Reads only the first `maxChars` plus the longest form's length, so a huge text costs little.
   */
  cut(text: string, maxChars: number): string {
    if (this.#overflow !== null) return text.length === 0 ? text : REDACTED;
    const longest = this.#values.size === 0 ? 0 : this.#getNeedles().longest;
    const window = text.length > maxChars + longest ? text.slice(0, maxChars + longest + 1) : text;
    const scrubbed = this.text(window);
    if (scrubbed.length <= maxChars && window.length === text.length) return scrubbed;
    return `${this.maskTail(scrubbed.slice(0, maxChars))}…`;
  }

  /** `text` with its end masked when it is the start (3 characters or more) of a secret's form, as a cut leaves it. */
  maskTail(text: string): string {
    if (this.#overflow !== null) return text.length === 0 ? text : REDACTED;
    if (this.#values.size === 0 || text.length === 0) return text;
    const needles = this.#getNeedles();
    const tailLength = Math.min(text.length, needles.longest);
    const tail = text.slice(text.length - tailLength);
    const view = decodedView(tail);
    const fold = folded(view.text);
    const plain = view.text;
    const offset = text.length - tailLength;
    let cutAt = text.length;
    // The longest suffix of `haystack` that is a prefix of `needle` (KMP, linear): its start, or -1.
    const overlap = (haystack: string, needle: string): number => {
      const failure = new Int32Array(needle.length);
      for (let k = 1, j = 0; k < needle.length; k++) {
        while (j > 0 && needle[k] !== needle[j]) j = failure[j - 1] as number;
        if (needle[k] === needle[j]) j++;
        failure[k] = j;
      }
      let j = 0;
      for (let k = Math.max(0, haystack.length - needle.length); k < haystack.length; k++) {
        while (j > 0 && (j === needle.length || haystack[k] !== needle[j])) j = failure[j - 1] as number;
        if (haystack[k] === needle[j]) j++;
      }
      return j >= MIN_SECRET_LENGTH ? haystack.length - j : -1;
    };
    for (const [haystack, list] of [
      [fold, needles.folded],
      [plain, needles.base64],
    ] as const) {
      for (const needle of list) {
        const start = overlap(haystack, needle);
        if (start !== -1) cutAt = Math.min(cutAt, offset + view.rawRange(start, start + 1)[0]);
      }
    }
    for (const needle of needles.exact) {
      const start = overlap(tail, needle);
      if (start !== -1) cutAt = Math.min(cutAt, offset + start);
    }
    return cutAt === text.length ? text : `${text.slice(0, cutAt)}${REDACTED}`;
  }

  /**
   * Binary data with every secret form's bytes overwritten by `*` of the same length, so
   * length-prefixed formats (pcap records, TCP payloads) stay valid; every byte once the scrubber
   * overflowed. Returns a copy.
   */
  bytes(data: Buffer): Buffer {
    if (this.#overflow !== null) return Buffer.alloc(data.length, 0x2a);
    const out = Buffer.from(data);
    if (this.#forms.size === 0) return out;
    this.#bytePatterns ??= [...this.#forms].map((s) => Buffer.from(s)).sort((a, b) => b.length - a.length);
    for (const pattern of this.#bytePatterns) {
      let at = out.indexOf(pattern);
      while (at !== -1) {
        out.fill(0x2a, at, at + pattern.length);
        at = out.indexOf(pattern, at + pattern.length);
      }
    }
    return out;
  }

  /**
   * A deep copy of a JSON-like value with every string scrubbed (keys too), and the values of
   * credential headers (`SECRET_HEADERS`) in `{ key, value }` lists or header records replaced.
   * Nesting deeper than 64 levels is replaced by `*****` (no recursion without bound). Once the
   * scrubber overflowed, every string (keys too) is `*****`.
   */
  value<T>(value: T): T {
    return this.#walk(value, 0) as T;
  }

  #walk(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.text(value);
    if (depth > 64 && value !== null && typeof value === 'object') return REDACTED;
    if (Array.isArray(value)) return value.map((v) => this.#walk(v, depth + 1));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      const record = value as Record<string, unknown>;
      const pairKey = typeof record.key === 'string' ? record.key.toLowerCase() : null;
      for (const [k, v] of Object.entries(record)) {
        const key = this.#values.size === 0 && this.#overflow === null ? k : this.text(k);
        if (SECRET_HEADERS.has(k.toLowerCase()) && (typeof v === 'string' || Array.isArray(v))) {
          out[key] = REDACTED;
        } else if (k === 'value' && pairKey !== null && SECRET_HEADERS.has(pairKey)) {
          out[key] = REDACTED;
        } else {
          out[key] = this.#walk(v, depth + 1);
        }
      }
      return out;
    }
    return value;
  }
}

/** `text` with the union of the [start, end) `ranges` (flat pairs) replaced by `*****` each. */
function replaceRanges(text: string, ranges: number[]): string {
  const pairs: Array<[number, number]> = [];
  for (let k = 0; k < ranges.length; k += 2) pairs.push([ranges[k] as number, ranges[k + 1] as number]);
  pairs.sort((a, b) => a[0] - b[0]);
  const parts: string[] = [];
  let at = 0;
  let open: [number, number] | null = null;
  for (const pair of pairs) {
    if (open !== null && pair[0] <= open[1]) {
      open[1] = Math.max(open[1], pair[1]);
      continue;
    }
    if (open !== null) {
      parts.push(text.slice(at, open[0]), REDACTED);
      at = open[1];
    }
    open = [pair[0], pair[1]];
  }
  if (open !== null) {
    parts.push(text.slice(at, open[0]), REDACTED);
    at = open[1];
  }
  parts.push(text.slice(at));
  return parts.join('');
}

/** Most tokens one credential header value is split into for scrubbing (besides the whole value). */
export const MAX_CREDENTIAL_TOKENS = 16;
/** Shortest token of a credential header value scrubbed on its own, characters. */
export const MIN_CREDENTIAL_TOKEN_LENGTH = 6;

/**
 * What to scrub of a credential header value (Authorization, Cookie, Set-Cookie, x-api-key, …):
 * the whole value, and at most {@link MAX_CREDENTIAL_TOKENS} of its parts — the token after a
 * scheme (`Bearer x`) and each cookie's value (`a=1; b=2`, Set-Cookie's `name=value; Path=/`),
 * longest first, each at least {@link MIN_CREDENTIAL_TOKEN_LENGTH} characters. One linear scan:
 * a value of 100,000 separators costs no more than reading it.
 */
export function credentialTokens(value: string): string[] {
  const tokens = new Set<string>();
  const space = value.indexOf(' ');
  if (space > 0) tokens.add(value.slice(space + 1).trim());
  const parts = /[^;,]+/g;
  const candidates: string[] = [];
  for (let match = parts.exec(value); match !== null; match = parts.exec(value)) {
    const part = match[0];
    const eq = part.indexOf('=');
    const token = (eq >= 0 ? part.slice(eq + 1) : part).trim();
    if (token.length >= MIN_CREDENTIAL_TOKEN_LENGTH && token !== value) candidates.push(token);
    if (candidates.length > 4 * MAX_CREDENTIAL_TOKENS) {
      candidates.sort((a, b) => b.length - a.length);
      candidates.length = MAX_CREDENTIAL_TOKENS;
    }
  }
  candidates.sort((a, b) => b.length - a.length);
  for (const token of candidates) {
    if (tokens.size >= MAX_CREDENTIAL_TOKENS) break;
    tokens.add(token);
  }
  return [value, ...[...tokens].filter((t) => t.length >= MIN_SECRET_LENGTH && t !== value)];
}
