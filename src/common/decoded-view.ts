/**
 * The decoded, case-folded view of a text in which the scrubber (scrub.ts) searches for secrets
 * however they were escaped: percent-escapes, JSON and JavaScript escapes and HTML character
 * references decoded once, with a map from view offsets back to the raw text.
 */

/** HTML named character references decoded (case-insensitively): the five XML ones. */
const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
/** The character each JSON/JavaScript single-character escape (`\n`, `\"`) stands for. */
const JSON_ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/** Escapes decoded by {@link decodedView}; linear (no nested quantifiers). */
const ESCAPE =
  /%[0-7][0-9a-fA-F]|%[c-fC-F][0-9a-fA-F](?:%[89abAB][0-9a-fA-F]){1,3}|\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|\\["\\/bfnrt]|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,4});/g;
/** Matches a text that may hold an escape {@link decodedView} decodes (it has a `%`, `\` or `&`). */
export const MAYBE_ESCAPED = /[%\\&]/;

/**
 * A decoded view of a text: `text` is the view, and `rawRange(from, to)` the range of the
 * original text that view characters [from, to) came from.
 */
export type View = { text: string; rawRange: (from: number, to: number) => [number, number] };

/** Decodes one `%XX…` run (up to 4 escapes) into [decoded, raw length] pieces, one per character. */
function decodePercentRun(run: string): Array<[string, number]> {
  const bytes = Buffer.from(run.replace(/%/g, ''), 'hex');
  const pieces: Array<[string, number]> = [];
  let k = 0;
  while (k < bytes.length) {
    const first = bytes[k] as number;
    const count = first < 0x80 ? 1 : first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 0;
    const decoded =
      count === 0 || k + count > bytes.length ? '' : bytes.subarray(k, k + count).toString('utf8');
    if (decoded === '' || decoded.includes('\uFFFD')) {
      pieces.push([run.slice(k * 3, k * 3 + 3), 3]);
      k++;
    } else {
      pieces.push([decoded, count * 3]);
      k += count;
    }
  }
  return pieces;
}

/** The text a `\u…`, `\x…`, `\"`-style or `&…;` escape stands for, or null when it is none. */
function decodeEscape(token: string): string | null {
  if (token[0] === '\\') {
    const kind = token[1] as string;
    if (kind === 'u' || kind === 'x') return String.fromCharCode(Number.parseInt(token.slice(2), 16));
    return JSON_ESCAPES[kind] ?? null;
  }
  const name = token.slice(1, -1);
  if (name[0] !== '#') return NAMED_ENTITIES[name.toLowerCase()] ?? null;
  const hex = name[1] === 'x' || name[1] === 'X';
  const code = Number.parseInt(name.slice(hex ? 2 : 1), hex ? 16 : 10);
  return code <= 0x10ffff ? String.fromCodePoint(code) : null;
}

/**
 * The decoded view of `text`: percent-escapes (`%7e`, `%7E`, UTF-8 sequences), JSON and
 * JavaScript escapes (`\u003C`, `\"`, `\x41`) and HTML character references (`&#126;`,
 * `&#x7e;`, `&lt;`) decoded once; anything else kept. Linear: one native regex scan, then
 * work per escape found; a text without `%`, `\` or `&` is its own view.
 */
export function decodedView(text: string): View {
  if (!MAYBE_ESCAPED.test(text)) return { text, rawRange: (from, to) => [from, to] };
  // Per decoded escape: its raw start and end, and its view start and end (for the map back).
  const tokens: number[] = [];
  let shift = 0;
  const view = text.replace(ESCAPE, (token: string, offset: number) => {
    if (token[0] === '%') {
      const first = Number.parseInt(token.slice(1, 3), 16);
      if (token.length === 3 && first < 0x80) {
        const at = offset - shift;
        tokens.push(offset, offset + 3, at, at + 1);
        shift += 2;
        return String.fromCharCode(first);
      }
      let raw = offset;
      const pieces: string[] = [];
      for (const [piece, rawLength] of decodePercentRun(token)) {
        if (piece.length !== rawLength) {
          const at = raw - shift;
          tokens.push(raw, raw + rawLength, at, at + piece.length);
          shift += rawLength - piece.length;
        }
        pieces.push(piece);
        raw += rawLength;
      }
      return pieces.join('');
    }
    const decoded = decodeEscape(token);
    if (decoded === null) return token;
    const at = offset - shift;
    tokens.push(offset, offset + token.length, at, at + decoded.length);
    shift += token.length - decoded.length;
    return decoded;
  });
  // The raw offset of view offset `index` (start or end side of a decoded escape).
  const rawAt = (index: number, end: boolean) => {
    let low = 0;
    let high = tokens.length / 4 - 1;
    let found = -1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      if ((tokens[mid * 4 + 2] as number) <= index) {
        found = mid;
        low = mid + 1;
      } else high = mid - 1;
    }
    if (found === -1) return end ? index + 1 : index;
    const rawStart = tokens[found * 4] as number;
    const rawEnd = tokens[found * 4 + 1] as number;
    const viewEnd = tokens[found * 4 + 3] as number;
    if (index < viewEnd) return end ? rawEnd : rawStart;
    return rawEnd + (index - viewEnd) + (end ? 1 : 0);
  };
  return { text: view, rawRange: (from, to) => [rawAt(from, false), rawAt(to - 1, true)] };
}

/**
 * The case- and space-folded copy of a view's text (same length, so offsets still map): letters
 * lower-cased where that keeps the length, `+` as a space (form encoding).
 */
export function folded(text: string): string {
  const lower = text.toLowerCase();
  const same = lower.length === text.length ? lower : foldByUnit(text);
  return same.includes('+') ? same.replaceAll('+', ' ') : same;
}

/** {@link folded}'s lower-casing one character at a time, for a text whose lower case changes length. */
function foldByUnit(text: string): string {
  const parts: string[] = [];
  for (const c of text) {
    const lower = c.toLowerCase();
    parts.push(lower.length === c.length ? lower : c);
  }
  return parts.join('');
}

/** The needle a secret is searched for in the folded view: the secret decoded and folded as text is. */
export function foldedNeedle(value: string): string {
  return folded(decodedView(value).text);
}

/** Every start of `needle` in `haystack` (non-overlapping), as [start, end) pairs pushed on `out`. */
export function findAll(haystack: string, needle: string, out: number[]): void {
  let at = haystack.indexOf(needle);
  while (at !== -1) {
    out.push(at, at + needle.length);
    at = haystack.indexOf(needle, at + needle.length);
  }
}
