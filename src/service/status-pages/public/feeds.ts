/**
 * RSS 2.0 and Atom 1.0 feeds of a status page's incidents (docs/status-pages.md, "Feeds and JSON"),
 * written with the `feed` library: one item per incident of the last 90 days, newest first.
 *
 * Escaping: the library puts item titles and contents in CDATA sections and element texts through
 * xml-js. Item titles and contents are HTML (Atom `type="html"`, RSS descriptions), so every user text in
 * them goes through `escapeHtml` (src/common/html.ts), which also leaves no `]]>` for a CDATA section to end
 * at. Texts the library writes as element content ({@link xmlJsText}) are handed over in the form xml-js
 * expects. Characters XML 1.0 forbids are dropped from every user text first.
 */
import { Feed, type Item } from 'feed';
import { escapeHtml } from '../../../common/html.js';
import { IMPACT_WORDS } from './render.js';
import {
  incidentStatus,
  isMaintenance,
  maintenanceStatus,
  SP_STATUS_WORDS,
  updateStatusOf,
} from './statuspage-api.js';
import type { PublicIncident, StatusPageModel } from './types.js';

/** Absolute links of a page's machine-readable documents, as this request sees them. */
export type MachineLinks = {
  /** `https://status.example.com` or the service's app URL; no trailing slash. */
  origin: string;
  /** `/status/{url}`, or `''` at the root of the page's custom domain. */
  basePath: string;
  /** `''`, or `?token=…` for a private page: kept in the feed's own links only, never in incident links. */
  feedQuery: string;
};

/** The feed formats. */
export type FeedFormat = 'rss' | 'atom';

/** Content types of the feeds. */
export const FEED_CONTENT_TYPES: Record<FeedFormat, string> = {
  rss: 'application/rss+xml; charset=utf-8',
  atom: 'application/atom+xml; charset=utf-8',
};

/** The page's absolute URL: `{origin}{basePath}`, or `{origin}/` at the root of a custom domain. */
export function pageUrlOf(links: MachineLinks): string {
  return `${links.origin}${links.basePath || '/'}`;
}

/** The absolute URL of an incident's page (never with a token). */
export function incidentUrlOf(links: MachineLinks, incidentId: string): string {
  return `${links.origin}${links.basePath}/incidents/${encodeURIComponent(incidentId)}`;
}

const XML_FORBIDDEN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters XML 1.0 forbids.
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `text` without the characters XML 1.0 does not allow (C0 controls but tab and line breaks, lone surrogates, U+FFFE/F). */
export function xmlChars(text: string): string {
  return text.replace(XML_FORBIDDEN, '');
}

/** User text as HTML inside a feed: XML-allowed characters, HTML-escaped. */
function html(text: string): string {
  return escapeHtml(xmlChars(text));
}

/**
 * User text for an element xml-js writes as text: xml-js escapes `& < >` but first turns every `&amp;` back
 * into `&` (to avoid escaping twice), so each `&` is handed over as `&amp;` and comes out escaped once.
 */
