import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { strict } from '../../platform/http/schema-helpers.js';
import type { ChannelSender } from '../types.js';
import { channelModule } from './channel.js';
import { googleChatMessage } from './chat.js';
import { guarded, requiredString } from './config.js';
import { isResult, sendToUserUrl, userUrl } from './outbound.js';

/**
 * GOOGLE_CHAT sender: POSTs `{ text, cardsV2 }` as JSON to the space's incoming-webhook `url`
 * (`https://chat.googleapis.com/v1/spaces/…/messages?key=…&token=…`). 200 is DELIVERED; 400 and 403
 * FAILED; 429 and 5xx RETRY. The URL's `key` and `token` are the credential: the URL is scrubbed from
 * errors. Never throws.
 */
const sendGoogleChat: ChannelSender = (notification, channel, providers, signal) =>
  guarded(async () => {
    const url = userUrl(requiredString(channel, 'url'), 'the Google Chat webhook URL');
    if (isResult(url)) return url;
    const cardId = `outpost-${createHash('sha256').update(notification.idempotencyKey).digest('hex').slice(0, 24)}`;
    const secrets = [url.toString(), url.search, ...url.searchParams.values()];
    return sendToUserUrl({
      url: url.toString(),
      headers: { 'content-type': 'application/json; charset=UTF-8' },
      body: JSON.stringify(googleChatMessage(notification.variables, cardId)),
      secrets,
      provider: 'Google Chat',
      providers,
      signal,
    });
  });

/** GOOGLE_CHAT: a message to a Google Chat space through its incoming webhook `url` (https only). */
export const googleChatChannel = channelModule({
  type: 'GOOGLE_CHAT',
  configSchema: Type.Object(
    { url: Type.String({ maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]://[^\\s/]+[^\\s]*$' }) },
    strict,
  ),
  secretFields: [],
  send: sendGoogleChat,
});
