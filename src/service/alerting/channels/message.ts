import type { AlertType, NotificationDoc } from '../types.js';

/** Longest error message quoted in a text, characters (a check's error can be long; a message is not a log). */
const MAX_ERROR_CHARS = 1_000;
/** Longest SMS text preferred, characters: one GSM-7 segment. */
export const SMS_MAX_CHARS = 160;
/** Longest text a call reads out, characters (about a minute of speech). */
const CALL_MAX_CHARS = 600;

/** How an alert type reads and what it means for providers that open and close incidents. */
type Kind = 'failure' | 'degraded' | 'recovery' | 'ssl' | 'test';

/** What an alert type is, for senders: PagerDuty and Opsgenie trigger on problems and resolve on recoveries. */
export function kindOf(type: AlertType | 'ALERT_TEST'): Kind {
  switch (type) {
    case 'ALERT_FAILURE':
    case 'ALERT_FAILURE_REMAIN':
    case 'ALERT_DEGRADED_FAILURE':
      return 'failure';
    case 'ALERT_DEGRADED':
    case 'ALERT_DEGRADED_REMAIN':
    case 'ALERT_FAILURE_DEGRADED':
      return 'degraded';
    case 'ALERT_RECOVERY':
    case 'ALERT_DEGRADED_RECOVERY':
      return 'recovery';
    case 'ALERT_SSL':
      return 'ssl';
    default:
      return 'test';
  }
}

/**
 * `text` cut to `max` UTF-16 units with `…` when cut, never splitting a surrogate pair (an emoji).
 * Works on the first `max` units only, so a huge text costs little.
 */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, Math.max(0, max - 1));
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/** The error of the run in words: its message, else its HTTP status; null when there is none. */
function problemOf(v: NotificationDoc): string | null {
  if (v.CHECK_ERROR_MESSAGE)
    return truncate(v.CHECK_ERROR_MESSAGE.replace(/\s+/g, ' ').trim(), MAX_ERROR_CHARS);
  if (v.API_CHECK_RESPONSE_STATUS_CODE !== null) {
    const text = v.API_CHECK_RESPONSE_STATUS_TEXT ? ` ${v.API_CHECK_RESPONSE_STATUS_TEXT}` : '';
    return `got HTTP ${v.API_CHECK_RESPONSE_STATUS_CODE}${text}`;
  }
  return null;
}

function reminderOf(v: NotificationDoc): string {
  return v.IS_REMINDER ? ` (reminder ${v.REMINDER_SEQUENCE})` : '';
}

/**
 * The one-line summary without emoji, e.g. `checkout API is failing in eu-west-1: expected status 200,
 * got 503`, `checkout API recovered in eu-west-1`, `This is a test alert: …`.
 */
export function plainHeadline(v: NotificationDoc): string {
  const name = v.CHECK_NAME;
  const where = v.RUN_LOCATION ? ` in ${v.RUN_LOCATION}` : '';
  const problem = problemOf(v);
  const because = problem ? `: ${problem}` : '';
  switch (v.ALERT_TYPE) {
    case 'ALERT_FAILURE':
      return `${name} is failing${where}${because}`;
    case 'ALERT_FAILURE_REMAIN':
      return `${name} is still failing${where}${reminderOf(v)}${because}`;
    case 'ALERT_DEGRADED_FAILURE':
      return `${name} went from degraded to failing${where}${because}`;
    case 'ALERT_DEGRADED':
      return `${name} is degraded${where}${because}`;
    case 'ALERT_DEGRADED_REMAIN':
      return `${name} is still degraded${where}${reminderOf(v)}${because}`;
    case 'ALERT_FAILURE_DEGRADED':
      return `${name} went from failing to degraded${where}${because}`;
    case 'ALERT_RECOVERY':
      return `${name} recovered${where}`;
    case 'ALERT_DEGRADED_RECOVERY':
      return `${name} is no longer degraded${where}`;
    case 'ALERT_SSL': {
      const domain = v.SSL_CHECK_DOMAIN ?? name;
      const days = v.SSL_DAYS_REMAINING;
      if (days === null) return `The SSL certificate of ${domain} expires soon (${name})`;
      if (days <= 0) return `The SSL certificate of ${domain} has expired (${name})`;
      return `The SSL certificate of ${domain} expires in ${days} day${days === 1 ? '' : 's'} (${name})`;
    }
    default:
      return `This is a test alert from Outpost for ${name}; nothing is failing`;
  }
}

const EMOJI: Record<Kind, string> = { failure: '❌', degraded: '⚠️', recovery: '✅', ssl: '🔒', test: '🧪' };

/** The summary with its emoji: `❌ checkout API is failing in eu-west-1: expected status 200, got 503`. */
export function headline(v: NotificationDoc): string {
  return `${EMOJI[kindOf(v.ALERT_TYPE)]} ${plainHeadline(v)}`;
}

