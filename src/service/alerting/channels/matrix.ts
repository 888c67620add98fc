import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { strict } from '../../platform/http/schema-helpers.js';
import type { ChannelSender } from '../types.js';
import { ChannelName, channelModule, SecretString } from './channel.js';
import { htmlChatMessage, plainChatMessage } from './chat.js';
import { guarded, requiredString } from './config.js';
import { baseOf, HTTP_URL_PATTERN, isResult, sendToUserUrl, userUrl } from './outbound.js';

/**
 * The transaction id of a notification: the same for every attempt of it (so a homeserver that got a
 * message whose answer was lost does not post it twice), distinct between notifications.
 */
export function matrixTxnId(idempotencyKey: string): string {
  return `outpost-${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 32)}`;
}

/**
 * MATRIX sender: `PUT {homeserverUrl}/_matrix/client/v3/rooms/{roomId}/send/m.room.message/{txnId}` with
 * `Authorization: Bearer {accessToken}` and `{ msgtype: 'm.text', body, format: 'org.matrix.custom.html',
 * formatted_body }` (Client-Server API). 200 is DELIVERED; 401 (`M_UNKNOWN_TOKEN`) and 403 (`M_FORBIDDEN`:
 * not in the room) FAILED; 429 (`M_LIMIT_EXCEEDED`) and 5xx RETRY, under the same transaction id. Never throws.
 */
const sendMatrix: ChannelSender = (notification, channel, providers, signal) =>
  guarded(async () => {
    const url = userUrl(requiredString(channel, 'homeserverUrl'), 'the Matrix homeserver URL');
    if (isResult(url)) return url;
    const token = requiredString(channel, 'accessToken');
    const room = encodeURIComponent(requiredString(channel, 'roomId'));
    const v = notification.variables;
    const body = JSON.stringify({
      msgtype: 'm.text',
      body: plainChatMessage(v),
      format: 'org.matrix.custom.html',
      formatted_body: htmlChatMessage(v, '<br>'),
    });
    return sendToUserUrl({
      url: `${baseOf(url)}/_matrix/client/v3/rooms/${room}/send/m.room.message/${matrixTxnId(notification.idempotencyKey)}`,
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body,
      secrets: [token],
      provider: 'the Matrix homeserver',
      providers,
      signal,
    });
  });

/**
 * MATRIX: a message to a room (`roomId`, `!…:server`; the account must have joined it) on the homeserver at
 * `homeserverUrl`, sent with the account's `accessToken`.
 */
export const matrixChannel = channelModule({
  type: 'MATRIX',
  configSchema: Type.Object(
    {
      name: ChannelName,
      homeserverUrl: Type.String({ maxLength: 2048, pattern: HTTP_URL_PATTERN }),
      roomId: Type.String({ minLength: 3, maxLength: 255, pattern: '^![^\\s:]+:[^\\s]+$' }),
      accessToken: SecretString,
    },
    strict,
  ),
  secretFields: ['accessToken'],
  send: sendMatrix,
});
