/** A run of `%XX` escapes, any hex case. */
const ESCAPE_RUN = /(?:%[0-9a-fA-F]{2})+/g;

/**
 * `text` percent-decoded where it can be, never throwing (unlike `decodeURIComponent`, which throws
 * `URIError` on the first bad escape): the whole text decoded when it is valid percent-encoding;
 * otherwise each run of consecutive `%XX` escapes decoded on its own when the run is valid UTF-8, and
 * kept as written when it is not (`%zz`, a lone `%`, a cut sequence like `%E0%A4%A`, a lone surrogate).
 * `+` is not a space here (this is URI component decoding, not form decoding).
 *
 * @example lenientDecode('p%40ss') === 'p@ss'; lenientDecode('100%-%41') === '100%-A'
 */
export function lenientDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(ESCAPE_RUN, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
}

/**
 * The forms in which the credentials of `url` (its password and its user name, which is often a key too) may
 * show up in what a request leaves behind: each as written in the URL and percent-decoded
 * ({@link lenientDecode}), plus `user:password` as written; empty parts left out. What a scrubber must mask for
 * a URL with credentials: the one rule for checks' request URLs, alert webhooks and the SMTP provider.
 */
export function urlCredentialForms(url: URL): string[] {
  const forms = new Set<string>();
  for (const part of [url.password, url.username]) {
    if (part === '') continue;
    forms.add(part);
    forms.add(lenientDecode(part));
  }
  if (url.password !== '') forms.add(`${url.username}:${url.password}`);
  return [...forms];
}