/** Labelled facts of the notification, in display order, empty ones left out. */
export function facts(v: NotificationDoc): Array<[string, string]> {
  const rows: Array<[string, string | null]> = [
    ['Check', v.CHECK_NAME],
    ['Check type', v.CHECK_TYPE],
    ['Group', v.GROUP_NAME],
    ['Location', v.RUN_LOCATION],
    ['Error', problemOf(v)],
    ['Response time', v.RESPONSE_TIME === null ? null : `${Math.round(v.RESPONSE_TIME)} ms`],
    ['Started at', v.STARTED_AT],
    ['Tags', v.TAGS.length > 0 ? v.TAGS.join(', ') : null],
    ['SSL domain', v.SSL_CHECK_DOMAIN],
    ['Result', v.RESULT_LINK],
  ];
  return rows.filter((r): r is [string, string] => r[1] !== null && r[1] !== '');
}

/** Plain text body (email text part, PagerDuty/Opsgenie description). */
export function textMessage(v: NotificationDoc): string {
  const lines = [headline(v), ''];
  if (v.ALERT_TYPE === 'ALERT_TEST')
    lines.push('This is a test notification sent from the channel settings.', '');
  for (const [label, value] of facts(v)) lines.push(`${label}: ${value}`);
  if (v.CHECK_DESCRIPTION) lines.push('', truncate(v.CHECK_DESCRIPTION, MAX_ERROR_CHARS));
  return lines.join('\n');
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** HTML body (email HTML part): every value escaped; links only for http(s) result links. */
export function htmlMessage(v: NotificationDoc): string {
  const rows = facts(v)
    .map(([label, value]) => {
      const shown =
        label === 'Result' && /^https?:\/\//i.test(value)
          ? `<a href="${escapeHtml(value)}">${escapeHtml(value)}</a>`
          : escapeHtml(value);
      return `<tr><th align="left" style="padding:2px 12px 2px 0">${escapeHtml(label)}</th><td>${shown}</td></tr>`;
    })
    .join('');
  const test =
    v.ALERT_TYPE === 'ALERT_TEST' ? '<p>This is a test notification sent from the channel settings.</p>' : '';
  const description = v.CHECK_DESCRIPTION
    ? `<p>${escapeHtml(truncate(v.CHECK_DESCRIPTION, MAX_ERROR_CHARS))}</p>`
    : '';
  return `<!doctype html><html><body><h2>${escapeHtml(headline(v))}</h2>${test}<table>${rows}</table>${description}</body></html>`;
}

/** Escapes text for Slack mrkdwn (`&`, `<`, `>` are its only control characters). */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Slack `text` (the notification fallback) and Block Kit `blocks`; section texts stay under Slack's 3 000. */
export function slackMessage(v: NotificationDoc): { text: string; blocks: unknown[] } {
  const text = truncate(headline(v), 2_900);
  const fields = facts(v)
    .filter(([label]) => label !== 'Result' && label !== 'Error' && label !== 'Check')
    .slice(0, 10)
    .map(([label, value]) => ({
      type: 'mrkdwn',
      text: truncate(`*${label}*\n${escapeSlack(value)}`, 1_900),
    }));
  const blocks: unknown[] = [
    { type: 'section', text: { type: 'mrkdwn', text: truncate(`*${escapeSlack(headline(v))}*`, 2_900) } },
  ];
  if (fields.length > 0) blocks.push({ type: 'section', fields });
  if (v.RESULT_LINK && /^https?:\/\//i.test(v.RESULT_LINK) && v.RESULT_LINK.length <= 3_000) {
    blocks.push({
      type: 'actions',
      elements: [{ type: 'button', text: { type: 'plain_text', text: 'View result' }, url: v.RESULT_LINK }],
    });
  }
  return { text, blocks };
}

/** SMS text without emoji (one would make the whole message UCS-2: 70 characters a segment), ≤ 160 characters. */
export function smsMessage(v: NotificationDoc): string {
  const prefix = v.ALERT_TYPE === 'ALERT_TEST' ? 'Outpost test' : 'Outpost';
  return truncate(`${prefix}: ${plainHeadline(v)}`, SMS_MAX_CHARS);
}

/** Escapes text for XML content, dropping characters XML 1.0 does not allow. */
export function escapeXml(text: string): string {
  return (
    text
      // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters XML forbids.
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
      .replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
  );
}

/** TwiML a call reads out: `<Response><Say>…</Say></Response>`, the text XML-escaped, said twice. */
export function callTwiml(v: NotificationDoc): string {
  const prefix = v.ALERT_TYPE === 'ALERT_TEST' ? 'This is a test call from Outpost.' : 'Alert from Outpost.';
  const said = escapeXml(truncate(`${prefix} ${plainHeadline(v)}.`, CALL_MAX_CHARS));
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Say>${said}</Say><Pause length="1"/><Say>${said}</Say></Response>`;
}
