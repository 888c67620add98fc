// The alerting module's published schemas (docs/architecture.md, "Modules"): leaf files only (TypeBox, the
// protocol, the platform's schema helpers), so the web app imports them without the module's runtime.
export { AlertNotificationSchema, CheckAlertSchema, NotificationAttemptSchema } from './schema.js';
export { ALERT_TYPES, NOTIFICATION_STATES } from './enums.js';
