import type { ChannelSender } from '../types.js';
import { closeTransporters } from './email.js';
import { closeHttp } from './http.js';
import { type AlertChannelType, CHANNEL_MODULES } from './modules.js';
import { closeTemplateWorkers } from './render.js';

export { providersFromEnv } from './providers.js';

/** The sender of each alert channel type (from CHANNEL_MODULES). Each never throws and finishes by its signal. */
export const senders = Object.fromEntries(CHANNEL_MODULES.map((m) => [m.type, m.send])) as Record<
  AlertChannelType,
  ChannelSender
>;

/**
 * Closes what the senders keep open between notifications: SMTP transporters, the HTTP
 * connection pool and the template thread. Sending after it works (they are opened again). Never throws.
 */
export async function closeSenders(): Promise<void> {
  closeTransporters();
  await Promise.all([closeHttp(), closeTemplateWorkers()]);
}
