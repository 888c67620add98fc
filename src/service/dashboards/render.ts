import { escapeHtml } from '../../common/html.js';
import type { DashboardCheck, DashboardCheckState, DashboardPageModel } from './page.js';

const e = escapeHtml;

/** Words, glyph and colour class of each state (the glyph repeats the colour for who cannot see it). */
const STATE_LABELS: Record<DashboardCheckState, { words: string; glyph: string }> = {
  PASSING: { words: 'Passing', glyph: '✓' },
  DEGRADED: { words: 'Degraded', glyph: '!' },
  FAILING: { words: 'Failing', glyph: '✕' },
  PAUSED: { words: 'Paused', glyph: '‖' },
  NO_DATA: { words: 'No data yet', glyph: '?' },
};

const CSS = `*,*::before,*::after{box-sizing:border-box}
body{margin:0;background:#F8FAFC;color:#0F172A;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;overflow-wrap:anywhere}
a{color:#1D4ED8}
:focus-visible{outline:3px solid #0F172A;outline-offset:2px}
.wrap{margin:0 auto;padding:0 1rem}
.w-FULL{max-width:none}.w-960PX{max-width:960px}
header.top{background:#fff;border-bottom:1px solid #CBD5E1}
header.top .wrap{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;padding-top:.75rem;padding-bottom:.75rem}
header.top img{height:3rem;width:auto;max-width:12rem;display:block}
h1{font-size:1.75rem;line-height:1.25;margin:1.25rem 0 .25rem}
h2{font-size:1.05rem;margin:0}
.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
.desc,.muted{color:#475569}
.summary{margin:.75rem 0 1rem}
.checks{list-style:none;margin:0;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(17rem,1fr));gap:.75rem}
.check{background:#fff;border:1px solid #CBD5E1;border-left:.4rem solid var(--sc);border-radius:.5rem;padding:.75rem 1rem}
.check-head{display:flex;justify-content:space-between;gap:.5rem;align-items:baseline}
.s-PASSING{--sc:#15803D}.s-DEGRADED{--sc:#92400E}.s-FAILING{--sc:#B91C1C}.s-PAUSED{--sc:#475569}.s-NO_DATA{--sc:#475569}
.state{display:inline-flex;gap:.35rem;align-items:center;white-space:nowrap;font-size:.9rem;color:var(--sc);font-weight:600}
.state .g{display:inline-grid;place-items:center;width:1.2rem;height:1.2rem;border-radius:50%;background:var(--sc);color:#fff;font-size:.75rem}
.tags{list-style:none;margin:.35rem 0 0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem}
.tags li{background:#E2E8F0;border-radius:.25rem;padding:0 .4rem;font-size:.8rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:0 .75rem;margin:.5rem 0 0;font-size:.9rem}
dt{color:#475569}dd{margin:0}
nav.pages{margin:1rem 0;display:flex;gap:1rem;align-items:center}
footer{margin:2rem 0;padding:1rem 0;border-top:1px solid #CBD5E1;color:#475569;font-size:.9rem}`;

const pad = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DD HH:MM UTC`, the time kept with its zone on one line. */
function dateTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}\u00a0UTC`;
}

/** A share of runs to two decimals (never rounded up to 100 while a run failed); "no runs" for null. */
function percent(value: number | null): string {
  if (value === null) return 'no runs';
  const floored = Math.floor(value * 100) / 100;
  return `${floored.toFixed(2)}%`;
}

function stateBadge(state: DashboardCheckState): string {
  const label = STATE_LABELS[state];
  return `<span class="state"><span class="g" aria-hidden="true">${label.glyph}</span>${label.words}</span>`;
}

function checkCard(check: DashboardCheck, hideTags: boolean): string {
  const tags =
    hideTags || check.tags.length === 0
      ? ''
      : `<ul class="tags" aria-label="Tags">${check.tags.map((t) => `<li>${e(t)}</li>`).join('')}</ul>`;
  const last = check.lastRunAt === null ? 'never' : dateTime(check.lastRunAt);
  return `<li class="check s-${check.state}"><div class="check-head"><h2>${e(check.name)}</h2>${stateBadge(check.state)}</div>${tags}<dl><dt>Last 24 hours</dt><dd>${percent(check.availability24h)}</dd><dt>Last 7 days</dt><dd>${percent(check.availability7d)}</dd><dt>Last run</dt><dd>${last}</dd></dl></li>`;
}

