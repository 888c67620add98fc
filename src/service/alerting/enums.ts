/**
 * Alerting's enumerations, in a leaf module (TypeBox-free, import-free) so its schemas (schemas.ts) and the
 * web app can use them without the runtime.
 */

/** The alert types of the field (the market leader's `CheckAlert.alertType`), plus ALERT_SSL. */
export const ALERT_TYPES = [
  'ALERT_FAILURE',
  'ALERT_FAILURE_REMAIN',
  'ALERT_FAILURE_DEGRADED',
  'ALERT_DEGRADED',
  'ALERT_DEGRADED_REMAIN',
  'ALERT_DEGRADED_FAILURE',
  'ALERT_RECOVERY',
  'ALERT_DEGRADED_RECOVERY',
  'ALERT_SSL',
] as const;
/** One of ALERT_TYPES. */
export type AlertType = (typeof ALERT_TYPES)[number];

/** States of a notification: PENDING → SENDING (leased) → DELIVERED | FAILED; a retry goes back to PENDING. */
export const NOTIFICATION_STATES = ['PENDING', 'SENDING', 'DELIVERED', 'FAILED'] as const;
/** One of NOTIFICATION_STATES. */
export type NotificationState = (typeof NOTIFICATION_STATES)[number];
