// What other modules may use of this one (docs/architecture.md, "Modules"): they import it from here
// only. Leaf files only (schemas, types, queries): a module's routes are registered through its
// ServiceModule (service-module.ts), so importing this file never loads them.
export { alertChannelsForNewCheck, channelSecrets } from './alert-channels/alert-channels.js';
export { ChannelQueries } from './alert-channels/store.js';
export { SMTP_VARIABLES, messageIdOf, smtpDelivery, smtpTransports } from './channels/email.js';
export { noAnswer } from './channels/http.js';
export type { NotificationRow } from './delivery/store.js';
export type { AlertState } from './engine.js';
export { AlertQueries } from './store.js';
export type { DeliveryResult, EngineAlert, ProviderConfig } from './types.js';
export { type AlertSettingsDoc, completeAlertSettings } from './settings.js';
