import { Type } from '@sinclair/typebox';
import { Nullable, strict } from '../../platform/http/schema-helpers.js';
import type { ChannelSender } from '../types.js';
import { ChannelName, channelModule, SecretString } from './channel.js';
import { plainDetails, resultLink } from './chat.js';
import { guarded, optionalString, requiredString } from './config.js';
import { plainHeadline, truncate } from './message.js';
import { baseOf, HTTP_URL_PATTERN, isResult, sendToUserUrl, userUrl } from './outbound.js';

/** Pushover's API base, used when a channel's `url` is not set. */
export const PUSHOVER_API_URL = 'https://api.pushover.net';

/** Pushover's limits: title 250 characters, message 1 024, URL 512, URL title 100. */
const MAX_TITLE = 250;
const MAX_MESSAGE = 1_024;
const MAX_URL = 512;

/**
 * PUSHOVER sender: `POST {url}/1/messages.json` (url by default PUSHOVER_API_URL) form-encoded with the
 * application's `token` (`apiToken`), the `user` (`userKey`, a user or group key), `title`, `message`, the
 * result as `url`, `priority` (−2 to 1 when set), `device` and `timestamp`. 200 is DELIVERED; 400 (a key
 * refused) FAILED; 429 and 5xx RETRY. Both keys are scrubbed from errors. Never throws.
 */
const sendPushover: ChannelSender = (notification, channel, providers, signal) =>
  guarded(async () => {
    const url = userUrl(optionalString(channel, 'url') ?? PUSHOVER_API_URL, 'the Pushover API URL');
    if (isResult(url)) return url;
    const token = requiredString(channel, 'apiToken');
    const user = requiredString(channel, 'userKey');
    const v = notification.variables;
    const form = new URLSearchParams({
      token,
      user,
      title: truncate(plainHeadline(v), MAX_TITLE),
      message: plainDetails(v, MAX_MESSAGE),
    });
    const link = resultLink(v);
    if (link && link.length <= MAX_URL) {
      form.set('url', link);
      form.set('url_title', 'View the result');
    }
    if (typeof channel.config.priority === 'number') form.set('priority', String(channel.config.priority));
    const device = optionalString(channel, 'device');
    if (device !== undefined) form.set('device', device);
    const started = Date.parse(v.STARTED_AT);
    if (!Number.isNaN(started)) form.set('timestamp', String(Math.floor(started / 1000)));
    return sendToUserUrl({
      url: `${baseOf(url)}/1/messages.json`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      secrets: [token, user],
      provider: 'Pushover',
      providers,
      signal,
    });
  });

/**
 * PUSHOVER: a push notification through an application's API token (`apiToken`) to a user or group key
 * (`userKey`), optionally one `device`, at a `priority` from −2 (quietest) to 1 (high); 2 (emergency,
 * repeated until acknowledged) is not offered. `url` replaces the API base (a proxy, a test receiver).
 */
export const pushoverChannel = channelModule({
  type: 'PUSHOVER',
  configSchema: Type.Object(
    {
      name: ChannelName,
      apiToken: SecretString,
      userKey: SecretString,
      device: Type.Optional(Nullable(Type.String({ maxLength: 255, pattern: '^[A-Za-z0-9_,-]*$' }))),
      priority: Type.Optional(Nullable(Type.Integer({ minimum: -2, maximum: 1 }))),
      url: Type.Optional(Nullable(Type.String({ maxLength: 2048, pattern: HTTP_URL_PATTERN }))),
    },
    strict,
  ),
  secretFields: ['apiToken', 'userKey'],
  send: sendPushover,
});
