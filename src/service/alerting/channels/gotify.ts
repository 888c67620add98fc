import { Type } from '@sinclair/typebox';
import { Nullable, strict } from '../../platform/http/schema-helpers.js';
import type { ChannelSender } from '../types.js';
import { ChannelName, channelModule, SecretString } from './channel.js';
import { markdownMessage, resultLink } from './chat.js';
import { guarded, requiredString } from './config.js';
import { kindOf, plainHeadline, truncate } from './message.js';
import { baseOf, HTTP_URL_PATTERN, isResult, sendToUserUrl, userUrl } from './outbound.js';

/**
 * GOTIFY sender: `POST {url}/message` with the application token in `X-Gotify-Key` (never in the URL) and
 * `{ title, message, priority, extras }` as JSON; the message is Markdown (`client::display`) and opens the
 * result when tapped (`client::notification`). The priority is the channel's (0–10), else 8 for failures and
 * 5 for the rest. 200 is DELIVERED; 401 and 403 (token refused) FAILED; 5xx RETRY. Never throws.
 */
const sendGotify: ChannelSender = (notification, channel, providers, signal) =>
  guarded(async () => {
    const url = userUrl(requiredString(channel, 'url'), 'the Gotify server URL');
    if (isResult(url)) return url;
    const token = requiredString(channel, 'token');
    const v = notification.variables;
    const priority =
      typeof channel.config.priority === 'number'
        ? channel.config.priority
        : kindOf(v.ALERT_TYPE) === 'failure'
          ? 8
          : 5;
    const link = resultLink(v);
    const body = JSON.stringify({
      title: truncate(plainHeadline(v), 250),
      message: markdownMessage(v, 4_000),
      priority,
      extras: {
        'client::display': { contentType: 'text/markdown' },
        ...(link ? { 'client::notification': { click: { url: link } } } : {}),
      },
    });
    return sendToUserUrl({
      url: `${baseOf(url)}/message`,
      headers: { 'content-type': 'application/json', 'x-gotify-key': token },
      body,
      secrets: [token],
      provider: 'the Gotify server',
      providers,
      signal,
    });
  });

/** GOTIFY: a message to a Gotify server at `url`, sent as the application whose `token` it holds. */
export const gotifyChannel = channelModule({
  type: 'GOTIFY',
  configSchema: Type.Object(
    {
      name: ChannelName,
      url: Type.String({ maxLength: 2048, pattern: HTTP_URL_PATTERN }),
      token: SecretString,
      priority: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 10 }))),
    },
    strict,
  ),
  secretFields: ['token'],
  send: sendGotify,
});
