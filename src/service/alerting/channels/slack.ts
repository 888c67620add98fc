import { Type } from '@sinclair/typebox';
import { defaultOutboundPolicy } from '../../platform/http/outbound-policy.js';
import { Nullable, strict } from '../../platform/http/schema-helpers.js';
import type { ChannelSender } from '../types.js';
import { channelModule } from './channel.js';
import { guarded, optionalString, requiredString } from './config.js';
import { noAnswer, sendRequest } from './http.js';
import { slackMessage } from './message.js';

/**
 * SLACK sender: POSTs `{ text, blocks, channel? }` as JSON to the channel's incoming-webhook `url`.
 * 200 is DELIVERED; 429 RETRY after its Retry-After; 404 `no_service` and 410 `channel_is_archived`
 * (like every other 4xx) FAILED. The webhook URL is itself the credential: it is kept out of
 * answers and errors. The URL is the user's: its address is checked by the outbound policy
 * (`providers.outbound`, by default defaultOutboundPolicy) and a refused one is FAILED. Never throws.
 */
const sendSlack: ChannelSender = (notification, channel, providers, signal) =>
  guarded(async () => {
    const url = requiredString(channel, 'url');
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return noAnswer('FAILED', 'the Slack webhook URL is not a valid URL');
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      return noAnswer('FAILED', 'the Slack webhook URL must be http or https');
    }
    const target = optionalString(channel, 'channel');
    const body = JSON.stringify({
      ...slackMessage(notification.variables),
      ...(target !== undefined ? { channel: target } : {}),
    });
    // The path of an incoming webhook (/services/T…/B…/secret) is what authorises a post.
    const secrets = [url, parsed.pathname].filter((s) => s.length > 1);
    return sendRequest({
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'Outpost-Alerts/1' },
      body,
      signal,
      secrets,
      idempotent: true,
      provider: 'Slack',
      policy: providers.outbound ?? defaultOutboundPolicy(),
    });
  });

/**
 * SLACK: a post to the channel's incoming webhook `url` (https only), optionally to another `channel`. The
 * URL is itself the credential: scrubbed from attempts (DeliveryWorker), though not a secret field.
 */
export const slackChannel = channelModule({
  type: 'SLACK',
  configSchema: Type.Object(
    {
      url: Type.String({ maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]://[^\\s/]+[^\\s]*$' }),
      channel: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    },
    strict,
  ),
  secretFields: [],
  send: sendSlack,
});
