/**
 * The HTML of a status page (docs/status-pages.md): the page itself, its incident history and one
 * incident's page. Server-rendered, complete without JavaScript, one inline `<style>`, no request to any
 * other site (the logo and favicon are the page owner's own URLs). Everything shown is user data and goes
 * through `escapeHtml` (src/common/html.ts).
 */
import { escapeHtml } from '../../../common/html.js';
import { THEME_COLOR_FIELDS, type ThemeColors } from '../admin/schema.js';
import { DEFAULT_THEME_COLORS } from '../admin/status-pages.js';
import type { Impact, UpdateStatus } from '../incidents/schema.js';
import {
  type PublicIncident,
  type PublicService,
  type ServiceState,
  type StatusPageModel,
  UPTIME_RULE,
  type UptimeDay,
  type UptimeSummary,
} from './types.js';
import { DAY_MS, NARROW_STRIP_DAYS, STRIP_DAYS, utcDayStart } from './uptime.js';

/** How the page's links are made for this request. */
export type RenderLinks = {
  /** `/status/{url}`, or `''` at the root of the page's custom domain. */
  basePath: string;
  /** Appended to the feed links: `''`, or `?token=…` for a private page opened with a key. */
  feedQuery: string;
};

const e = escapeHtml;

/** Words and glyph of a service state (Statuspage's component statuses). */
export const STATE_LABELS: Record<ServiceState, { words: string; banner: string; glyph: string }> = {
  operational: { words: 'Operational', banner: 'All systems operational', glyph: '✓' },
  under_maintenance: { words: 'Under maintenance', banner: 'Maintenance in progress', glyph: '⚙\uFE0E' },
  degraded_performance: { words: 'Degraded performance', banner: 'Degraded performance', glyph: '▲' },
  partial_outage: { words: 'Partial outage', banner: 'Partial outage', glyph: '◐' },
  major_outage: { words: 'Major outage', banner: 'Major outage', glyph: '✕' },
};

/** Words of an incident's impact. */
export const IMPACT_WORDS: Record<Impact, string> = {
  MAJOR: 'Major outage',
  MINOR: 'Partial outage',
  MAINTENANCE: 'Maintenance',
};

/** Words of an incident update's status (Statuspage's incident statuses). */
export const UPDATE_STATUS_WORDS: Record<UpdateStatus, string> = {
  INVESTIGATING: 'Investigating',
  IDENTIFIED: 'Identified',
  MONITORING: 'Monitoring',
  RESOLVED: 'Resolved',
  MAINTENANCE: 'Maintenance in progress',
};

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

const pad = (n: number) => String(n).padStart(2, '0');

/** `Nov 12` of a `YYYY-MM-DD` date. */
function shortDate(date: string): string {
  return `${MONTHS[Number(date.slice(5, 7)) - 1]} ${Number(date.slice(8, 10))}`;
}

/** `Nov 12, 2026, 14:05 UTC`. */
function dateTime(ms: number): string {
  const d = new Date(ms);
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}, ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

/** A `<time>` element of an instant, its text in UTC. */
function time(ms: number): string {
  return `<time datetime="${new Date(ms).toISOString()}">${dateTime(ms)}</time>`;
}

/** `2 h 5 min`, `45 min`, `3 d 4 h`: a duration in ms for people. */
export function duration(ms: number): string {
  const minutes = Math.max(0, Math.round(ms / 60_000));
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}

/** `99.31 %`, `100 %`. */
function percent(value: number): string {
  return `${value === 100 ? '100' : value.toFixed(2)} %`;
}

/** `1 run`, `1,440 runs`. */
function count(n: number, what: string): string {
  return `${n.toLocaleString('en-US')} ${what}${n === 1 ? '' : 's'}`;
}

