/**
 * Shapes of the API answers the account pages read (private locations, agents, alert channels and their
 * notifications, check groups, incidents, status pages and services). Types only, erased by the build: most
 * come from the very schemas the service validates and answers with, so the pages cannot drift from the API.
 */
import type { Static } from '@sinclair/typebox';
import type {
  AgentErrorReportSchema,
  AgentResponseSchema,
} from '../../../src/service/resources/agents/schema.js';
import type { StatusPageSchema } from '../../../src/service/resources/status-pages/schema.js';

export type {
  PrivateLocation,
  PrivateLocationKey,
} from '../../../src/service/resources/private-locations/schema.js';
export type { AlertChannel, AlertChannelType } from '../../../src/service/resources/alert-channels/schema.js';
export type { CheckGroup } from '../../../src/service/resources/check-groups/schema.js';
export type {
  Impact,
  IncidentUpdateView,
  IncidentView,
  ServiceView,
  UpdateStatus,
} from '../../../src/service/resources/incidents/schema.js';

/** An agent as `GET /v1/agents` and `GET /v1/agents/{id}` answer it. Times ISO 8601. */
export type Agent = Static<typeof AgentResponseSchema>;

/** One error report of an agent (`GET /v1/agents/{id}/error-reports`). */
export type AgentErrorReport = Static<typeof AgentErrorReportSchema>;

/** A status page as every status-page operation answers it; `keys[].key` only in the answer that made it. */
export type StatusPage = Static<typeof StatusPageSchema>;

/** One delivery attempt of a notification (`GET /v1/alert-notifications`, docs/alerting.md). */
export type NotificationAttempt = {
  /** ISO 8601. */
  startedAt: string;
  /** From the start of the send to its outcome, ms. */
  latencyMs: number;
  outcome: 'DELIVERED' | 'RETRY' | 'FAILED';
  /** HTTP status or SMTP reply code; null when no answer came. */
  statusCode: number | null;
  /**
   * The status of the provider's answer in short, never its body: `HTTP 404 Not Found`, or the SMTP reply line;
   * null when no answer came.
   */
  answer: string | null;
  /** Why the attempt did not deliver, secrets masked. */
  error: string | null;
};

/**
 * A notification (one alert to one alert channel, or a channel test) with every delivery attempt, as
 * `GET /v1/alert-notifications` and `POST /v1/alert-channels/{id}/test` answer it. Times ISO 8601.
 */
export type AlertNotification = {
  id: number;
  alertChannelId: number;
  checkId: string | null;
  /** Null for a channel test. */
  alertId: string | null;
  /** An alert type (`ALERT_FAILURE`, `ALERT_RECOVERY`, …) or `ALERT_TEST` for a channel test. */
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

/** A cursor page (`GET /v1/status-pages`, `GET /v1/status-pages/services`). */
export type CursorPage<T> = { length: number; entries: T[]; nextId: string | null };
