import { Type } from '@sinclair/typebox';
import { Nullable, strict } from '../../platform/http/schema-helpers.js';
import type { ChannelSender } from '../types.js';
import { channelModule } from './channel.js';
import { markdownMessage } from './chat.js';
import { guarded, optionalString, requiredString } from './config.js';
import { HTTP_URL_PATTERN, isResult, sendToUserUrl, userUrl } from './outbound.js';

/** Mattermost's limit of a post's `text`, characters. */
const MAX_TEXT = 16_383;

/**
 * MATTERMOST sender: POSTs `{ text, channel?, username? }` as JSON to the channel's incoming-webhook `url`
 * (Mattermost's "Incoming Webhooks"); `text` is Markdown. 200 is DELIVERED; 400, 403 (webhooks off) and 404
 * (no such hook) FAILED; 429 and 5xx RETRY. The URL holds the hook's key: it is scrubbed from errors, like
 * Slack's. Never throws.
 */
const sendMattermost: ChannelSender = (notification, channel, providers, signal) =>
  guarded(async () => {
    const url = userUrl(requiredString(channel, 'url'), 'the Mattermost webhook URL');
    if (isResult(url)) return url;
    const target = optionalString(channel, 'channel');
    const username = optionalString(channel, 'username');
    const body = JSON.stringify({
      text: markdownMessage(notification.variables, MAX_TEXT),
      ...(target !== undefined ? { channel: target } : {}),
      ...(username !== undefined ? { username } : {}),
    });
    return sendToUserUrl({
      url: url.toString(),
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body,
      secrets: [url.toString(), url.pathname],
      provider: 'Mattermost',
      providers,
      signal,
    });
  });

/**
 * MATTERMOST: a post through an incoming webhook `url` (http or https: Mattermost is often self-hosted),
 * optionally to another `channel` and as `username` (when the server lets webhooks override them).
 */
export const mattermostChannel = channelModule({
  type: 'MATTERMOST',
  configSchema: Type.Object(
    {
      url: Type.String({ maxLength: 2048, pattern: HTTP_URL_PATTERN }),
      channel: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
      username: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    },
    strict,
  ),
  secretFields: [],
  send: sendMattermost,
});