/** `1,440 runs, 3 failed, 2 degraded` of a day's runs (the failed and degraded parts only when some are). */
function runsText(runs: NonNullable<UptimeDay['runs']>): string {
  const total = runs.passed + runs.degraded + runs.failed;
  let text = count(total, 'run');
  if (runs.failed > 0) text += `, ${runs.failed.toLocaleString('en-US')} failed`;
  if (runs.degraded > 0) text += `, ${runs.degraded.toLocaleString('en-US')} degraded`;
  return text;
}

/**
 * The text of one strip day, its worst impact in words (the bar's colour says it too):
 * `Nov 12: 99.31 % uptime, 1,440 runs, 10 failed, 1 incident (major outage)`, `Nov 13: 100 % uptime, no
 * incidents`, `Nov 14: no data, 1 incident (major outage)`.
 */
export function dayText(day: UptimeDay): string {
  const incidents = day.incidentCount === 0 ? 'no incidents' : count(day.incidentCount, 'incident');
  const worst = day.worstImpact === null ? '' : ` (${IMPACT_WORDS[day.worstImpact].toLowerCase()})`;
  if (day.uptimePercent === null) {
    if (day.incidentCount > 0 && day.worstImpact === 'MAINTENANCE')
      return `${shortDate(day.date)}: maintenance all day, ${incidents}`;
    return day.incidentCount > 0
      ? `${shortDate(day.date)}: no data, ${incidents}${worst}`
      : `${shortDate(day.date)}: no data`;
  }
  const runs = day.runs ? `${runsText(day.runs)}, ` : '';
  return `${shortDate(day.date)}: ${percent(day.uptimePercent)} uptime, ${runs}${incidents}${worst}`;
}

/**
 * The class of a strip day's bar: its worst impact; else failing runs (as a partial outage); else up or no
 * data.
 */
function dayClass(day: UptimeDay): string {
  if (day.worstImpact === 'MAJOR') return 'x';
  if (day.worstImpact === 'MINOR' || (day.runs?.failed ?? 0) > 0) return 'p';
  if (day.worstImpact === 'MAINTENANCE') return 'm';
  return day.uptimePercent === null ? 'n' : 'o';
}

/**
 * The caption of a strip's uptime: `90-day 99.95 % uptime` when every day shown has data, else over how
 * many days it is measured (`99.95 % uptime over 3 days`), or `no data yet`.
 */
export function uptimeCaption(summary: UptimeSummary): string {
  if (summary.percent === null) return 'no data yet';
  if (summary.daysWithData >= summary.days) return `${summary.days}-day ${percent(summary.percent)} uptime`;
  return `${percent(summary.percent)} uptime over ${count(summary.daysWithData, 'day')}`;
}

// --- Theme and frame -------------------------------------------------------------------------------

const CSS_VARS: Record<(typeof THEME_COLOR_FIELDS)[number], string> = {
  bodyBackgroundColor: '--bg',
  headerBackgroundColor: '--hbg',
  headerFontColor: '--hfg',
  titleFontColor: '--title',
  bodyFontColor: '--fg',
  bodyFontColorMuted: '--muted',
  navigationFontColor: '--nav',
  linkFontColor: '--link',
  cardBackgroundColor: '--card',
  borderColor: '--border',
  primaryButtonBackgroundColor: '--btn',
  primaryButtonFontColor: '--btnfg',
};

const HEX = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;

/**
 * One theme's colours as CSS custom properties. A theme left at the API's defaults (DEFAULT_THEME_COLORS)
 * gets `fallback`, the same palette with every text at 4.5:1 or more; colours the owner set are used as
 * they are (their brand). Only CSS hex colours pass (the API allows nothing else).
 */
function themeVars(
  theme: ThemeColors['light'] | undefined,
  defaults: ThemeColors['light'],
  fallback: ThemeColors['light'],
): string {
  const own = theme && THEME_COLOR_FIELDS.some((f) => theme[f]?.toLowerCase() !== defaults[f].toLowerCase());
  return THEME_COLOR_FIELDS.map((field) => {
    const value = own ? theme?.[field] : undefined;
    return `${CSS_VARS[field]}:${value && HEX.test(value) ? value : fallback[field]}`;
  }).join(';');
}

