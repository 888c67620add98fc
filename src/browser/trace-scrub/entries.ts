import { isUtf8 } from 'node:buffer';
import { SECRET_HEADERS } from '../../common/credential-headers.js';
import { REDACTED } from '../../common/redaction.js';
import { occurrences, type ScrubContext } from './scrub-context.js';
import { kindOfBinary, type ZipEntry } from './zip.js';

/**
 * Scrubbing the entries of a trace: event logs (NDJSON, JSON) JSON-aware, credential values by
 * name, other text as text; binary entries left as they are (the final scan judges them).
 */

/** Names (lower case) whose string values are credentials in a trace: the headers, as names of `{name, value}` pairs or keys. */
const CREDENTIAL_KEYS: ReadonlySet<string> = SECRET_HEADERS;
/** A line that may carry a credential header, cookie or basic-auth password (a cheap test before parsing). */
const CREDENTIAL_HINT = new RegExp(
  [...SECRET_HEADERS, 'cookies', 'httpcredentials'].map((n) => n.replace(/[-]/g, '\\-')).join('|'),
  'i',
);
/** Deepest JSON nesting walked (DOM snapshots nest two levels per element). */
const MAX_JSON_DEPTH = 4_000;

/** True when the name of a header (or a header record's key) is a credential header. */
const isCredentialName = (name: string) => CREDENTIAL_KEYS.has(name.trim().toLowerCase());

/**
 * A copy of a parsed trace record with its credential values replaced by `*****` and passed to
 * `onCredential`: the values of `{name, value}` pairs of credential headers, header records'
 * credential keys, `cookies[]` values and `httpCredentials.password`. Every other string (keys
 * too) goes through `text`, or is kept when `text` is null (collecting only).
 * @throws Error when the record nests deeper than MAX_JSON_DEPTH.
 */
function walkJson(
  value: unknown,
  depth: number,
  onCredential: (value: string) => void,
  text: ((text: string) => string) | null,
): unknown {
  if (typeof value === 'string') return text === null ? value : text(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_JSON_DEPTH) throw new Error(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(value)) return value.map((v) => walkJson(v, depth + 1, onCredential, text));
  const record = value as Record<string, unknown>;
  const pairName = typeof record.name === 'string' ? record.name : null;
  const credentialPair = pairName !== null && isCredentialName(pairName) && typeof record.value === 'string';
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(record)) {
    const newKey = text === null ? key : text(key);
    if (key === 'value' && credentialPair) {
      onCredential(v as string);
      out[newKey] = REDACTED;
    } else if (isCredentialName(key) && (typeof v === 'string' || Array.isArray(v))) {
      for (const item of Array.isArray(v) ? v : [v]) if (typeof item === 'string') onCredential(item);
      out[newKey] = REDACTED;
    } else if (key === 'cookies' && Array.isArray(v)) {
      out[newKey] = v.map((cookie) => {
        if (
          cookie === null ||
          typeof cookie !== 'object' ||
          typeof (cookie as { value?: unknown }).value !== 'string'
        ) {
          return walkJson(cookie, depth + 2, onCredential, text);
        }
        const { value: cookieValue, ...restOfCookie } = cookie as Record<string, unknown>;
        onCredential(cookieValue as string);
        const walked = walkJson(restOfCookie, depth + 2, onCredential, text) as Record<string, unknown>;
        return { ...walked, value: REDACTED };
      });
    } else if (key === 'httpCredentials' && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const { password, ...restOfCredentials } = v as Record<string, unknown>;
      const walked = walkJson(restOfCredentials, depth + 1, onCredential, text) as Record<string, unknown>;
      if (typeof password === 'string') onCredential(password);
      out[newKey] = password === undefined ? walked : { ...walked, password: REDACTED };
    } else {
      out[newKey] = walkJson(v, depth + 1, onCredential, text);
    }
  }
  return out;
}

