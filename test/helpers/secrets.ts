import { expect } from 'vitest';

/** Decodes what a secret may have gone through: percent-escapes, `+`, JSON/JS escapes, HTML references. */
function decodeAll(text: string): string {
  return text
    .replace(/\\u([0-9a-fA-F]{4})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .replace(/\\x([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .replace(/\\(["\\/])/g, '$1')
    .replace(/&#x([0-9a-fA-F]+);/g, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)))
    .replace(/&#([0-9]+);/g, (_, dec: string) => String.fromCodePoint(Number.parseInt(dec, 10)))
    .replace(
      /&(amp|lt|gt|quot|apos);/g,
      (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[name] as string,
    )
    .replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run.replace(/%([0-7][0-9a-fA-F])/g, (_, hex: string) =>
          String.fromCharCode(Number.parseInt(hex, 16)),
        );
      }
    });
}

/** Case- and form-folded: lower case, `+` as space. */
const fold = (text: string) => text.toLowerCase().replaceAll('+', ' ');

/** The base64 and base64url fragments of `secret` at each of the 3 byte alignments (what depends on it only). */
export function base64Fragments(secret: string): string[] {
  const bytes = Buffer.from(secret);
  const out: string[] = [];
  for (const shift of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    const skip = [0, 2, 3][shift] as number;
    const middle = encoded.slice(skip, Math.floor((shift + bytes.length) / 3) * 4);
    if (middle.length >= 8) out.push(middle, middle.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return out;
}

/** Shortest start of a secret that counts as recognisable, characters. */
export const RECOGNISABLE_PREFIX = 13;

/**
 * Fails when `haystack` holds `secret` in any form it may leave the agent in: as written,
 * lower- or upper-cased, percent-encoded (any characters, either hex case), `+` for space,
 * JSON `\u` escaped, as HTML references, base64 or base64url at any of 3 alignments, or
 * its first {@link RECOGNISABLE_PREFIX} characters (a value cut before scrubbing).
 */
export function expectNoSecret(haystack: string, secret: string): void {
  const decoded = fold(decodeAll(haystack));
  const wanted = fold(secret);
  expect(decoded.includes(wanted), `secret ${JSON.stringify(secret)} found (decoded, case-folded)`).toBe(
    false,
  );
  if (wanted.length > RECOGNISABLE_PREFIX) {
    const prefix = wanted.slice(0, RECOGNISABLE_PREFIX);
    expect(
      decoded.includes(prefix),
      `a ${RECOGNISABLE_PREFIX}-character prefix of ${JSON.stringify(secret)} found`,
    ).toBe(false);
  }
  for (const fragment of base64Fragments(secret)) {
    expect(
      haystack.includes(fragment) || decodeAll(haystack).includes(fragment),
      `base64 form ${fragment} found`,
    ).toBe(false);
  }
}