/** The API's default colours with readable text (4.5:1 or more everywhere): pages left at the defaults get these. */
const FALLBACK: ThemeColors = {
  light: {
    bodyBackgroundColor: '#F8FAFC',
    headerBackgroundColor: '#FFFFFF',
    headerFontColor: '#0F172A',
    titleFontColor: '#0F172A',
    bodyFontColor: '#0F172A',
    bodyFontColorMuted: '#475569',
    navigationFontColor: '#0F172A',
    linkFontColor: '#1D4ED8',
    cardBackgroundColor: '#FFFFFF',
    borderColor: '#CBD5E1',
    primaryButtonBackgroundColor: '#1D4ED8',
    primaryButtonFontColor: '#FFFFFF',
  },
  dark: {
    bodyBackgroundColor: '#0B1120',
    headerBackgroundColor: '#111827',
    headerFontColor: '#F1F5F9',
    titleFontColor: '#F1F5F9',
    bodyFontColor: '#F1F5F9',
    bodyFontColorMuted: '#CBD5E1',
    navigationFontColor: '#F1F5F9',
    linkFontColor: '#93C5FD',
    cardBackgroundColor: '#111827',
    borderColor: '#334155',
    primaryButtonBackgroundColor: '#93C5FD',
    primaryButtonFontColor: '#0B1120',
  },
};

/**
 * The theme's CSS: LIGHT → the light colours only, DARK → the dark ones only, AUTO → light, and dark under
 * `@media (prefers-color-scheme: dark)`.
 */
export function themeCss(model: StatusPageModel): string {
  const colors = model.page.doc.themeColors;
  const light = `:root{color-scheme:light;${themeVars(colors?.light, DEFAULT_THEME_COLORS.light, FALLBACK.light)}}`;
  const dark = `:root{color-scheme:dark;${themeVars(colors?.dark, DEFAULT_THEME_COLORS.dark, FALLBACK.dark)}}`;
  const mode = model.page.doc.defaultTheme;
  if (mode === 'LIGHT') return light;
  if (mode === 'DARK') return dark;
  return `${light}@media (prefers-color-scheme:dark){${dark}}`;
}