/**
 * The query of page `n` of the dashboard (page 1 has none), keeping the automatic refresh off when
 * `stopped`.
 */
function pageHref(n: number, stopped: boolean): string {
  const query = [...(n === 1 ? [] : [`page=${n}`]), ...(stopped ? ['refresh=off'] : [])];
  return `?${query.join('&')}`;
}

/** A rendered page and the value of its `Refresh` header (null: the page does not refresh itself). */
export type RenderedDashboard = { html: string; refresh: string | null };

/**
 * The public page of a dashboard (docs/api.md, "Dashboards"): `header` and `description` (when
 * `showHeader`), the `logo` (linked to `link`), a summary of the checks' states, then one card per check of
 * the page with its state, tags (unless `hideTags`), availability over 24 hours and 7 days and its last
 * run. It refreshes itself every `refreshRate` seconds, or turns to the next page every `paginationRate`
 * seconds when there are several, through the answer's `Refresh` header (the page needs no JavaScript);
 * a link turns that off (`?refresh=off`) and back on, so a visitor can stop it (WCAG 2.2.1). No link leads
 * to a run or any other account data.
 * @param stopped whether the visitor turned the automatic refresh off.
 */
export function renderDashboard(model: DashboardPageModel, stopped: boolean): RenderedDashboard {
  const { doc } = model;
  const title = doc.header.trim() === '' ? 'Dashboard' : doc.header;
  const favicon = doc.favicon ? `<link rel="icon" href="${e(doc.favicon)}">` : '';
  const logoImg = doc.logo ? `<img src="${e(doc.logo)}" alt="${e(title)} logo">` : '';
  const logo = logoImg && doc.link ? `<a href="${e(doc.link)}">${logoImg}</a>` : logoImg;
  const top = logo ? `<header class="top"><div class="wrap w-${doc.width}">${logo}</div></header>` : '';
  const heading = doc.showHeader
    ? `<h1>${e(title)}</h1>${doc.description ? `<p class="desc">${e(doc.description)}</p>` : ''}`
    : `<h1 class="vh">${e(title)}</h1>`;
  const c = model.counts;
  const parts = [
    `${c.PASSING} passing`,
    `${c.DEGRADED} degraded`,
    `${c.FAILING} failing`,
    ...(c.PAUSED > 0 ? [`${c.PAUSED} paused`] : []),
    ...(c.NO_DATA > 0 ? [`${c.NO_DATA} without data`] : []),
  ];
  const summary = `<p class="summary">${model.total} ${model.total === 1 ? 'check' : 'checks'}: ${parts.join(', ')}.</p>`;
  const list =
    model.checks.length === 0
      ? '<p class="muted">No check matches this dashboard.</p>'
      : `<ul class="checks">${model.checks.map((check) => checkCard(check, doc.hideTags)).join('')}</ul>`;
  const paged = model.pages > 1;
  const previous =
    model.page > 1 ? `<a href="${e(pageHref(model.page - 1, stopped))}">Previous page</a>` : '';
  const following =
    model.page < model.pages ? `<a href="${e(pageHref(model.page + 1, stopped))}">Next page</a>` : '';
  const nav = paged
    ? `<nav class="pages" aria-label="Pages">${previous}<span>Page ${model.page} of ${model.pages}</span>${following}</nav>`
    : '';
  const turns = paged && doc.paginationRate > 0;
  const next = model.page < model.pages ? model.page + 1 : 1;
  const auto = turns
    ? `${doc.paginationRate}; url=${pageHref(next, false)}`
    : doc.refreshRate > 0
      ? String(doc.refreshRate)
      : null;
  const every = turns
    ? `turns to the next page every ${doc.paginationRate} s`
    : `refreshes every ${doc.refreshRate} s`;
  const control =
    auto === null
      ? ''
      : stopped
        ? `<p class="muted">Automatic refresh is off. <a href="${e(pageHref(model.page, false))}">Turn automatic refresh on</a></p>`
        : `<p class="muted">This page ${every}. <a href="${e(pageHref(model.page, true))}">Stop automatic refresh</a></p>`;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${e(title)}</title>${favicon}<style>${CSS}</style></head>
<body>${top}<main class="wrap w-${doc.width}">${heading}${summary}${list}${nav}${control}</main><footer><div class="wrap w-${doc.width}"><p>Updated ${dateTime(model.nowMs)}. Availability is the share of runs without failure.</p><p>Powered by Outpost</p></div></footer></body></html>
`;
  return { html, refresh: stopped ? null : auto };
}
