/**
 * The status badge of a page (docs/status-pages.md, "Feeds and JSON"): a shields-style SVG "status |
 * operational" to embed in a README or a site. The state is written in words, never told by colour alone;
 * the SVG carries a `<title>` and `role="img"` with an `aria-label` for screen readers; white text on every
 * background has a contrast of at least 4.5:1. Every text is escaped (`escapeHtml`, src/common/html.ts, after
 * dropping characters XML forbids).
 */
import { xmlChars } from './feeds.js';
import { escapeHtml } from '../../../common/html.js';
import type { ServiceState } from './types.js';

/** The badge's left part. */
export const BADGE_LABEL = 'status';

/** The badge's right part per state (words) and its background (white text on it has ≥ 4.5:1 contrast). */
export const BADGE_STATES: Record<ServiceState, { message: string; color: string }> = {
  operational: { message: 'operational', color: '#1A7F37' },
  under_maintenance: { message: 'under maintenance', color: '#0969DA' },
  degraded_performance: { message: 'degraded performance', color: '#9A6700' },
  partial_outage: { message: 'partial outage', color: '#BC4C00' },
  major_outage: { message: 'major outage', color: '#CF222E' },
};

/** Background of the badge's label. */
export const BADGE_LABEL_COLOR = '#555555';

/** Advance widths (px) of Verdana at 11 px, the badge's font, for the characters its words use. */
const WIDTHS: Record<string, number> = {
  ' ': 3.5,
  a: 6.6,
  b: 6.9,
  c: 5.8,
  d: 6.9,
  e: 6.6,
  f: 3.9,
  g: 6.9,
  h: 7,
  i: 3,
  j: 3.8,
  k: 6.5,
  l: 3,
  m: 10.7,
  n: 7,
  o: 6.7,
  p: 6.9,
  q: 6.9,
  r: 4.7,
  s: 5.7,
  t: 4.3,
  u: 7,
  v: 6.5,
  w: 9,
  x: 6.5,
  y: 6.5,
  z: 5.8,
};

/** The width (px) of `text` in Verdana 11 px, rounded up; other characters count as 7.5 px. */
export function textWidth(text: string): number {
  let width = 0;
  for (const c of text) width += WIDTHS[c] ?? 7.5;
  return Math.ceil(width);
}

/**
 * The SVG badge of a page whose overall state is `state`: `{label} | {message}` on grey and the state's
 * colour, 20 px high, each part as wide as its text plus 10 px. `pageName` names the page in the `<title>`
 * and `aria-label` ("Acme status: major outage").
 */
export function renderBadge(pageName: string, state: ServiceState): string {
  const { message, color } = BADGE_STATES[state];
  const labelWidth = textWidth(BADGE_LABEL) + 10;
  const messageWidth = textWidth(message) + 10;
  const width = labelWidth + messageWidth;
  const title = escapeHtml(xmlChars(`${pageName} status: ${message}`));
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="20" role="img" aria-label="${title}">`,
    `<title>${title}</title>`,
    `<clipPath id="r"><rect width="${width}" height="20" rx="3" fill="#fff"/></clipPath>`,
    '<g clip-path="url(#r)">',
    `<rect width="${labelWidth}" height="20" fill="${BADGE_LABEL_COLOR}"/>`,
    `<rect x="${labelWidth}" width="${messageWidth}" height="20" fill="${color}"/>`,
    '</g>',
    '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">',
    `<text x="${labelWidth / 2}" y="14">${escapeHtml(BADGE_LABEL)}</text>`,
    `<text x="${labelWidth + messageWidth / 2}" y="14">${escapeHtml(message)}</text>`,
    '</g>',
    '</svg>',
    '',
  ].join('\n');
}