/** The page's fixed CSS (after the theme's custom properties). Status colours carry their own text colour. */
const BASE_CSS = `*,*::before,*::after{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;overflow-wrap:anywhere}
a{color:var(--link)}
:focus-visible{outline:3px solid var(--fg);outline-offset:2px}
.skip{position:absolute;left:-9999px;top:0;background:var(--card);color:var(--fg);padding:.5rem 1rem}
.skip:focus{left:.5rem;top:.5rem;z-index:2}
.skip-strip{position:absolute;left:-9999px}
.skip-strip:focus{position:static;display:inline-block;margin:.25rem 0}
.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
.wrap{max-width:52rem;margin:0 auto;padding:0 1rem}
header.top{background:var(--hbg);color:var(--hfg);border-bottom:1px solid var(--border)}
header.top .wrap{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem 1rem;padding-top:.75rem;padding-bottom:.75rem}
header.top img{max-height:3rem;max-width:12rem;display:block}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
nav a{color:var(--nav)}
nav a[aria-current]{font-weight:700}
h1{color:var(--title);font-size:1.75rem;line-height:1.25;margin:1.5rem 0 .5rem}
h2{color:var(--title);font-size:1.25rem;margin:0 0 .75rem}
h3{font-size:1rem;margin:0}
.desc,.muted{color:var(--muted)}
.box{background:var(--card);border:1px solid var(--border);border-radius:.5rem;padding:1rem;margin:1rem 0}
.banner{display:flex;gap:.5rem;align-items:center;border-radius:.5rem;padding:.9rem 1rem;margin:1rem 0;font-size:1.15rem;font-weight:700;color:#fff}
.s-operational{--sc:#15803D}.s-under_maintenance{--sc:#1D4ED8}.s-degraded_performance{--sc:#92400E}.s-partial_outage{--sc:#C2410C}.s-major_outage{--sc:#B91C1C}
.banner{background:var(--sc)}
.state{display:inline-flex;gap:.35rem;align-items:center;white-space:nowrap;font-size:.9rem}
.state .g{display:inline-grid;place-items:center;width:1.2rem;height:1.2rem;border-radius:50%;background:var(--sc);color:#fff;font-size:.75rem}
.services{list-style:none;margin:0;padding:0}
.svc{padding:.75rem 0;border-top:1px solid var(--border)}
.svc:first-child{border-top:0;padding-top:0}
.svc-head{display:flex;flex-wrap:wrap;justify-content:space-between;gap:.25rem 1rem;align-items:baseline}
.strip{display:flex;gap:1px;list-style:none;margin:.5rem 0 .25rem;padding:0;height:2rem;position:relative}
.strip li{flex:1 1 0;min-width:0;border-radius:1px;background:#15803D}
.strip .n{background:#94A3B8}.strip .m{background:#1D4ED8}.strip .p{background:#EA580C;height:75%;align-self:flex-end}.strip .x{background:#B91C1C;height:50%;align-self:flex-end}
.strip li>span{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
.strip li:hover>span,.strip li:focus>span{clip-path:none;width:auto;height:auto;max-width:100%;overflow:visible;white-space:normal;top:calc(100% + .3rem);left:0;background:#111827;color:#fff;padding:.3rem .5rem;border-radius:.25rem;font-size:.8rem;z-index:1}
.legend{display:flex;justify-content:space-between;gap:.5rem;font-size:.8rem;color:var(--muted)}
.l30{display:none}
@media (max-width:479.98px){.strip li:nth-child(-n+${STRIP_DAYS - NARROW_STRIP_DAYS}){display:none}.l90{display:none}.l30{display:inline}}
.incident h3 a{color:var(--link)}
.updates{list-style:none;margin:.5rem 0 0;padding:0}
.updates li{margin:.5rem 0}
.updates p{margin:.1rem 0;white-space:pre-line}
.impact{font-size:.9rem}
footer{margin:2rem 0;padding:1rem 0;border-top:1px solid var(--border);color:var(--muted);font-size:.9rem}
footer ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
footer a{color:var(--link)}
.month{margin:1.5rem 0}
.month>ul{list-style:none;padding:0;margin:0}
.month>ul>li{padding:.5rem 0;border-top:1px solid var(--border)}`;

type View = 'page' | 'history' | 'incident';

