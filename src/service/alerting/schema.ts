import { type Static, Type } from '@sinclair/typebox';
import {
  Nullable,
  NullableTimestamp,
  StringEnum,
  strict,
  Timestamp,
} from '../platform/http/schema-helpers.js';
import { ALERT_TYPES, NOTIFICATION_STATES } from './enums.js';

/**
 * The API schemas of alerts and notifications (docs/alerting.md). The alert channel's are in
 * alert-channels/schema.ts.
 */

/** An alert as `GET /v1/check-alerts` answers it (docs/alerting.md, "Alerts"). */
export const CheckAlertSchema = Type.Object({
  id: Type.String(),
  checkId: Type.String(),
  name: Type.String({ description: 'The check’s name when the alert was raised' }),
  checkType: Type.String(),
  alertType: StringEnum(ALERT_TYPES),
  title: Type.String(),
  episodeId: Type.String({ description: 'The episode (failing or degraded stretch) the alert belongs to' }),
  notified: Type.Boolean({
    description:
      'true: a notification was queued to at least one alert channel; false: raised while muted, with no subscribed channel that takes its type, or a follow-up of an alert nobody was sent',
  }),
  isReminder: Type.Boolean(),
  reminderSequence: Type.Integer(),
  checkResultId: Nullable(Type.String()),
  runLocation: Nullable(Type.String()),
  responseTime: Nullable(Type.Number()),
  statusCode: Nullable(
    Type.String({
      description:
        'The HTTP status of the run that raised it, as text (`"503"`), as the hosted API answers it; null for other check types',
    }),
  ),
  error: Nullable(Type.String()),
  sslDaysRemaining: Nullable(Type.Integer()),
  sslCheckDomain: Nullable(Type.String()),
  incidentId: Nullable(Type.String()),
  startedAt: Type.String(),
  created_at: Type.String(),
});
/** An alert as answered. */
export type CheckAlertView = Static<typeof CheckAlertSchema>;

/** One delivery attempt as the API answers it. */
export const NotificationAttemptSchema = Type.Object(
  {
    startedAt: Timestamp,
    latencyMs: Type.Number({ description: 'From the start of the send to its outcome, ms.' }),
    outcome: StringEnum(['DELIVERED', 'RETRY', 'FAILED'] as const),
    statusCode: Nullable(
      Type.Integer({ description: 'HTTP status or SMTP reply code; null when no answer came.' }),
    ),
    answer: Nullable(
      Type.String({
        description:
          "The status of the provider's answer in short, never its body: `HTTP 404 Not Found`, or the SMTP " +
          'reply line (`SMTP 250 2.0.0 Ok: queued`); null when no answer came.',
      }),
    ),
    error: Nullable(Type.String({ description: 'Why the attempt did not deliver, secrets masked.' })),
  },
  strict,
);

/** A notification (one alert to one channel, or a channel test) as the API answers it. */
export const AlertNotificationSchema = Type.Object(
  {
    id: Type.String({
      description:
        'A number written as text (`"12"`), as the hosted API answers ids; `/v1/alert-notifications/12` reads it',
    }),
    alertChannelId: Type.Integer(),
    checkId: Nullable(Type.String()),
    alertId: Nullable(Type.String({ description: 'Null for a channel test.' })),
    alertType: Type.String({ description: 'An alert type, or ALERT_TEST for a channel test.' }),
    state: StringEnum(NOTIFICATION_STATES),
    idempotencyKey: Type.String({
      description: 'What receivers see (webhook-id, Message-ID, dedup keys): the same on every attempt.',
    }),
    attempts: Type.Array(NotificationAttemptSchema),
    createdAt: Timestamp,
    deliveredAt: NullableTimestamp,
    lastError: Nullable(Type.String()),
    nextAttemptAt: Nullable(
      Type.String({ format: 'date-time', description: 'When a PENDING notification is tried next.' }),
    ),
    status: StringEnum(['IN_PROGRESS', 'SUCCESS', 'FAILURE'] as const, {
      description:
        'The hosted API’s reading of `state`: PENDING and SENDING are IN_PROGRESS, DELIVERED SUCCESS, FAILED FAILURE.',
    }),
    timestamp: Type.String({ format: 'date-time', description: 'The hosted API’s name of `createdAt`.' }),
    checkAlertId: Nullable(Type.String({ description: 'The hosted API’s name of `alertId`.' })),
  },
  strict,
);
/** A notification as answered. */
export type AlertNotification = Static<typeof AlertNotificationSchema>;