/** Kinds of trace entries by name: NDJSON event logs, one JSON document, or anything else. */
function entryFormat(name: string): 'NDJSON' | 'JSON' | 'OTHER' {
  if (name.endsWith('.trace') || name.endsWith('.network')) return 'NDJSON';
  if (name.endsWith('.stacks')) return 'JSON';
  return 'OTHER';
}

/** First pass: the credential values of one NDJSON or JSON entry, recorded in `ctx`. */
export function collectCredentials(entry: ZipEntry, ctx: ScrubContext): void {
  const format = entryFormat(entry.name);
  if (format === 'OTHER') return;
  const onCredential = (value: string) => ctx.credential(value);
  const lines = format === 'NDJSON' ? entry.data.toString('utf8').split('\n') : [entry.data.toString('utf8')];
  for (const line of lines) {
    if (!CREDENTIAL_HINT.test(line)) continue;
    try {
      walkJson(JSON.parse(line), 0, onCredential, null);
    } catch {
      // Unparseable: dropped in the second pass.
    }
  }
}

/**
 * One NDJSON line (or one JSON document) scrubbed JSON-aware, so the viewer still reads it: a
 * line that may carry credentials is parsed, its credential values replaced by name and every
 * string (keys too) scrubbed; any other line is scrubbed as text in one pass, each match inside
 * a string, and kept when it still parses (else parsed and walked too). A line that holds
 * nothing to scrub is kept byte for byte; one that does not parse and needs scrubbing is
 * dropped (null): it cannot be scrubbed knowing its structure.
 */
function scrubJsonLine(line: string, ctx: ScrubContext): string | null {
  if (line.trim() === '') return line;
  // A line without credential names is scrubbed as text, in one pass: its JSON escapes decode
  // once in Scrubber.text, as parsing decodes them, and each match is replaced whole by
  // `*****`, inside a string. Kept when it still parses. Not so a line with an escaped
  // backslash: a string holding an escape of its own is decoded once more when scrubbed parsed.
  if (!CREDENTIAL_HINT.test(line) && !line.includes('\\\\')) {
    const scrubbed = ctx.scrubber.text(line);
    if (scrubbed === line) return line;
    if (parses(scrubbed)) {
      ctx.counts.secretValues += Math.max(1, occurrences(scrubbed, REDACTED) - occurrences(line, REDACTED));
      return scrubbed;
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return null;
  }
  try {
    const walked = walkJson(
      parsed,
      0,
      () => {
        ctx.counts.credentialHeaders++;
      },
      (text) => ctx.text(text),
    );
    return JSON.stringify(walked);
  } catch {
    return null;
  }
}

/** True when `text` is one JSON value. */
function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Entry content that is text (valid UTF-8 without NUL bytes), not an image or other binary. */
export function isText(data: Buffer): boolean {
  return kindOfBinary(data) === null && isUtf8(data) && !data.includes(0);
}

/**
 * Scrubs one trace entry in place of its data: event logs JSON-aware, other text as text.
 * Binary entries (images, fonts) stay as they are: a secret's bytes in one cannot be removed
 * without breaking the file, and the final scan fails the artifacts closed when it finds one.
 */
export function scrubEntry(entry: ZipEntry, ctx: ScrubContext): void {
  const format = entryFormat(entry.name);
  if (format !== 'OTHER' && isUtf8(entry.data)) {
    const text = entry.data.toString('utf8');
    if (format === 'NDJSON') {
      const out: string[] = [];
      for (const line of text.split('\n')) {
        const scrubbed = scrubJsonLine(line, ctx);
        if (scrubbed !== null) out.push(scrubbed);
      }
      entry.data = Buffer.from(out.join('\n'));
      return;
    }
    entry.data = Buffer.from(scrubJsonLine(text, ctx) ?? '');
    return;
  }
  if (isText(entry.data)) {
    const text = entry.data.toString('utf8');
    const scrubbed = ctx.text(text);
    if (scrubbed !== text) entry.data = Buffer.from(scrubbed);
  }
}