/** The document around a view's `<main>`: head, header with logo and navigation, footer. */
function frame(model: StatusPageModel, links: RenderLinks, view: View, title: string, main: string): string {
  const { doc } = model.page;
  const base = links.basePath;
  const home = base === '' ? '/' : base;
  const name = e(doc.name);
  const scheme = doc.defaultTheme === 'LIGHT' ? 'light' : doc.defaultTheme === 'DARK' ? 'dark' : 'light dark';
  const favicon = doc.favicon ? `<link rel="icon" href="${e(doc.favicon)}">` : '';
  const feeds = `<link rel="alternate" type="application/atom+xml" title="${name}: Atom feed" href="${e(`${base}/feed.atom${links.feedQuery}`)}"><link rel="alternate" type="application/rss+xml" title="${name}: RSS feed" href="${e(`${base}/feed.rss${links.feedQuery}`)}">`;
  const logoImg = doc.logo ? `<img src="${e(doc.logo)}" alt="${name} logo">` : '';
  const logo = !logoImg
    ? `<span>${name}</span>`
    : doc.redirectTo
      ? `<a href="${e(doc.redirectTo)}">${logoImg}</a>`
      : logoImg;
  const current = (v: View) => (v === view ? ' aria-current="page"' : '');
  const nav = `<nav aria-label="Status page"><ul><li><a href="${e(home)}"${current('page')}>Current status</a></li><li><a href="${e(`${base}/history`)}"${current('history')}>Incident history</a></li><li><a href="${e(`${base}/subscribe`)}">Subscribe to updates</a></li></ul></nav>`;
  const footer = `<footer><div class="wrap"><p>${e(UPTIME_RULE)} Times are in UTC.</p><ul><li><a href="${e(`${base}/history`)}">Incident history</a></li><li><a href="${e(`${base}/feed.atom${links.feedQuery}`)}">Atom feed</a></li><li><a href="${e(`${base}/feed.rss${links.feedQuery}`)}">RSS feed</a></li><li><a href="${e(`${base}/subscribe`)}">Subscribe to updates</a></li></ul><p>Powered by Outpost</p></div></footer>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="${scheme}"><title>${e(title)}</title>${favicon}${feeds}<style>${themeCss(model)}
${BASE_CSS}</style></head>
<body><a class="skip" href="#main">Skip to content</a><header class="top"><div class="wrap">${logo}${nav}</div></header><main id="main" class="wrap">${main}</main>${footer}</body></html>
`;
}

// --- Pieces ----------------------------------------------------------------------------------------

function stateBadge(state: ServiceState): string {
  const label = STATE_LABELS[state];
  return `<span class="state s-${state}"><span class="g" aria-hidden="true">${label.glyph}</span>${label.words}</span>`;
}

function strip(service: PublicService): string {
  let days = '';
  for (const day of service.uptime)
    days += `<li tabindex="0" class="${dayClass(day)}"><span>${dayText(day)}</span></li>`;
  // A narrow screen shows the last 30 days: its caption then speaks of those (the .l30 spans).
  return `<ol class="strip" aria-label="${e(service.name)}: uptime of the last ${STRIP_DAYS} days">${days}</ol><p class="legend"><span><span class="l90">${STRIP_DAYS} days ago</span><span class="l30">${NARROW_STRIP_DAYS} days ago</span></span><span><span class="l90">${uptimeCaption(service.uptime90d)}</span><span class="l30">${uptimeCaption(service.uptime30d)}</span></span><span>Today</span></p>`;
}

/** The names of the page's services an incident affects, in card order. */
function affected(model: StatusPageModel, incident: PublicIncident): string[] {
  const ids = new Set(incident.serviceIds);
  const names: string[] = [];
  for (const card of model.cards) for (const s of card.services) if (ids.delete(s.id)) names.push(s.name);
  return names;
}

/** The one-line summary of an incident: impact, times, services (only the times unless `full`). */
function incidentMeta(model: StatusPageModel, incident: PublicIncident, full = true): string {
  const now = model.generatedAtMs;
  const parts = full ? [`<span class="impact">${IMPACT_WORDS[incident.impact]}</span>`] : [];
  if (incident.startedAtMs > now) parts.push(`scheduled for ${time(incident.startedAtMs)}`);
  else if (incident.resolvedAtMs === null)
    parts.push(`since ${time(incident.startedAtMs)} (${duration(now - incident.startedAtMs)})`);
  else
    parts.push(
      `${time(incident.startedAtMs)} to ${time(incident.resolvedAtMs)} (${duration(incident.resolvedAtMs - incident.startedAtMs)})`,
    );
  const names = full ? affected(model, incident) : [];
  if (names.length > 0) parts.push(`affects ${names.map(e).join(', ')}`);
  return `<p class="muted">${parts.join(' · ')}</p>`;
}

