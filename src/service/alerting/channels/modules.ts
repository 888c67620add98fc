import { appriseChannel } from './apprise.js';
import { emailChannel } from './email.js';
import { googleChatChannel } from './google-chat.js';
import { gotifyChannel } from './gotify.js';
import { matrixChannel } from './matrix.js';
import { mattermostChannel } from './mattermost.js';
import { ntfyChannel } from './ntfy.js';
import { opsgenieChannel } from './opsgenie.js';
import { pagerdutyChannel } from './pagerduty.js';
import { pushoverChannel } from './pushover.js';
import { slackChannel } from './slack.js';
import { callChannel, smsChannel } from './twilio.js';
import { webhookChannel } from './webhook.js';

/**
 * Every alert channel type, one module each (channel.ts, ChannelModule), in the order of the API's `type`
 * enum (docs/api.md, "Alert channel"). Everything per type derives from this list: the `type` enum and the
 * `config` schemas (alert-channels/schema.ts), the secret fields, the senders (index.ts) and the providers
 * read from the environment (providers.ts). Add a channel type by adding its module here.
 */
export const CHANNEL_MODULES = [
  emailChannel,
  slackChannel,
  webhookChannel,
  smsChannel,
  pagerdutyChannel,
  opsgenieChannel,
  callChannel,
  mattermostChannel,
  googleChatChannel,
  ntfyChannel,
  gotifyChannel,
  pushoverChannel,
  matrixChannel,
  appriseChannel,
] as const;

/** One of the channel types (`EMAIL`, `SLACK`, …). */
export type AlertChannelType = (typeof CHANNEL_MODULES)[number]['type'];

/** The module of channel type `T`. */
export type ChannelModuleOf<T extends AlertChannelType> = Extract<
  (typeof CHANNEL_MODULES)[number],
  { type: T }
>;
