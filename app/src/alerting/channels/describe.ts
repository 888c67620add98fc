/**
 * What an alert channel is and says: its types, their names, and the short descriptions the list and its
 * page show.
 */
import type { AlertChannel, AlertChannelType } from '../../api/schemas.js';

/** The mask the API answers for a stored secret; sent back, it keeps the stored value. */
export const MASK = '*****';

/** The channel types in the order the form offers them, with their names. */
const TYPES: readonly { type: AlertChannelType; label: string }[] = [
  { type: 'EMAIL', label: 'Email' },
  { type: 'SLACK', label: 'Slack' },
  { type: 'WEBHOOK', label: 'Webhook' },
  { type: 'PAGERDUTY', label: 'PagerDuty' },
  { type: 'OPSGENIE', label: 'Opsgenie' },
  { type: 'SMS', label: 'SMS' },
  { type: 'CALL', label: 'Phone call' },
];

/** The channel types as the options of the form's Type select. */
export const TYPE_OPTIONS = TYPES.map((t) => ({ value: t.type, label: t.label }));

/** The name of a channel type ("Email", "Phone call"). */
export function typeLabel(type: string): string {
  return TYPES.find((t) => t.type === type)?.label ?? type;
}

/** What each alert type means (docs/alerting.md, "Alerts"). */
export const ALERT_TYPE_LABELS: Record<string, string> = {
  ALERT_FAILURE: 'Failing',
  ALERT_FAILURE_REMAIN: 'Still failing (reminder)',
  ALERT_FAILURE_DEGRADED: 'Failing, now degraded',
  ALERT_DEGRADED: 'Degraded',
  ALERT_DEGRADED_REMAIN: 'Still degraded (reminder)',
  ALERT_DEGRADED_FAILURE: 'Degraded, now failing',
  ALERT_RECOVERY: 'Recovered',
  ALERT_DEGRADED_RECOVERY: 'Recovered from degraded',
  ALERT_SSL: 'SSL certificate expiry',
  ALERT_TEST: 'Test notification',
};

/** A webhook header or query parameter (`locked` kept as the API answered it). */
export type KeyValue = { key: string; value: string; locked?: boolean };

/** The config of a channel as the form edits it: every field of every type, as text. */
export type ConfigState = Record<string, string>;

/** A host name from a URL, or the text itself when it is not one. */
function hostOf(url: unknown): string {
  if (typeof url !== 'string') return '';
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** A short description of where a channel sends, from what the API answers (secrets are masked there). */
export function targetOf(channel: AlertChannel): string {
  const c = channel.config as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' && v ? v : '');
  switch (channel.type) {
    case 'EMAIL':
      return text(c.address);
    case 'SLACK':
      return [text(c.channel), hostOf(c.url)].filter(Boolean).join(' on ');
    case 'WEBHOOK':
      return `${text(c.name)} (${text(c.method) || 'POST'} ${hostOf(c.url)})`;
    case 'SMS':
    case 'CALL':
      return `${text(c.name)} (${text(c.number)})`;
    case 'PAGERDUTY':
      return text(c.serviceName) || text(c.account) || 'PagerDuty service';
    case 'OPSGENIE':
      return `${text(c.name)} (${text(c.region)}, ${text(c.priority)})`;
    default:
      return '';
  }
}

/** Which changes a channel hears about, as words. */
export function sendsOf(channel: AlertChannel): string {
  const parts: string[] = [];
  if (channel.sendFailure) parts.push('failures');
  if (channel.sendDegraded) parts.push('degradations');
  if (channel.sendRecovery) parts.push('recoveries');
  if (channel.sslExpiry) parts.push(`SSL expiry (${channel.sslExpiryThreshold} days before)`);
  return parts.length ? parts.join(', ') : 'nothing';
}

/** The words of each config field (docs/api.md, "Alert channel"). */
export const CONFIG_LABELS: Record<string, string> = {
  address: 'Email address',
  url: 'URL',
  channel: 'Channel',
  name: 'Name',
  method: 'Method',
  headers: 'Headers',
  queryParameters: 'Query parameters',
  template: 'Body template',
  webhookSecret: 'Signing secret',
  webhookType: 'Webhook type',
  number: 'Phone number',
  serviceKey: 'Integration key',
  account: 'Account',
  serviceName: 'Service name',
  apiKey: 'API key',
  region: 'Region',
  priority: 'Priority',
};