function updatesList(incident: PublicIncident, all: boolean): string {
  const shown = all ? incident.updates : incident.updates.slice(0, 3);
  if (shown.length === 0) return '';
  const items = shown
    .map(
      (u) =>
        `<li><strong>${UPDATE_STATUS_WORDS[u.status]}</strong> · ${time(u.atMs)}<p>${e(u.description)}</p></li>`,
    )
    .join('');
  return `<ol class="updates">${items}</ol>`;
}

function incidentHref(links: RenderLinks, incident: PublicIncident): string {
  return e(`${links.basePath}/incidents/${encodeURIComponent(incident.id)}`);
}

/**
 * Maintenance windows in progress or ahead within a week (the model's `maintenance`): name, times, the
 * services they cover, the description. Nothing when there is none.
 */
function maintenanceSection(model: StatusPageModel): string {
  const windows = model.maintenance ?? [];
  if (windows.length === 0) return '';
  let html = '<section aria-labelledby="maintenance"><h2 id="maintenance">Scheduled maintenance</h2>';
  for (const window of windows) {
    const names = new Set(window.serviceIds);
    const services: string[] = [];
    for (const card of model.cards)
      for (const s of card.services) if (names.delete(s.id)) services.push(s.name);
    const when = window.active
      ? `In progress, until ${time(window.endsAtMs)}`
      : `${time(window.startsAtMs)} to ${time(window.endsAtMs)}`;
    const covers = services.length > 0 ? ` · affects ${services.map(e).join(', ')}` : '';
    const description = window.description ? `<p>${e(window.description)}</p>` : '';
    html += `<article class="box incident"><h3>${e(window.name)}</h3><p class="muted">${when}${covers}</p>${description}</article>`;
  }
  return `${html}</section>`;
}

// --- Views -----------------------------------------------------------------------------------------

/**
 * `GET /status/{url}`: name and description, the overall banner, active incidents with their latest
 * updates, each card with its services (state as glyph and words, 90-day strip) and the footer.
 */
export function renderStatusPage(model: StatusPageModel, links: RenderLinks): string {
  const { doc } = model.page;
  const banner = STATE_LABELS[model.overall];
  let main = `<h1>${e(doc.name)}</h1>${doc.description ? `<p class="desc">${e(doc.description)}</p>` : ''}`;
  main += `<div role="status" class="banner s-${model.overall}"><span aria-hidden="true">${banner.glyph}</span><span>${banner.banner}</span></div>`;
  if (model.activeIncidents.length > 0) {
    main += '<section aria-labelledby="active"><h2 id="active">Active incidents</h2>';
    for (const incident of model.activeIncidents) {
      main += `<article class="box incident"><h3><a href="${incidentHref(links, incident)}">${e(incident.name)}</a></h3>${incidentMeta(model, incident)}${updatesList(incident, false)}</article>`;
    }
    main += '</section>';
  }
  main += maintenanceSection(model);
  model.cards.forEach((card, i) => {
    main += `<section class="box" aria-labelledby="card-${i}"><h2 id="card-${i}">${e(card.name)}</h2>`;
    if (card.services.length === 0) main += '<p class="muted">No services on this card.</p>';
    else {
      main += '<ul class="services">';
      card.services.forEach((service, j) => {
        // 90 tab stops a strip: a keyboard user may step over one (the link shows when focused).
        const next = j + 1 < card.services.length ? `svc-${i}-${j + 1}` : `card-${i}-end`;
        main += `<li class="svc" id="svc-${i}-${j}"><div class="svc-head"><h3>${e(service.name)}</h3>${stateBadge(service.state)}</div><a class="skip-strip" href="#${next}">Skip the 90 days of ${e(service.name)}</a>${strip(service)}</li>`;
      });
      main += '</ul>';
    }
    main += `<span id="card-${i}-end" tabindex="-1"></span></section>`;
  });
  main += `<p><a href="${e(`${links.basePath}/history`)}">Incident history</a></p>`;
  const title = /\bstatus\b/i.test(doc.name) ? doc.name : `${doc.name} status`;
  return frame(model, links, 'page', title, main);
}

