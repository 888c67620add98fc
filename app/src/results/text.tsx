import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { formatMs } from '../ui/format.js';

/**
 * Small pieces shared by the parts of a result view: headings at a given level, long texts cut to a
 * preview, header tables, fact lists and pass/fail marks. Everything a result holds is user data: it is
 * rendered as text, never as HTML.
 */

/** A heading level a result section may start at: 2 on the result page, 3 inside a check session. */
export type HeadingLevel = 2 | 3 | 4 | 5;

/** A heading of `level` (clamped to h6), so a part nests under whatever page shows it. */
export function Heading({
  level,
  children,
  id,
}: {
  level: number;
  children: ComponentChildren;
  id?: string;
}) {
  const Tag = `h${Math.min(Math.max(level, 2), 6)}` as 'h2';
  return <Tag id={id}>{children}</Tag>;
}

/** The next level down, for a part's own subsections. */
export function below(level: HeadingLevel): HeadingLevel {
  return Math.min(level + 1, 5) as HeadingLevel;
}

/** How many characters of a long text show before "Show all". */
const PREVIEW_CHARS = 4000;

/**
 * Pretty-printed JSON of `text` when it is a JSON object or array that is not already indented, else
 * null (a plain text, or JSON already laid out).
 */
function prettyJson(text: string): string | null {
  const trimmed = text.trim();
  if (!(trimmed.startsWith('{') || trimmed.startsWith('['))) return null;
  try {
    const pretty = JSON.stringify(JSON.parse(trimmed), null, 2);
    return pretty === trimmed ? null : pretty;
  } catch {
    return null;
  }
}

/**
 * A text in a `<pre>` (a body, a reply, a stack): cut to `limit` characters with a button that shows it
 * all, and a "Format JSON" toggle when the text is compact JSON. An empty text shows `empty`.
 */
export function LongText({
  text,
  limit = PREVIEW_CHARS,
  empty = 'Empty',
  json = false,
}: {
  text: string;
  /** Characters shown before "Show all". */
  limit?: number;
  /** What to say for an empty text. */
  empty?: string;
  /** Offer to pretty-print the text when it is JSON. */
  json?: boolean;
}) {
  const [all, setAll] = useState(false);
  const [formatted, setFormatted] = useState(false);
  const pretty = useMemo(() => (json && text.length <= 2_000_000 ? prettyJson(text) : null), [json, text]);
  if (text.length === 0) return <p class="muted">{empty}</p>;
  const source = formatted && pretty !== null ? pretty : text;
  const cut = source.length > limit && !all;
  return (
    <div class="rv-long-text">
      {/* Wrapped, never scrolled: a keyboard reads all of it without a scrolling region. */}
      <pre>{cut ? source.slice(0, limit) : source}</pre>
      {source.length > limit || pretty !== null ? (
        <div class="rv-text-actions">
          {source.length > limit ? (
            <>
              <span class="muted">
                {cut
                  ? `Showing the first ${limit.toLocaleString()} of ${source.length.toLocaleString()} characters.`
                  : `${source.length.toLocaleString()} characters.`}
              </span>
              <button type="button" class="button-secondary" onClick={() => setAll(!all)}>
                {cut ? 'Show all' : 'Show less'}
              </button>
            </>
          ) : null}
          {pretty !== null ? (
            <button
              type="button"
              class="button-secondary"
              aria-pressed={formatted}
              onClick={() => setFormatted(!formatted)}
            >
              Format JSON
            </button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

/** Headers (or any name → value map) as a two-column table; `caption` names it for screen readers. */
export function HeaderTable({ headers, caption }: { headers: Record<string, string>; caption: string }) {
  const entries = Object.entries(headers);
  if (entries.length === 0) return <p class="muted">No headers.</p>;
  return (
    <ScrollRegion label={caption}>
      <table class="rv-headers">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {entries.map(([name, value]) => (
            <tr key={name}>
              <th scope="row" class="rv-mono">
                {name}
              </th>
              <td class="rv-mono rv-break">{value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

/** One fact of a fact list: its term and its value (null or undefined shows an em dash). */
type Fact = { term: string; value: ComponentChildren; key?: string };

/** Facts as a description list laid out in a grid: the term above, the value below. */
export function Facts({ facts }: { facts: readonly (Fact | null | false)[] }) {
  const shown = facts.filter((f): f is Fact => Boolean(f));
  return (
    <dl class="rv-facts">
      {shown.map((f) => (
        <div key={f.key ?? f.term} class="rv-fact">
          <dt>{f.term}</dt>
          <dd>{f.value === null || f.value === undefined || f.value === '' ? '—' : f.value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Passed or failed as glyph and text together (never colour alone). */
export function PassMark({
  ok,
  okText = 'Passed',
  badText = 'Failed',
}: {
  ok: boolean;
  okText?: string;
  badText?: string;
}) {
  return (
    <span class={ok ? 'rv-mark rv-mark-ok' : 'rv-mark rv-mark-bad'}>
      <span aria-hidden="true">{ok ? '✓ ' : '✕ '}</span>
      {ok ? okText : badText}
    </span>
  );
}

/** An offset from a start, ms: `0 ms` for the start itself (rather than `0 µs`), else as formatMs. */
export function formatOffset(ms: number): string {
  return ms === 0 ? '0 ms' : formatMs(ms);
}

/** A time of day to the millisecond (log lines, steps): `14:03:22.125`, in the browser's time zone. */
export function formatClock(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const time = date.toLocaleTimeString(undefined, {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hour12: false,
  });
  return `${time}.${String(date.getMilliseconds()).padStart(3, '0')}`;
}

/** One step of a breadcrumb trail; the last (the page itself) has no `href`. */
type Crumb = { label: string; href?: string };

/** A breadcrumb trail (`Checks › name › Result`): a navigation landmark, the current page marked. */
export function Breadcrumbs({ trail }: { trail: readonly Crumb[] }) {
  return (
    <nav aria-label="Breadcrumb" class="breadcrumbs rv-crumbs">
      <ol>
        {trail.map((c, i) => (
          <li key={i}>
            {c.href ? <a href={c.href}>{c.label}</a> : <span aria-current="page">{c.label}</span>}
          </li>
        ))}
      </ol>
    </nav>
  );
}

/**
 * A wide table's scrolling box (`.table-wrap`). Once its content is wider than the box (a narrow
 * screen), it becomes a named region a keyboard can focus and scroll; when everything fits it is a plain
 * box and no tab stop.
 */
export function ScrollRegion({ label, children }: { label: string; children: ComponentChildren }) {
  const ref = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const box = ref.current;
    if (!box) return;
    const measure = () => setScrolls(box.scrollWidth > box.clientWidth + 1);
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
    observer.observe(box);
    if (box.firstElementChild) observer.observe(box.firstElementChild);
    return () => observer.disconnect();
  }, []);
  // One element throughout (the table inside keeps its state): a named group, which takes a tab stop
  // while it scrolls (WCAG 2.1.1); a group, not a region, so the same table in several results does not
  // repeat a landmark.
  return (
    // biome-ignore lint/a11y/useSemanticElements: a fieldset groups form controls; this box holds a table
    <div ref={ref} class="table-wrap" role="group" aria-label={label} tabIndex={scrolls ? 0 : undefined}>
      {children}
    </div>
  );
}
