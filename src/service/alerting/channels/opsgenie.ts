import { Type } from '@sinclair/typebox';
import { StringEnum, strict } from '../../platform/http/schema-helpers.js';
import type { ChannelSender, NotificationDoc, ProviderConfig } from '../types.js';
import { ChannelName, channelModule, envBase, SecretString } from './channel.js';
import { guarded, requiredString } from './config.js';
import { sendRequest } from './http.js';
import { headline, kindOf, plainHeadline, textMessage, truncate } from './message.js';
import { episodeKey } from './pagerduty.js';

/** Opsgenie API base (US region) used when OUTPOST_OPSGENIE_URL is not set. */
export const DEFAULT_OPSGENIE_URL = 'https://api.opsgenie.com';
/** Opsgenie API base (EU region) used when OUTPOST_OPSGENIE_EU_URL is not set. */
export const DEFAULT_OPSGENIE_EU_URL = 'https://api.eu.opsgenie.com';

/**
 * The Opsgenie bases per region from the environment: `OUTPOST_OPSGENIE_URL` (US) and
 * `OUTPOST_OPSGENIE_EU_URL`, else DEFAULT_OPSGENIE_URL and DEFAULT_OPSGENIE_EU_URL.
 */
export function opsgenieFromEnv(env: NodeJS.ProcessEnv): Pick<ProviderConfig, 'opsgenieUrl'> {
  return {
    opsgenieUrl: {
      US: envBase(env, 'OUTPOST_OPSGENIE_URL', DEFAULT_OPSGENIE_URL),
      EU: envBase(env, 'OUTPOST_OPSGENIE_EU_URL', DEFAULT_OPSGENIE_EU_URL),
    },
  };
}

/** Opsgenie's limits: message 130, alias 512, description 15 000 characters; 20 tags of 50. */
const MAX_MESSAGE = 130;
const MAX_ALIAS = 512;
const MAX_DESCRIPTION = 15_000;
const MAX_TAGS = 20;
const MAX_TAG = 50;
/** Opsgenie keeps detail values up to 8 000 characters in all; each is cut well below. */
const MAX_DETAIL = 500;

/** The body of an Opsgenie create-alert request. */
export function opsgenieAlert(v: NotificationDoc, priority: string): Record<string, unknown> {
  const details: Record<string, string> = {};
  const add = (name: string, value: unknown) => {
    if (value !== null && value !== undefined && value !== '')
      details[name] = truncate(String(value), MAX_DETAIL);
  };
  add('alertType', v.ALERT_TYPE);
  add('checkId', v.CHECK_ID);
  add('checkType', v.CHECK_TYPE);
  add('location', v.RUN_LOCATION);
  add('error', v.CHECK_ERROR_MESSAGE);
  add('responseTimeMs', v.RESPONSE_TIME);
  add('resultLink', v.RESULT_LINK);
  add('startedAt', v.STARTED_AT);
  add('sslDaysRemaining', v.SSL_DAYS_REMAINING);
  add('sslDomain', v.SSL_CHECK_DOMAIN);
  if (v.ALERT_TYPE === 'ALERT_TEST') add('test', 'true');
  return {
    message: truncate(headline(v), MAX_MESSAGE),
    alias: episodeKey(v, MAX_ALIAS),
    description: truncate(textMessage(v), MAX_DESCRIPTION),
    tags: v.TAGS.slice(0, MAX_TAGS).map((t) => truncate(t, MAX_TAG)),
    priority,
    entity: truncate(v.CHECK_NAME, 512),
    source: 'Outpost',
    details,
  };
}

/**
 * OPSGENIE sender: failures, degradations, SSL and test alerts create an alert (`POST
 * {base}/v2/alerts`, alias `outpost-{CHECK_ID}-{EPISODE_ID}`); recoveries close it by alias
 * (`POST {base}/v2/alerts/{alias}/close?identifierType=alias`). `base` is the region's
 * (`region` US or EU). `Authorization: GenieKey {apiKey}`; the key is kept out of answers and
 * errors. 202 DELIVERED. Never throws.
 */
const sendOpsgenie: ChannelSender = (notification, channel, providers, signal) =>
  guarded(async () => {
    const apiKey = requiredString(channel, 'apiKey');
    const base = channel.config.region === 'EU' ? providers.opsgenieUrl.EU : providers.opsgenieUrl.US;
    const priority = typeof channel.config.priority === 'string' ? channel.config.priority : 'P3';
    const v = notification.variables;
    const recovery = kindOf(v.ALERT_TYPE) === 'recovery';
    const alias = episodeKey(v, MAX_ALIAS);
    const url = recovery
      ? `${base}/v2/alerts/${encodeURIComponent(alias)}/close?identifierType=alias`
      : `${base}/v2/alerts`;
    const body = recovery
      ? { source: 'Outpost', note: truncate(plainHeadline(v), 25_000) }
      : opsgenieAlert(v, priority);
    return sendRequest({
      url,
      method: 'POST',
      headers: {
        authorization: `GenieKey ${apiKey}`,
        'content-type': 'application/json',
        'user-agent': 'Outpost-Alerts/1',
      },
      body: JSON.stringify(body),
      signal,
      secrets: [apiKey],
      idempotent: true,
      provider: 'Opsgenie',
      // The operator's endpoint (OUTPOST_OPSGENIE_URL / _EU_URL), not a user's URL.
      policy: null,
    });
  });

/** OPSGENIE: alerts created and closed through the Alert API of `region` with the integration's `apiKey`. */
export const opsgenieChannel = channelModule({
  type: 'OPSGENIE',
  configSchema: Type.Object(
    {
      name: ChannelName,
      apiKey: SecretString,
      region: StringEnum(['US', 'EU'] as const),
      priority: StringEnum(['P1', 'P2', 'P3', 'P4', 'P5'] as const),
    },
    strict,
  ),
  secretFields: ['apiKey'],
  send: sendOpsgenie,
  providerEnv: opsgenieFromEnv,
});
