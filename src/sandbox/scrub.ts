import { SCRUBBED, SECRET_HEADERS } from '../net/http/headers.js';

/** What a scrubbed value is replaced by (design.md §3 "scrubbing"). */
export { SCRUBBED };

/** Header names whose values are always scrubbed, lower case (reference/check-types.md). */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = SECRET_HEADERS;

/** Longest secret value scrubbed, characters: 128 KB (reference/check-types.md, SERVICE_SECRET_*). */
export const MAX_SECRET_LENGTH = 131_072;

/** Secrets shorter than this are not scrubbed: masking `1` or `a` everywhere would destroy every output. */
export const MIN_SECRET_LENGTH = 3;

/**
 * The forms of a secret that are searched for: the value, its `encodeURIComponent` form with
 * `!'()*` percent-encoded too (so `!` appears as `%21`, reference/check-types.md), its
 * `application/x-www-form-urlencoded` form (spaces as `+`), its base64 form, and the Basic
 * credential forms are covered by the caller adding `user:password` as one secret.
 */
export function secretForms(value: string): string[] {
  const forms = new Set<string>([value]);
  const strict = encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  forms.add(strict);
  forms.add(encodeURIComponent(value));
  forms.add(strict.replace(/%20/g, '+'));
  forms.add(JSON.stringify(value).slice(1, -1));
  forms.add(Buffer.from(value).toString('base64'));
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/** Forms longer than this, characters, are searched for without the combined regex. */
const MAX_REGEX_FORM_LENGTH = 1024;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Replaces secret values in everything that leaves the agent. Build one per run with the
 * values of variables marked `secret`, `SERVICE_SECRET_*` values scripts set, basic-auth
 * passwords and credential header values; `add` more as they become known.
 */
export class Scrubber {
  readonly #secrets = new Set<string>();
  #matchers: { long: string[]; pattern: RegExp | null } | null = null;
  #bytePatterns: Buffer[] | null = null;

  constructor(secrets: Iterable<string> = []) {
    for (const s of secrets) this.add(s);
  }

  /** Adds a secret (and its encoded forms). Values shorter than MIN_SECRET_LENGTH are ignored; longer than MAX_SECRET_LENGTH are cut. */
  add(value: string): this {
    if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH) return this;
    for (const form of secretForms(value.slice(0, MAX_SECRET_LENGTH))) {
      if (!this.#secrets.has(form)) {
        this.#secrets.add(form);
        this.#matchers = null;
        this.#bytePatterns = null;
      }
    }
    return this;
  }

  /** Number of distinct forms searched for. */
  get size(): number {
    return this.#secrets.size;
  }

  /**
   * What text() searches with, derived from the forms once per change: the forms longer than
   * MAX_REGEX_FORM_LENGTH (one regex of up to 128 KB forms would be too large), longest first,
   * and one regex of the others, longest first so a secret containing another is replaced whole.
   */
  #textMatchers(): { long: string[]; pattern: RegExp | null } {
    if (this.#matchers === null) {
      const forms = [...this.#secrets].sort((a, b) => b.length - a.length);
      const short = forms.filter((f) => f.length <= MAX_REGEX_FORM_LENGTH);
      this.#matchers = {
        long: forms.filter((f) => f.length > MAX_REGEX_FORM_LENGTH),
        pattern: short.length === 0 ? null : new RegExp(short.map(escapeRegExp).join('|'), 'g'),
      };
    }
    return this.#matchers;
  }

  /** The text with every secret form replaced by `*****`. */
  text(text: string): string {
    if (this.#secrets.size === 0 || text.length === 0) return text;
    const { long, pattern } = this.#textMatchers();
    let out = text;
    for (const form of long) if (out.includes(form)) out = out.split(form).join(SCRUBBED);
    if (pattern === null) return out;
    pattern.lastIndex = 0;
    return out.replace(pattern, SCRUBBED);
  }

  /**
   * Binary data with every secret form's bytes overwritten by `*` of the same length, so
   * length-prefixed formats (pcap records, TCP payloads) stay valid. Returns a copy.
   */
  bytes(data: Buffer): Buffer {
    const out = Buffer.from(data);
    if (this.#secrets.size === 0) return out;
    this.#bytePatterns ??= [...this.#secrets].map((s) => Buffer.from(s)).sort((a, b) => b.length - a.length);
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
   * A deep copy of a JSON-like value with every string scrubbed (keys kept), and the values of
   * credential headers (`CREDENTIAL_HEADERS`) in `{ key, value }` lists or header records replaced.
   */
  value<T>(value: T): T {
    return this.#walk(value) as T;
  }

  #walk(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) return value.map((v) => this.#walk(v));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      const record = value as Record<string, unknown>;
      const pairKey = typeof record.key === 'string' ? record.key.toLowerCase() : null;
      for (const [k, v] of Object.entries(record)) {
        if (CREDENTIAL_HEADERS.has(k.toLowerCase()) && (typeof v === 'string' || Array.isArray(v))) {
          out[k] = SCRUBBED;
        } else if (k === 'value' && pairKey !== null && CREDENTIAL_HEADERS.has(pairKey)) {
          out[k] = SCRUBBED;
        } else {
          out[k] = this.#walk(v);
        }
      }
      return out;
    }
    return value;
  }
}
