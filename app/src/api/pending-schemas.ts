/**
 * Answers whose TypeBox schemas the service defines in modules that import its runtime (routes, stores,
 * the analytics engine): `import type` of them would pull 90 to 200 service files into the app's program,
 * which do not typecheck under the browser's settings. Until each schema sits in a leaf module (importing
 * only TypeBox, schema-helpers and protocol), its shape is repeated here field for field; the comment of
 * each names the schema to alias instead (in schemas.ts).
 */
import type { ALERT_TYPES } from '../../../src/service/alerting/types.js';

/** `CheckAlertSchema` of src/service/alerting/check-alert-routes.ts (`GET /v1/check-alerts/{checkId}`). */
export type CheckAlert = {
  id: string;
  checkId: string;
  /** The check's name when the alert was raised. */
  name: string;
  checkType: string;
  alertType: (typeof ALERT_TYPES)[number];
  title: string;
  episodeId: string;
  /** false: raised while muted (or a follow-up of an alert nobody was sent). */
  notified: boolean;
  isReminder: boolean;
  reminderSequence: number;
  checkResultId: string | null;
  runLocation: string | null;
  responseTime: number | null;
  statusCode: number | null;
  error: string | null;
  sslDaysRemaining: number | null;
  sslCheckDomain: string | null;
  incidentId: string | null;
  startedAt: string;
  created_at: string;
};

/** `NotificationAttemptSchema` of src/service/alerting/notification-routes.ts. Times ISO 8601. */
export type NotificationAttempt = {
  startedAt: string;
  /** From the start of the send to its outcome, ms. */
  latencyMs: number;
  outcome: 'DELIVERED' | 'RETRY' | 'FAILED';
  /** HTTP status or SMTP reply code; null when no answer came. */
  statusCode: number | null;
  /** The status of the provider's answer in short, never its body; null when no answer came. */
  answer: string | null;
  /** Why the attempt did not deliver, secrets masked. */
  error: string | null;
};

/**
 * `AlertNotificationSchema` of src/service/alerting/notification-routes.ts: one alert to one channel, or a
 * channel test, with every delivery attempt (`GET /v1/alert-notifications`, `POST …/test`).
 */
export type AlertNotification = {
  id: number;
  alertChannelId: number;
  checkId: string | null;
  /** Null for a channel test. */
  alertId: string | null;
  /** An alert type, or `ALERT_TEST` for a channel test. */
  alertType: string;
  state: 'PENDING' | 'SENDING' | 'DELIVERED' | 'FAILED';
  /** What receivers see (webhook-id, Message-ID, dedup keys): the same on every attempt. */
  idempotencyKey: string;
  attempts: NotificationAttempt[];
  createdAt: string;
  deliveredAt: string | null;
  lastError: string | null;
  /** When a PENDING notification is tried next. */
  nextAttemptAt: string | null;
};

/**
 * `AnalyticsResponseSchema` of src/service/analytics/schema.ts (`GET /v1/analytics/api-checks/{id}`), the
 * parts the app reads; a data point holds `timestamp` and one value per metric asked for.
 */
export type Analytics = {
  from: string;
  to: string;
  series: {
    runLocation?: string;
    statusCode?: number | null;
    data: ({ timestamp: string } & Record<string, number | string | null>)[];
  }[];
};

/**
 * `CheckGroupSchema` of src/service/resources/check-groups/schema.ts (`GET /v1/check-groups[/{id}]`). That
 * module now imports the checks barrel (src/service/checks/index.ts, 230 files with the check types'
 * registry); the nested parts the app does not read (alert settings, variables, retry strategy) are left
 * open here.
 */
export type CheckGroup = {
  id: number;
  name: string;
  activated: boolean;
  concurrency: number;
  apiCheckDefaults: {
    url: string;
    headers: { key: string; value: string; locked?: boolean }[];
    queryParameters: { key: string; value: string; locked?: boolean }[];
    assertions: {
      source: string;
      property?: string;
      comparison: string;
      target: string;
      regex?: string | null;
    }[];
    basicAuth: { username: string; password: string } | null;
  };
  muted: boolean;
  tags: string[];
  locations: string[];
  browserCheckDefaults: string | null;
  environmentVariables: Record<string, unknown>[] | null;
  doubleCheck: boolean;
  useGlobalAlertSettings: boolean | null;
  alertSettings: Record<string, unknown>;
  alertChannelSubscriptions: { alertChannelId: number; activated: boolean }[];
  setupSnippetId: number | null;
  tearDownSnippetId: number | null;
  localSetupScript: string | null;
  localTearDownScript: string | null;
  runtimeId: string | null;
  privateLocations: string[] | null;
  retryStrategy: 'FALLBACK' | Record<string, unknown>;
  runParallel: boolean | null;
  created_at: string;
  updated_at: string | null;
};
