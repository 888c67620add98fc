import type { AlertChannelType } from '../alert-channels/schema.js';
import type { ChannelSender } from '../types.js';
import { closeTransporters, sendEmail } from './email.js';
import { closeHttp } from './http.js';
import { closeTemplateWorkers } from './render.js';
import { sendOpsgenie } from './opsgenie.js';
import { sendPagerduty } from './pagerduty.js';
import { sendSlack } from './slack.js';
import { sendCall, sendSms } from './twilio.js';
import { sendWebhook } from './webhook.js';

export { providersFromEnv } from './providers.js';

/** The sender of each alert channel type. Each never throws and finishes by its signal. */
export const senders: Record<AlertChannelType, ChannelSender> = {
  EMAIL: sendEmail,
  SLACK: sendSlack,
  WEBHOOK: sendWebhook,
  SMS: sendSms,
  CALL: sendCall,
  PAGERDUTY: sendPagerduty,
  OPSGENIE: sendOpsgenie,
};

/**
 * Closes what the senders keep open between notifications: SMTP transporters, the HTTP
 * connection pool and the template thread. Sending after it works (they are opened again). Never throws.
 */
export async function closeSenders(): Promise<void> {
  closeTransporters();
  await Promise.all([closeHttp(), closeTemplateWorkers()]);
}
