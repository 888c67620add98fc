import type { NotificationDoc } from '../types.js';
import { escapeHtml, facts, headline, kindOf, plainHeadline, truncate } from './message.js';

/**
 * The messages of the chat and push channels (Microsoft Teams, Discord, Telegram, Mattermost, Google Chat,
 * ntfy, Gotify, Pushover, Matrix, Apprise), each in its provider's documented format. Every value of the
 * notification is user data: escaped for the format it goes into, cut to the provider's limits.
 */

/** Facts shown as fields: the headline already names the check and the error. */
function detailFacts(v: NotificationDoc): Array<[string, string]> {
  return facts(v).filter(([label]) => label !== 'Check' && label !== 'Result' && label !== 'Error');
}

/** The result link when it is an http(s) URL short enough for every provider, else null. */
export function resultLink(v: NotificationDoc): string | null {
  return v.RESULT_LINK && /^https?:\/\//i.test(v.RESULT_LINK) && v.RESULT_LINK.length <= 2_000
    ? v.RESULT_LINK
    : null;
}

/** The line a test notification adds. */
const TEST_LINE = 'This is a test notification sent from the channel settings.';

/** Escapes Markdown's control characters with a backslash (Mattermost, Discord, Gotify, ntfy). */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_~|<>[\]()#]/g, (c) => `\\${c}`);
}

/**
 * The message as Markdown: the headline in bold, the facts as a list, a link to the result. Cut to `max`
 * characters (Mattermost takes 16 383, Gotify and ntfy about 4 000).
 */
export function markdownMessage(v: NotificationDoc, max = 4_000): string {
  const lines = [`**${escapeMarkdown(headline(v))}**`];
  if (v.ALERT_TYPE === 'ALERT_TEST') lines.push('', TEST_LINE);
  const rows = detailFacts(v);
  if (rows.length > 0) lines.push('');
  for (const [label, value] of rows) lines.push(`- **${label}:** ${escapeMarkdown(value)}`);
  const link = resultLink(v);
  if (link) lines.push('', `[View the result](${link.replace(/[()\s]/g, encodeURIComponent)})`);
  return truncate(lines.join('\n'), max);
}

/** The message as plain text lines without the headline (Pushover, Apprise and ntfy put that in the title). */
export function plainDetails(v: NotificationDoc, max: number): string {
  const lines: string[] = [];
  if (v.ALERT_TYPE === 'ALERT_TEST') lines.push(TEST_LINE);
  for (const [label, value] of facts(v)) {
    if (label !== 'Check' && label !== 'Result') lines.push(`${label}: ${value}`);
  }
  return truncate(lines.join('\n') || plainHeadline(v), max);
}

/**
 * The message in the HTML subset Telegram (`parse_mode: HTML`) and Matrix (`org.matrix.custom.html`) both
 * render: `<b>`, `<a href>`, and `newline` between lines (`\n` for Telegram, `<br>` for Matrix).
 */
export function htmlChatMessage(v: NotificationDoc, newline: '\n' | '<br>', max = 4_000): string {
  const lines = [`<b>${escapeHtml(headline(v))}</b>`];
  if (v.ALERT_TYPE === 'ALERT_TEST') lines.push('', escapeHtml(TEST_LINE));
  const rows = detailFacts(v);
  if (rows.length > 0) lines.push('');
  for (const [label, value] of rows) lines.push(`<b>${escapeHtml(label)}:</b> ${escapeHtml(value)}`);
  const link = resultLink(v);
  if (link) lines.push('', `<a href="${escapeHtml(link)}">View the result</a>`);
  const html = lines.join(newline);
  // Cutting HTML could leave a tag open: too long, the message goes as its headline and link only.
  if (html.length <= max) return html;
  const short = `<b>${escapeHtml(truncate(headline(v), max - 200))}</b>`;
  return link ? `${short}${newline}<a href="${escapeHtml(link)}">View the result</a>` : short;
}

/** The message as plain text for clients that show no HTML (Matrix `body`). */
export function plainChatMessage(v: NotificationDoc, max = 4_000): string {
  const lines = [headline(v)];
  if (v.ALERT_TYPE === 'ALERT_TEST') lines.push('', TEST_LINE);
  const rows = detailFacts(v);
  if (rows.length > 0) lines.push('');
  for (const [label, value] of rows) lines.push(`${label}: ${value}`);
  const link = resultLink(v);
  if (link) lines.push('', `View the result: ${link}`);
  return truncate(lines.join('\n'), max);
}

/** A color per kind of alert, as 0xRRGGBB: red failures, amber degradations, green recoveries. */
const COLORS = { failure: 0xcf222e, degraded: 0xbf8700, recovery: 0x1a7f37, ssl: 0x8250df, test: 0x0969da };

/**
 * A Microsoft Teams message holding one Adaptive Card (1.4), as a Teams Workflows webhook ("Post to a channel
 * when a webhook request is received") and the older incoming webhooks take it: `{ type: 'message',
 * attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content }] }`. The card: the
 * headline, a fact set, and a button to the result.
 */