/**
 * `GET /status/{url}/history`: the incidents of the last 90 days by month (UTC), newest first, each
 * linking to its page; a month without incidents says so.
 */
export function renderHistory(model: StatusPageModel, links: RenderLinks): string {
  const { doc } = model.page;
  const first = new Date(utcDayStart(model.generatedAtMs) - (STRIP_DAYS - 1) * DAY_MS);
  const months: { key: string; label: string; incidents: PublicIncident[] }[] = [];
  const now = new Date(model.generatedAtMs);
  let y = now.getUTCFullYear();
  let m = now.getUTCMonth();
  while (y > first.getUTCFullYear() || (y === first.getUTCFullYear() && m >= first.getUTCMonth())) {
    months.push({ key: `${y}-${pad(m + 1)}`, label: `${MONTH_NAMES[m]} ${y}`, incidents: [] });
    if (m === 0) {
      m = 11;
      y--;
    } else m--;
  }
  const byKey = new Map(months.map((m) => [m.key, m]));
  for (const incident of model.incidents) {
    const key = new Date(incident.startedAtMs).toISOString().slice(0, 7);
    (byKey.get(key) ?? months[months.length - 1])?.incidents.push(incident);
  }
  let main = `<h1>${e(doc.name)}: incident history</h1><p class="desc">Incidents of the last ${STRIP_DAYS} days, newest first.</p>`;
  months.forEach((month, i) => {
    main += `<section class="month" aria-labelledby="m-${i}"><h2 id="m-${i}">${month.label}</h2>`;
    if (month.incidents.length === 0) main += '<p class="muted">No incidents reported this month.</p>';
    else {
      main += '<ul>';
      for (const incident of month.incidents) {
        const status = incident.resolvedAtMs === null ? ' <strong>(ongoing)</strong>' : '';
        main += `<li><h3><a href="${incidentHref(links, incident)}">${e(incident.name)}</a>${status}</h3>${incidentMeta(model, incident)}</li>`;
      }
      main += '</ul>';
    }
    main += '</section>';
  });
  return frame(model, links, 'history', `${doc.name}: incident history`, main);
}

/**
 * `GET /status/{url}/incidents/{id}`: one incident of the page, with its impact, affected services and
 * every update, newest first.
 * @returns null when the incident is not among the page's (the caller answers the shared 404).
 */
export function renderIncident(
  model: StatusPageModel,
  incidentId: string,
  links: RenderLinks,
): string | null {
  const incident =
    model.incidents.find((i) => i.id === incidentId) ?? model.olderIncidents.find((i) => i.id === incidentId);
  if (!incident) return null;
  const { doc } = model.page;
  const state =
    incident.resolvedAtMs === null
      ? incident.startedAtMs > model.generatedAtMs
        ? 'Scheduled'
        : 'Ongoing'
      : 'Resolved';
  const names = affected(model, incident);
  let main = `<p><a href="${e(links.basePath === '' ? '/' : links.basePath)}">← ${e(doc.name)}</a></p><h1>${e(incident.name)}</h1>`;
  main += `<p><strong>${state}</strong> · ${IMPACT_WORDS[incident.impact]}</p>${incidentMeta(model, incident, false)}`;
  main += `<section class="box" aria-labelledby="affected"><h2 id="affected">Affected services</h2>${
    names.length === 0
      ? '<p class="muted">None on this page.</p>'
      : `<ul>${names.map((n) => `<li>${e(n)}</li>`).join('')}</ul>`
  }</section>`;
  main += `<section class="box" aria-labelledby="updates"><h2 id="updates">Updates</h2>${
    incident.updates.length === 0 ? '<p class="muted">No updates yet.</p>' : updatesList(incident, true)
  }</section>`;
  return frame(model, links, 'incident', `${incident.name} · ${doc.name}`, main);
}
