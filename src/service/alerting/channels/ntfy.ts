import { Type } from '@sinclair/typebox';
import { Nullable, strict } from '../../platform/http/schema-helpers.js';
import type { ChannelSender } from '../types.js';
import { ChannelName, channelModule, SecretString } from './channel.js';
import { defaultPriority, markdownMessage, ntfyTags, resultLink } from './chat.js';
import { guarded, requiredString } from './config.js';
import { plainHeadline, truncate } from './message.js';
import { baseOf, HTTP_URL_PATTERN, isResult, sendToUserUrl, userUrl } from './outbound.js';

/** The public ntfy server, the form's default `url`. */
export const NTFY_PUBLIC_URL = 'https://ntfy.sh';

/**
 * NTFY sender: a JSON publish (`POST {url}/` with `{ topic, title, message, priority, tags, click, markdown }`)
 * to the ntfy server at `url`, with `Authorization: Bearer {accessToken}` when the topic is protected. The
 * priority is the channel's (1–5), else 4 for failures and 3 for the rest. 200 is DELIVERED; 401 and 403
 * (token refused) FAILED; 429 and 5xx RETRY. Never throws.
 */
const sendNtfy: ChannelSender = (notification, channel, providers, signal) =>
  guarded(async () => {
    const url = userUrl(requiredString(channel, 'url'), 'the ntfy server URL');
    if (isResult(url)) return url;
    const v = notification.variables;
    const token = typeof channel.config.accessToken === 'string' ? channel.config.accessToken : '';
    const priority =
      typeof channel.config.priority === 'number' ? channel.config.priority : defaultPriority(v);
    const link = resultLink(v);
    const body = JSON.stringify({
      topic: requiredString(channel, 'topic'),
      title: truncate(plainHeadline(v), 250),
      message: markdownMessage(v, 3_500),
      markdown: true,
      priority,
      tags: ntfyTags(v),
      ...(link ? { click: link } : {}),
    });
    return sendToUserUrl({
      url: `${baseOf(url)}/`,
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body,
      secrets: [token],
      provider: 'the ntfy server',
      providers,
      signal,
    });
  });

/**
 * NTFY: a push notification to `topic` on the ntfy server at `url` (ntfy.sh or a self-hosted one), with an
 * access token (`tk_…`) for protected topics.
 */
export const ntfyChannel = channelModule({
  type: 'NTFY',
  configSchema: Type.Object(
    {
      name: ChannelName,
      url: Type.String({ maxLength: 2048, pattern: HTTP_URL_PATTERN }),
      topic: Type.String({ minLength: 1, maxLength: 64, pattern: '^[-_A-Za-z0-9]+$' }),
      priority: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 5 }))),
      accessToken: Type.Optional(Nullable(SecretString)),
    },
    strict,
  ),
  secretFields: ['accessToken'],
  send: sendNtfy,
});
