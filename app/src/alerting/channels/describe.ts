/**
 * What an alert channel is and says: its types, their names, and the short descriptions the list and its
 * page show.
 */
import type { AlertChannel, AlertChannelType } from '../../api/schemas.js';

/** The mask the API answers for a stored secret; sent back, it keeps the stored value. */
export const MASK = '*****';

/**
 * The `webhookType`s of a WEBHOOK channel the form offers as kinds of their own (the hosted API's names for
 * these chat tools; the service gives each its provider's body: docs/alerting.md, "Chat and push channels").
 */
export const WEBHOOK_PRESETS = ['WEBHOOK_MSTEAMS', 'WEBHOOK_DISCORD', 'WEBHOOK_TELEGRAM'] as const;

/** What the form's Type select picks: a channel type, or a WEBHOOK preset. */
export type ChannelKind = AlertChannelType | (typeof WEBHOOK_PRESETS)[number];

/** The kinds in the order the form offers them, with their names. */
const KINDS: readonly { kind: ChannelKind; label: string }[] = [
  { kind: 'EMAIL', label: 'Email' },
  { kind: 'SLACK', label: 'Slack' },
  { kind: 'WEBHOOK_MSTEAMS', label: 'Microsoft Teams' },
  { kind: 'WEBHOOK_DISCORD', label: 'Discord' },
  { kind: 'WEBHOOK_TELEGRAM', label: 'Telegram' },
  { kind: 'MATTERMOST', label: 'Mattermost' },
  { kind: 'GOOGLE_CHAT', label: 'Google Chat' },
  { kind: 'NTFY', label: 'ntfy' },
  { kind: 'GOTIFY', label: 'Gotify' },
  { kind: 'PUSHOVER', label: 'Pushover' },
  { kind: 'MATRIX', label: 'Matrix' },
  { kind: 'APPRISE', label: 'Apprise' },
  { kind: 'WEBHOOK', label: 'Webhook' },
  { kind: 'PAGERDUTY', label: 'PagerDuty' },
  { kind: 'OPSGENIE', label: 'Opsgenie' },
  { kind: 'SMS', label: 'SMS' },
  { kind: 'CALL', label: 'Phone call' },
];

/** The kinds as the options of the form's Type select. */
export const TYPE_OPTIONS = KINDS.map((k) => ({ value: k.kind, label: k.label }));

/** The name of a kind or channel type ("Email", "Microsoft Teams", "Phone call"). */
export function typeLabel(kind: string): string {
  return KINDS.find((k) => k.kind === kind)?.label ?? kind;
}

/** Whether `kind` is a WEBHOOK preset. */
export function isPreset(kind: string): kind is (typeof WEBHOOK_PRESETS)[number] {
  return (WEBHOOK_PRESETS as readonly string[]).includes(kind);
}

/** The kind of a channel: its WEBHOOK preset (by `webhookType`), else its type. */
export function kindOf(channel: Pick<AlertChannel, 'type' | 'config'>): ChannelKind {
  const webhookType = (channel.config as Record<string, unknown>).webhookType;
  if (channel.type === 'WEBHOOK' && typeof webhookType === 'string' && isPreset(webhookType))
    return webhookType;
  return channel.type;
}

/** The API's channel type of a kind: WEBHOOK for the presets. */
export function typeOfKind(kind: ChannelKind): AlertChannelType {
  return isPreset(kind) ? 'WEBHOOK' : kind;
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
  switch (kindOf(channel)) {
    case 'EMAIL':
      return text(c.address);
    case 'SLACK':
      return [text(c.channel), hostOf(c.url)].filter(Boolean).join(' on ');
    case 'MATTERMOST':
      return [text(c.channel), hostOf(c.url)].filter(Boolean).join(' on ');
    case 'GOOGLE_CHAT':
      return `Google Chat space (${hostOf(c.url)})`;
    case 'WEBHOOK':
      return `${text(c.name)} (${text(c.method) || 'POST'} ${hostOf(c.url)})`;
    case 'WEBHOOK_MSTEAMS':
    case 'WEBHOOK_DISCORD':
    case 'WEBHOOK_TELEGRAM':
      return text(c.name);
    case 'NTFY':
      return `${text(c.name)} (${text(c.topic)} on ${hostOf(c.url)})`;
    case 'GOTIFY':
    case 'APPRISE':
      return `${text(c.name)} (${hostOf(c.url)})`;
    case 'MATRIX':
      return `${text(c.name)} (${text(c.roomId)})`;
    case 'PUSHOVER':
      return text(c.name);
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
  chatId: 'Chat ID',
  botToken: 'Bot token',
  username: 'Posted as',
  topic: 'Topic',
  accessToken: 'Access token',
  token: 'Application token',
  apiToken: 'API token',
  userKey: 'User or group key',
  device: 'Device',
  homeserverUrl: 'Homeserver URL',
  roomId: 'Room ID',
  key: 'Configuration key',
  urls: 'Apprise URLs',
  tag: 'Tag',
};