export function xmlJsText(text: string): string {
  return xmlChars(text).replace(/&/g, '&amp;');
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `24 Nov 2026, 08:05 UTC`. */
function utcText(ms: number): string {
  const d = new Date(ms);
  const hh = String(d.getUTCHours()).padStart(2, '0');
  const mm = String(d.getUTCMinutes()).padStart(2, '0');
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${hh}:${mm} UTC`;
}

/** The incident's current status in words (Statuspage's incident or maintenance statuses). */
export function statusWords(incident: PublicIncident, nowMs: number): string {
  const status = isMaintenance(incident)
    ? maintenanceStatus(incident, incident.startedAtMs, nowMs)
    : incidentStatus(incident);
  return SP_STATUS_WORDS[status];
}

/** An item's title (plain text): `{name} — {status}`. */
export function itemTitle(incident: PublicIncident, nowMs: number): string {
  return `${incident.name} — ${statusWords(incident, nowMs)}`;
}

/**
 * An item's date: the time its latest update is shown as made (`publicIncidentUpdateDate`, so a backdated
 * update keeps its date), or the incident's start without updates; epoch ms.
 */
function itemUpdatedAt(incident: PublicIncident): number {
  return incident.updates[0]?.atMs ?? incident.startedAtMs;
}

/**
 * An item's content (HTML, every user text escaped): the impact and affected services, then every update,
 * newest first, with its status, its time (UTC) and its text (line breaks kept).
 */
export function itemContent(incident: PublicIncident, serviceNames: Map<string, string>): string {
  const affected = incident.serviceIds.map((id) => serviceNames.get(id)).filter((n): n is string => !!n);
  const parts = [
    `<p><strong>Impact:</strong> ${html(IMPACT_WORDS[incident.impact])}.` +
      (affected.length > 0 ? ` <strong>Affected:</strong> ${affected.map(html).join(', ')}.` : '') +
      '</p>',
  ];
  for (const update of incident.updates) {
    const status = SP_STATUS_WORDS[updateStatusOf(incident, update, incident.startedAtMs)];
    const at = new Date(update.atMs).toISOString();
    parts.push(
      `<p><strong>${html(status)}</strong> – <time datetime="${at}">${utcText(update.atMs)}</time><br>` +
        `${html(update.description).replace(/\r?\n/g, '<br>')}</p>`,
    );
  }
  if (incident.updates.length === 0) parts.push('<p>No update yet.</p>');
  return parts.join('\n');
}

/**
 * The RSS 2.0 or Atom 1.0 feed of `model`'s incidents (the last 90 days, newest first): channel/feed
 * title `{page name} - Incident History`, the page's description (or a sentence saying what the feed
 * holds), link to the page, the feed's self link (with `links.feedQuery`), `updated`/`lastBuildDate` the
 * latest change shown. Each item: title `{incident name} — {status}`, link and id/guid the incident's page
 * URL (RSS `guid isPermaLink="true"`), updated (Atom) / pubDate (RSS) its latest update, Atom `published` its start, content every update.
 * The same model and links always give the same bytes.
 */
export function renderFeed(model: StatusPageModel, format: FeedFormat, links: MachineLinks): string {
  const doc = model.page.doc;
  const pageUrl = pageUrlOf(links);
  const self = (name: string) => `${links.origin}${links.basePath}/${name}${links.feedQuery}`;
  let updated = model.page.updatedAtMs;
  for (const incident of model.incidents) updated = Math.max(updated, itemUpdatedAt(incident));
  const description = doc.description?.trim()
    ? doc.description
    : `Incidents of ${doc.name} in the last 90 days, newest first.`;
  const feed = new Feed({
    title: xmlJsText(`${doc.name} - Incident History`),
    description: xmlJsText(description),
    id: xmlJsText(pageUrl),
    link: pageUrl,
    language: 'en',
    updated: new Date(updated),
    generator: 'Outpost',
    // Atom wants an author for the feed when its entries have none: the page's owner, by the page's name.
    author: { name: xmlJsText(doc.name) },
    feedLinks: format === 'rss' ? { rss: self('feed.rss') } : { atom: self('feed.atom') },
  });
  const serviceNames = new Map<string, string>();
  for (const card of model.cards) for (const s of card.services) serviceNames.set(s.id, s.name);
  for (const incident of model.incidents) {
    const link = incidentUrlOf(links, incident.id);
    const content = itemContent(incident, serviceNames);
    const item: Item = {
      title: html(itemTitle(incident, model.generatedAtMs)),
      link,
      date: new Date(itemUpdatedAt(incident)),
    };
    if (format === 'rss') {
      item.description = content;
    } else {
      item.content = content;
      item.published = new Date(incident.startedAtMs);
    }
    feed.addItem(item);
  }
  return format === 'rss' ? feed.rss2() : feed.atom1();
}
