import { Type } from '@sinclair/typebox';
import { Nullable, strict } from '../../platform/http/schema-helpers.js';
import type { ChannelSender } from '../types.js';
import { ChannelName, channelModule } from './channel.js';
import { appriseType, markdownMessage } from './chat.js';
import { ConfigError, guarded, optionalString, requiredString } from './config.js';
import { plainHeadline, truncate } from './message.js';
import { baseOf, HTTP_URL_PATTERN, isResult, sendToUserUrl, userUrl } from './outbound.js';

/**
 * APPRISE sender: a notification through the Apprise API server at `url`. With a `key` (a configuration
 * stored on the server): `POST {url}/notify/{key}` with `{ title, body, type, format, tag? }`; else with
 * `urls` (Apprise URLs such as `tgram://…`, `mailto://…`, which hold credentials): `POST {url}/notify`
 * with `{ urls, title, body, type, format }`. `type` is `failure`, `warning`, `success` or `info`. 200 is
 * DELIVERED; 424 (a service refused it), 400 and 404 FAILED; 5xx RETRY. Never throws.
 */
const sendApprise: ChannelSender = (notification, channel, providers, signal) =>
  guarded(async () => {
    const url = userUrl(requiredString(channel, 'url'), 'the Apprise API URL');
    if (isResult(url)) return url;
    const key = optionalString(channel, 'key');
    const urls = optionalString(channel, 'urls');
    if (key === undefined && urls === undefined) {
      throw new ConfigError(`APPRISE channel ${channel.id} needs config.key or config.urls`);
    }
    const v = notification.variables;
    const tag = optionalString(channel, 'tag');
    const message = {
      title: truncate(plainHeadline(v), 250),
      body: markdownMessage(v, 4_000),
      type: appriseType(v),
      format: 'markdown',
    };
    const body =
      key !== undefined ? { ...message, ...(tag !== undefined ? { tag } : {}) } : { urls, ...message };
    return sendToUserUrl({
      url: key !== undefined ? `${baseOf(url)}/notify/${encodeURIComponent(key)}` : `${baseOf(url)}/notify`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      secrets: urls === undefined ? [] : [urls, ...urls.split(/[\s,]+/)],
      provider: 'the Apprise API',
      providers,
      signal,
    });
  });

/**
 * APPRISE: one channel to every service Apprise reaches, through an Apprise API server (`url`): either a
 * configuration stored there (`key`, optionally only its services tagged `tag`) or Apprise URLs given here
 * (`urls`, a secret: they hold the services' credentials). One of `key` and `urls` is needed.
 */
export const appriseChannel = channelModule({
  type: 'APPRISE',
  configSchema: Type.Object(
    {
      name: ChannelName,
      url: Type.String({ maxLength: 2048, pattern: HTTP_URL_PATTERN }),
      key: Type.Optional(
        Nullable(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' })),
      ),
      urls: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 8_192 }))),
      tag: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    },
    strict,
  ),
  secretFields: ['urls'],
  send: sendApprise,
});
