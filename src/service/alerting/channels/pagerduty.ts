import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { Nullable, strict } from '../../platform/http/schema-helpers.js';
import type { ChannelSender, NotificationDoc, ProviderConfig } from '../types.js';
import { channelModule, envBase, SecretString } from './channel.js';
import { guarded, requiredString } from './config.js';
import { sendRequest } from './http.js';
import { headline, kindOf, truncate } from './message.js';

/** PagerDuty Events API v2 base used when OUTPOST_PAGERDUTY_URL is not set. */
export const DEFAULT_PAGERDUTY_URL = 'https://events.pagerduty.com';

/** The PagerDuty base from the environment: `OUTPOST_PAGERDUTY_URL`, else DEFAULT_PAGERDUTY_URL. */
export function pagerdutyFromEnv(env: NodeJS.ProcessEnv): Pick<ProviderConfig, 'pagerdutyUrl'> {
  return { pagerdutyUrl: envBase(env, 'OUTPOST_PAGERDUTY_URL', DEFAULT_PAGERDUTY_URL) };
}

/** PagerDuty's limits: `dedup_key` 255 characters, `summary` 1 024. */
const MAX_DEDUP_KEY = 255;
const MAX_SUMMARY = 1_024;

/**
 * The key that ties an episode's events together, `outpost-{CHECK_ID}-{EPISODE_ID}`: a recovery
 * resolves what its failure triggered. Longer than `max` characters it becomes
 * `outpost-{sha256 hex}` (still stable per check and episode).
 */
export function episodeKey(v: NotificationDoc, max: number): string {
  const key = `outpost-${v.CHECK_ID}-${v.EPISODE_ID}`;
  if (key.length <= max) return key;
  return `outpost-${createHash('sha256').update(key).digest('hex')}`.slice(0, max);
}

/** PagerDuty Events API v2 event of a notification (trigger or resolve). */
export function pagerdutyEvent(v: NotificationDoc, routingKey: string): Record<string, unknown> {
  const kind = kindOf(v.ALERT_TYPE);
  const dedupKey = episodeKey(v, MAX_DEDUP_KEY);
  if (kind === 'recovery') return { routing_key: routingKey, event_action: 'resolve', dedup_key: dedupKey };
  const severity =
    kind === 'failure' || kind === 'test' || (kind === 'ssl' && (v.SSL_DAYS_REMAINING ?? 1) <= 0)
      ? 'critical'
      : 'warning';
  const details: Record<string, unknown> = {
    alert_type: v.ALERT_TYPE,
    check_id: v.CHECK_ID,
    check_name: v.CHECK_NAME,
    error: v.CHECK_ERROR_MESSAGE,
    response_time_ms: v.RESPONSE_TIME,
    status_code: v.API_CHECK_RESPONSE_STATUS_CODE,
    location: v.RUN_LOCATION,
    started_at: v.STARTED_AT,
    tags: v.TAGS,
    result_link: v.RESULT_LINK,
    ssl_days_remaining: v.SSL_DAYS_REMAINING,
    ssl_domain: v.SSL_CHECK_DOMAIN,
    is_reminder: v.IS_REMINDER,
    test: v.ALERT_TYPE === 'ALERT_TEST',
  };
  const timestamp = Number.isNaN(Date.parse(v.STARTED_AT)) ? new Date().toISOString() : v.STARTED_AT;
  return {
    routing_key: routingKey,
    event_action: 'trigger',
    dedup_key: dedupKey,
    client: 'Outpost',
    ...(v.RESULT_LINK && /^https?:\/\//i.test(v.RESULT_LINK) ? { client_url: v.RESULT_LINK } : {}),
    payload: {
      summary: truncate(headline(v), MAX_SUMMARY),
      source: v.RUN_LOCATION ?? 'outpost',
      severity,
      timestamp,
      component: v.CHECK_NAME,
      ...(v.GROUP_NAME ? { group: v.GROUP_NAME } : {}),
      class: v.CHECK_TYPE,
      custom_details: Object.fromEntries(Object.entries(details).filter(([, x]) => x !== null)),
    },
  };
}

/**
 * PAGERDUTY sender: `POST {pagerdutyUrl}/v2/enqueue`. Failures, degradations, SSL and test alerts
 * trigger (critical for failures and tests, warning for degraded and SSL, critical for an expired
 * certificate); recoveries resolve. Events of an episode share `dedup_key`. 202 DELIVERED; 400
 * FAILED; 429 and 5xx RETRY. The routing key (`serviceKey`) is kept out of answers and errors. Never throws.
 */
const sendPagerduty: ChannelSender = (notification, channel, providers, signal) =>
  guarded(async () => {
    const routingKey = requiredString(channel, 'serviceKey');
    return sendRequest({
      url: `${providers.pagerdutyUrl}/v2/enqueue`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Outpost-Alerts/1' },
      body: JSON.stringify(pagerdutyEvent(notification.variables, routingKey)),
      signal,
      secrets: [routingKey],
      idempotent: true,
      provider: 'PagerDuty',
      // The operator's endpoint (OUTPOST_PAGERDUTY_URL), not a user's URL.
      policy: null,
    });
  });

/** PAGERDUTY: events to the Events API v2 with the service's integration (routing) key, `serviceKey`. */
export const pagerdutyChannel = channelModule({
  type: 'PAGERDUTY',
  configSchema: Type.Object(
    {
      serviceKey: SecretString,
      account: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
      serviceName: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    },
    strict,
  ),
  secretFields: ['serviceKey'],
  send: sendPagerduty,
  providerEnv: pagerdutyFromEnv,
});
