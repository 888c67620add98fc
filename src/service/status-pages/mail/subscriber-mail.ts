import Handlebars from 'handlebars';
import type { SubscriberMailDoc } from '../admin/subscribers.js';

/** Escapes text for HTML (handlebars' escaping: `& < > " ' \` =`). */
const escapeHtml = (text: string): string => Handlebars.Utils.escapeExpression(text);

/** The absolute links a subscriber mail carries, built when it is sent. */
export type SubscriberMailLinks = {
  /** The status page. */
  page: string;
  /** The one-click unsubscribe URL (`…/unsubscribe?token=…`), also in `List-Unsubscribe`. */
  unsubscribe: string;
  /** Confirmation mail: the confirm link (`…/subscribe/confirm?token=…`). */
  confirm?: string;
  /** Update mail: the incident's page on the status page. */
  incident?: string;
};

/** A subscriber mail ready for nodemailer: subject, text and HTML bodies, and its extra headers. */
export type SubscriberMail = {
  subject: string;
  text: string;
  html: string;
  /** `List-Unsubscribe`, `List-Unsubscribe-Post` (RFC 8058) and `X-Outpost-Status-Page`. */
  headers: Record<string, string>;
};

/** Statuspage-like words of an update status. */
const STATUS_WORDS: Record<string, string> = {
  INVESTIGATING: 'Investigating',
  IDENTIFIED: 'Identified',
  MONITORING: 'Monitoring',
  RESOLVED: 'Resolved',
  MAINTENANCE: 'Maintenance',
};

/** Words of an incident impact. */
const IMPACT_WORDS: Record<string, string> = {
  MAJOR: 'Major outage',
  MINOR: 'Partial outage',
  MAINTENANCE: 'Maintenance',
};

/** A header value on one line (user text must not start a header of its own). */
function oneLine(text: string, max = 250): string {
  const flat = text.replace(/[\r\n\t]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `24 Nov 2026, 08:15 UTC`. */
function when(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const month = MONTHS[d.getUTCMonth()];
  const hh = String(d.getUTCHours()).padStart(2, '0');
  const mm = String(d.getUTCMinutes()).padStart(2, '0');
  return `${d.getUTCDate()} ${month} ${d.getUTCFullYear()}, ${hh}:${mm} UTC`;
}

/** The HTML frame of every mail: one column, system fonts, dark text on white (contrast > 7:1). */
function frame(title: string, body: string, footer: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head>
<body style="margin:0;padding:24px;background:#ffffff;color:#111827;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:16px;line-height:1.5">
<div style="max-width:600px;margin:0 auto">
${body}
<hr style="border:0;border-top:1px solid #d1d5db;margin:24px 0">
<p style="font-size:14px;color:#374151">${footer}</p>
</div></body></html>
`;
}

/** A link styled as a button (a real link: mail clients run no forms). */
function button(href: string, label: string): string {
  return `<p><a href="${escapeHtml(href)}" style="display:inline-block;padding:10px 16px;background:#1d4ed8;color:#ffffff;text-decoration:underline;border-radius:6px">${escapeHtml(label)}</a></p>`;
}

/**
 * The mail of a subscriber notification: the confirmation (double opt-in) or an incident update. Every
 * field from the document is user data: escaped in HTML, kept on one line in headers. Both bodies carry
 * the unsubscribe link; the headers carry it for one-click unsubscribe (RFC 8058).
 */
export function subscriberMail(doc: SubscriberMailDoc, links: SubscriberMailLinks): SubscriberMail {
  const headers = {
    'List-Unsubscribe': `<${links.unsubscribe}>`,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    'X-Outpost-Status-Page': doc.pageId,
  };
  if (doc.kind === 'confirmation') {
    const confirm = links.confirm ?? links.page;
    const subject = oneLine(`Confirm your subscription to ${doc.pageName}`);
    const text = [
      `You asked to receive incident updates from the ${doc.pageName} status page by email.`,
      '',
      `Confirm your subscription (the link holds for 7 days):`,
      confirm,
      '',
      'If you did not ask for this, ignore this mail: you will get nothing else.',
      '',
      `Status page: ${links.page}`,
    ].join('\n');
    const html = frame(
      subject,
      `<h1 style="font-size:20px;margin:0 0 16px">${escapeHtml(`Confirm your subscription to ${doc.pageName}`)}</h1>
<p>You asked to receive incident updates from the ${escapeHtml(doc.pageName)} status page by email.</p>
${button(confirm, 'Confirm subscription')}
<p>Or open this link (it holds for 7 days): <a href="${escapeHtml(confirm)}" style="color:#1d4ed8">${escapeHtml(confirm)}</a></p>
<p>If you did not ask for this, ignore this mail: you will get nothing else.</p>`,
      `<a href="${escapeHtml(links.page)}" style="color:#1d4ed8">${escapeHtml(doc.pageName)} status page</a>`,
    );
    return { subject, text, html, headers };
  }

  const status = STATUS_WORDS[doc.status] ?? doc.status;
  const impact = IMPACT_WORDS[doc.impact] ?? doc.impact;
  const incident = links.incident ?? links.page;
  const subject = oneLine(`[${doc.pageName}] ${doc.resolved ? 'Resolved' : status}: ${doc.incidentName}`);
  const affected = doc.serviceNames.length > 0 ? doc.serviceNames.join(', ') : null;
  const text = [
    `${doc.incidentName}`,
    `${status} · ${impact}${affected ? ` · Affects: ${affected}` : ''}`,
    when(doc.updateDate),
    '',
    doc.description,
    '',
    `Follow the incident: ${incident}`,
    '',
    `You get this mail because you subscribed to the ${doc.pageName} status page (${links.page}).`,
    `Unsubscribe: ${links.unsubscribe}`,
  ].join('\n');
  const paragraphs = doc.description
    .split(/\r?\n\s*\r?\n/)
    .map((p) => `<p>${escapeHtml(p).replace(/\r?\n/g, '<br>')}</p>`)
    .join('\n');
  const html = frame(
    subject,
    `<p style="font-size:14px;color:#374151;margin:0">${escapeHtml(doc.pageName)}</p>
<h1 style="font-size:20px;margin:4px 0 8px">${escapeHtml(doc.incidentName)}</h1>
<p style="margin:0 0 16px"><strong>${escapeHtml(status)}</strong> · ${escapeHtml(impact)}${
      affected ? ` · Affects: ${escapeHtml(affected)}` : ''
    }<br><span style="color:#374151">${escapeHtml(when(doc.updateDate))}</span></p>
${paragraphs}
${button(incident, 'View the incident')}`,
    `You get this mail because you subscribed to the <a href="${escapeHtml(links.page)}" style="color:#1d4ed8">${escapeHtml(
      doc.pageName,
    )} status page</a>. <a href="${escapeHtml(links.unsubscribe)}" style="color:#1d4ed8">Unsubscribe</a>`,
  );
  return { subject, text, html, headers };
}
