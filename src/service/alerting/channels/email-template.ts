import type { NotificationDoc } from '../types.js';
import { resultLink } from './chat.js';
import { escapeHtml, facts, headline, kindOf, truncate } from './message.js';

/**
 * The alert e-mail: the same layout family as the status-page subscriber mails (one 600 px column, system
 * fonts, dark text on white, a link styled as a button, a footer under a rule). Times are in the service's time
 * zone (`OUTPOST_TIME_ZONE`, default UTC) and say which. Every value is user data, escaped in the HTML part.
 */

/** Longest description quoted, characters. */
const MAX_DESCRIPTION = 1_000;

/**
 * `24 Nov 2026, 05:00:05 CET` of an ISO 8601 time in `timeZone` (an IANA name; default and fallback UTC), the
 * zone's short name last; the text itself when it is not a time.
 */
export function mailTime(iso: string, timeZone = 'UTC'): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const format = (zone: string) =>
    new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    }).format(d);
  try {
    return format(timeZone);
  } catch {
    return format('UTC');
  }
}

/** The footer's sentence on times: which zone they are in. */
function timesIn(timeZone: string | undefined): string {
  return `Times are in ${timeZone ?? 'UTC'}.`;
}

/** Check types whose runs keep screenshots (docs/checks.md, "Browser check results"). */
const SCREENSHOT_TYPES = new Set(['BROWSER', 'MULTI_STEP', 'PLAYWRIGHT']);

/** Whether the mail points to a failure screenshot: a failing browser-like check with a result page. */
export function hasScreenshot(v: NotificationDoc): boolean {
  const kind = kindOf(v.ALERT_TYPE);
  return (
    SCREENSHOT_TYPES.has(v.CHECK_TYPE) &&
    (kind === 'failure' || kind === 'degraded') &&
    resultLink(v) !== null
  );
}

/** The mail's facts: the notification's, the start time in words with its zone, no result link (a button). */
function mailFacts(v: NotificationDoc, timeZone: string | undefined): Array<[string, string]> {
  return facts(v)
    .filter(([label]) => label !== 'Result')
    .map(([label, value]) => [label, label === 'Started at' ? mailTime(value, timeZone) : value]);
}

/** The accent of the headline's bar: red failures, amber degradations, green recoveries (contrast > 4.5:1). */
const ACCENTS = {
  failure: '#b91c1c',
  degraded: '#92400e',
  recovery: '#166534',
  ssl: '#6b21a8',
  test: '#1d4ed8',
};

/** The plain-text part; times in `timeZone` (IANA, default UTC). */
export function alertMailText(v: NotificationDoc, timeZone?: string): string {
  const lines = [headline(v), ''];
  if (v.ALERT_TYPE === 'ALERT_TEST')
    lines.push('This is a test notification sent from the channel settings.', '');
  for (const [label, value] of mailFacts(v, timeZone)) lines.push(`${label}: ${value}`);
  if (v.CHECK_DESCRIPTION) lines.push('', truncate(v.CHECK_DESCRIPTION, MAX_DESCRIPTION));
  const link = resultLink(v);
  if (link) {
    lines.push('', `Result: ${link}`);
    if (hasScreenshot(v)) lines.push(`Screenshot of the failure: on the result page, ${link}`);
  }
  lines.push('', timesIn(timeZone), 'You get this mail because this address is an alert channel in Outpost.');
  return lines.join('\n');
}

/** The HTML part, in the subscriber mails' frame; times in `timeZone` (IANA, default UTC). */
export function alertMailHtml(v: NotificationDoc, timeZone?: string): string {
  const title = headline(v);
  const accent = ACCENTS[kindOf(v.ALERT_TYPE)];
  const rows = mailFacts(v, timeZone)
    .map(
      ([label, value]) =>
        `<tr><th align="left" valign="top" style="padding:4px 16px 4px 0;font-weight:600;white-space:nowrap">${escapeHtml(
          label,
        )}</th><td style="padding:4px 0;word-break:break-word">${escapeHtml(value)}</td></tr>`,
    )
    .join('\n');
  const test =
    v.ALERT_TYPE === 'ALERT_TEST' ? '<p>This is a test notification sent from the channel settings.</p>' : '';
  const description = v.CHECK_DESCRIPTION
    ? `<p style="color:#374151">${escapeHtml(truncate(v.CHECK_DESCRIPTION, MAX_DESCRIPTION))}</p>`
    : '';
  const link = resultLink(v);
  const actions = link
    ? `<p><a href="${escapeHtml(link)}" style="display:inline-block;padding:10px 16px;background:#1d4ed8;color:#ffffff;text-decoration:underline;border-radius:6px">View the result</a></p>
${
  hasScreenshot(v)
    ? `<p>The screenshot of the failure is on the result page, with the run's steps and trace.</p>\n`
    : ''
}<p style="font-size:14px">Or open this link: <a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head>
<body style="margin:0;padding:24px;background:#ffffff;color:#111827;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:16px;line-height:1.5">
<div style="max-width:600px;margin:0 auto">
<p style="font-size:14px;color:#374151;margin:0">Outpost alert</p>
<h1 style="font-size:20px;margin:4px 0 16px;padding-left:12px;border-left:4px solid ${accent}">${escapeHtml(title)}</h1>
${test}<table role="presentation" style="border-collapse:collapse;margin:0 0 16px">
${rows}
</table>
${description}
${actions}
<hr style="border:0;border-top:1px solid #d1d5db;margin:24px 0">
<p style="font-size:14px;color:#374151">${escapeHtml(timesIn(timeZone))} You get this mail because this address is an alert channel in Outpost.</p>
</div></body></html>
`;
}