export function teamsMessage(v: NotificationDoc): Record<string, unknown> {
  const kind = kindOf(v.ALERT_TYPE);
  const style =
    kind === 'failure' ? 'attention' : kind === 'recovery' ? 'good' : kind === 'test' ? 'accent' : 'warning';
  const body: unknown[] = [
    {
      type: 'TextBlock',
      text: truncate(headline(v), 1_000),
      weight: 'Bolder',
      size: 'Medium',
      wrap: true,
      style: 'heading',
      color: style,
    },
  ];
  if (v.ALERT_TYPE === 'ALERT_TEST') body.push({ type: 'TextBlock', text: TEST_LINE, wrap: true });
  const rows = detailFacts(v).map(([title, value]) => ({ title, value: truncate(value, 500) }));
  if (rows.length > 0) body.push({ type: 'FactSet', facts: rows });
  const link = resultLink(v);
  const content: Record<string, unknown> = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: '1.4',
    body,
    ...(link ? { actions: [{ type: 'Action.OpenUrl', title: 'View the result', url: link }] } : {}),
  };
  return {
    type: 'message',
    attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content }],
  };
}

/**
 * A Discord execute-webhook body: `content` (the headline, ≤ 2 000 characters) and one embed (title ≤ 256,
 * up to 25 fields of ≤ 1 024), mentions off so a check name cannot ping `@everyone`.
 */
export function discordMessage(v: NotificationDoc): Record<string, unknown> {
  const link = resultLink(v);
  const fields = detailFacts(v)
    .slice(0, 25)
    .map(([name, value]) => ({ name, value: truncate(value, 1_024), inline: value.length <= 40 }));
  const description = [
    ...(v.ALERT_TYPE === 'ALERT_TEST' ? [TEST_LINE] : []),
    ...(v.CHECK_ERROR_MESSAGE ? [truncate(v.CHECK_ERROR_MESSAGE, 2_000)] : []),
  ].join('\n\n');
  const embed: Record<string, unknown> = {
    title: truncate(v.CHECK_NAME, 256),
    color: COLORS[kindOf(v.ALERT_TYPE)],
    fields,
    ...(description ? { description } : {}),
    ...(link ? { url: link } : {}),
    ...(Number.isNaN(Date.parse(v.STARTED_AT)) ? {} : { timestamp: new Date(v.STARTED_AT).toISOString() }),
    footer: { text: 'Outpost' },
  };
  return { content: truncate(headline(v), 2_000), embeds: [embed], allowed_mentions: { parse: [] } };
}

/**
 * A Google Chat incoming-webhook message: `text` (the fallback, Google Chat's own Markdown-like format) and
 * one card (`cardsV2`) with a header, the facts as decorated texts and a button to the result.
 */
export function googleChatMessage(v: NotificationDoc, cardId: string): Record<string, unknown> {
  const link = resultLink(v);
  const widgets: unknown[] = detailFacts(v).map(([label, value]) => ({
    decoratedText: { topLabel: label, text: escapeHtml(truncate(value, 1_000)), wrapText: true },
  }));
  if (v.ALERT_TYPE === 'ALERT_TEST') widgets.unshift({ textParagraph: { text: TEST_LINE } });
  if (link) {
    widgets.push({
      buttonList: { buttons: [{ text: 'View the result', onClick: { openLink: { url: link } } }] },
    });
  }
  return {
    text: truncate(`*${headline(v).replace(/[*_~`]/g, '')}*${link ? `\n${link}` : ''}`, 4_000),
    cardsV2: [
      {
        cardId: cardId.slice(0, 64),
        card: {
          header: { title: truncate(headline(v), 200), subtitle: 'Outpost' },
          sections: [{ widgets }],
        },
      },
    ],
  };
}

/** Apprise's notification type of an alert: `failure`, `warning`, `success` or `info`. */
export function appriseType(v: NotificationDoc): 'info' | 'success' | 'warning' | 'failure' {
  switch (kindOf(v.ALERT_TYPE)) {
    case 'failure':
      return 'failure';
    case 'recovery':
      return 'success';
    case 'test':
      return 'info';
    default:
      return 'warning';
  }
}

/** The 1–5 priority of ntfy (and, scaled, Gotify) an alert gets when the channel sets none: failures 4, others 3. */
export function defaultPriority(v: NotificationDoc): 1 | 2 | 3 | 4 | 5 {
  return kindOf(v.ALERT_TYPE) === 'failure' ? 4 : 3;
}

/** ntfy tags (emoji short codes shown before the title) of an alert. */
export function ntfyTags(v: NotificationDoc): string[] {
  const kind = kindOf(v.ALERT_TYPE);
  const emoji = {
    failure: 'x',
    degraded: 'warning',
    recovery: 'white_check_mark',
    ssl: 'lock',
    test: 'test_tube',
  }[kind];
  return [emoji, 'outpost', ...v.TAGS.slice(0, 5).map((t) => t.slice(0, 50))];
}
