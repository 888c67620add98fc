/** The entity each character {@link escapeHtml} escapes is written as. */
const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * `text` escaped for HTML element content and for attribute values in double or single quotes: each
 * of `& < > " '` replaced by `&amp; &lt; &gt; &quot; &#39;`, every other character kept as written
 * (so `=` and `` ` `` are not escaped: never put the result in an unquoted attribute). Never throws.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string);
}
