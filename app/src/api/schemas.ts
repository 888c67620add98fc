/**
 * The shapes of the API's answers, as the static types of the very TypeBox schemas the service validates
 * and answers with: the app cannot drift from the API. `import type` only, so the build erases every import
 * of service code (the bundle holds none of it). The one place the app names the service's schema files.
 */
import type { Static } from '@sinclair/typebox';
import type { CHECK_TYPES } from '../../../src/protocol/enums.js';
import type { CheckResultSchema, IcmpCheckResultSchema, RunLogSchema } from '../../../src/protocol/result.js';
import type { AlertSettingsSchema, CheckResponseSchema } from '../../../src/service/checks/schemas.js';
import type {
  CheckSessionSchema,
  SessionResultSchema,
} from '../../../src/service/platform/http/responses.js';
import type { ErrorBodySchema } from '../../../src/service/platform/http/schema-helpers.js';
import type { ExpiredRunSchema } from '../../../src/service/runs/schemas.js';
import type {
  AgentErrorReportSchema,
  AgentResponseSchema,
  ApiKeySchema,
  CheckGroupSchema,
  CheckResultResponseSchema,
  CheckStatusSchema,
  ClientCertificateSchema,
  CreatedApiKeySchema,
  ErrorGroupSchema,
  PrivateLocationKeySchema,
  PrivateLocationSchema,
  RuntimeSchema,
  SnippetSchema,
  VariableSchema,
} from '../../../src/service/resources/schemas.js';
import type {
  AlertNotificationSchema,
  CheckAlertSchema,
  NotificationAttemptSchema,
} from '../../../src/service/alerting/schemas.js';
import type { AnalyticsResponseSchema } from '../../../src/service/analytics/schemas.js';
import type { RepairSchema, UsageSchema } from '../../../src/service/agentic/schemas.js';
import type { AuditEntrySchema } from '../../../src/service/audit-log/schemas.js';
import type { PutSsoBody, SsoSettingsSchema } from '../../../src/service/sso/schemas.js';
import type {
  InvitedUserSchema,
  SessionSchema,
  TwoFactorSetupSchema,
  UserSchema,
} from '../../../src/service/users/schemas.js';
import type { MaintenanceWindowSchema } from '../../../src/service/maintenance-windows/schemas.js';
// The one schema not in a module's published schemas.ts: an alert channel's config union comes from the
// channel modules, each of which also holds its sender.
import type { AlertChannelSchema } from '../../../src/service/alerting/alert-channels/schema.js';
import type {
  IncidentSchema,
  IncidentUpdateSchema,
  ServiceSchema,
  StatusPageSchema,
} from '../../../src/service/status-pages/schemas.js';

/**
 * The error body every failed request answers (docs/errors.md). The schema declares `attributes` open
 * (`code` and more: a validation error's `field`, `in` and `rule`, a 409's `statusPageIds`).
 */
export type ErrorBody = Omit<Static<typeof ErrorBodySchema>, 'attributes'> & {
  attributes?: Static<typeof ErrorBodySchema>['attributes'] & Record<string, unknown>;
};

/** Check types (docs/checks.md). */
export type CheckType = (typeof CHECK_TYPES)[number];
/**
 * A check as `GET /v1/checks` answers it: the fields every type shares, typed; its type's own (`request`,
 * `script`, `heartbeat`, `pingUrl`, …) open, as the schema declares them (`additionalProperties`).
 */
export type Check = Static<typeof CheckResponseSchema> & { [field: string]: unknown };
/** One entry of `GET /v1/check-statuses`. */
export type CheckStatus = Static<typeof CheckStatusSchema>;
/** A result as the agent reports it (the check-type parts a result page reads). */
export type CheckResult = Static<typeof CheckResultSchema>;
type Part<K extends keyof CheckResult> = NonNullable<CheckResult[K]> | null;
/**
 * A check result as `GET /v1/check-results/{checkId}[/{id}]` answers it. The response schema declares the
 * check-type parts and the assertions as open objects; they are what the agent reported, so they are read
 * with the protocol's schemas of them.
 */
export type CheckResultResponse = Omit<
  Static<typeof CheckResultResponseSchema>,
  | 'assertions'
  | 'icmpCheckResult'
  | 'dnsCheckResult'
  | 'tcpCheckResult'
  | 'grpcCheckResult'
  | 'httpCheckResult'
  | 'browserCheckResult'
  | 'multiStepCheckResult'
  | 'sslCheckResult'
  | 'tracerouteCheckResult'
  | 'agenticCheckResult'
> & {
  assertions: CheckResult['assertions'];
  icmpCheckResult: Part<'icmpCheckResult'>;
  dnsCheckResult: Part<'dnsCheckResult'>;
  tcpCheckResult: Part<'tcpCheckResult'>;
  grpcCheckResult: Part<'grpcCheckResult'>;
  httpCheckResult: Part<'httpCheckResult'>;
  browserCheckResult: Part<'browserCheckResult'>;
  /** A multi-step check's browser part, under the field's name for it (the same shape). */
  multiStepCheckResult: Part<'browserCheckResult'>;
  sslCheckResult: Part<'sslCheckResult'>;
  tracerouteCheckResult: Part<'tracerouteCheckResult'>;
  agenticCheckResult: Part<'agenticCheckResult'>;
};
/** One script change of an AGENTIC check (`GET /v1/checks/{id}/agentic-repairs`, docs/api.md "Agentic checks"). */
export type AgenticRepair = Static<typeof RepairSchema>;
/** An account's AGENTIC runs and model usage in a month (`GET /v1/agentic-usage`). */
export type AgenticUsage = Static<typeof UsageSchema>;
/** The ICMP part of a check result: the host pinged, packets sent and received, `packetLoss` (percent) and latencies (ms). */
export type IcmpCheckResult = Static<typeof IcmpCheckResultSchema>;
/** One line of a run's log: ISO 8601 `time`, `level` and `msg`. */
export type RunLog = Static<typeof RunLogSchema>;
/** A check session (`POST /v1/check-sessions/trigger`, `GET /v1/check-sessions/{id}`). */
export type CheckSession = Static<typeof CheckSessionSchema>;
/** The result of one run in a session: its location, status, `responseTime` (ms) and ISO 8601 start and stop. */
export type SessionResult = Static<typeof SessionResultSchema>;
/** `GET /v1/error-groups/checks/{checkId}` (docs/api.md, "Error group"). */
export type ErrorGroup = Static<typeof ErrorGroupSchema>;
/** A runtime browser and multi-step checks can run on (`GET /v1/runtimes`). */
export type Runtime = Static<typeof RuntimeSchema>;
/** A code snippet of the account (`GET /v1/snippets`). */
export type Snippet = Static<typeof SnippetSchema>;
/** A maintenance window of the account (`GET /v1/maintenance-windows`). */
export type MaintenanceWindow = Static<typeof MaintenanceWindowSchema>;

/** An agent serving private locations (`GET /v1/agents[/{id}]`). */
export type Agent = Static<typeof AgentResponseSchema>;
/** An error an agent reported (`GET /v1/agents/{id}/error-reports`). */
export type AgentErrorReport = Static<typeof AgentErrorReportSchema>;
/** A private location (`GET /v1/private-locations[/{id}]`). */
export type PrivateLocation = Static<typeof PrivateLocationSchema>;
/** A private location's key; `rawKey` only in the answer that made it. */
export type PrivateLocationKey = Static<typeof PrivateLocationKeySchema>;

/** An alert channel: its type, config and subscriptions (`GET /v1/alert-channels[/{id}]`). */
export type AlertChannel = Static<typeof AlertChannelSchema>;
/** The types of alert channels (email, webhook, …). */
export type AlertChannelType = AlertChannel['type'];

/** A status page (`GET /v1/status-pages`). */
export type StatusPage = Static<typeof StatusPageSchema>;
/** A status-page service (`GET /v1/status-pages/services`). */
export type ServiceView = Static<typeof ServiceSchema>;
/** An incident with its updates, newest first (`GET /v1/incidents[/{id}]`). */
export type IncidentView = Static<typeof IncidentSchema>;
/** One update of an incident: a status and a description. */
export type IncidentUpdateView = Static<typeof IncidentUpdateSchema>;
/** How bad an incident is (`MINOR`, `MAJOR`, `MAINTENANCE`). */
export type Impact = IncidentView['impact'];
/** The status an incident update sets (`INVESTIGATING` … `RESOLVED`, or `MAINTENANCE`). */
export type UpdateStatus = IncidentUpdateView['status'];

/**
 * A cursor page (docs/api.md "Pagination"), as `cursorPage()` of src/service/platform/http/cursor.ts builds
 * its schema; that module is not imported here: it pulls in the service's database layer.
 */
export type CursorPage<T> = { length: number; entries: T[]; nextId: string | null };

/** An alert of a check (`GET /v1/check-alerts/{checkId}`). */
export type CheckAlert = Static<typeof CheckAlertSchema>;
/** One delivery attempt of a notification. Times ISO 8601. */
export type NotificationAttempt = Static<typeof NotificationAttemptSchema>;
/** A notification to one channel, with its attempts (`GET /v1/alert-notifications`). */
export type AlertNotification = Static<typeof AlertNotificationSchema>;
type AnalyticsResponse = Static<typeof AnalyticsResponseSchema>;
type AnalyticsSeries = AnalyticsResponse['series'][number];
/**
 * `GET /v1/analytics/api-checks/{id}`: series of data points. The schema declares a point as `timestamp`
 * plus open fields: one value per metric asked for (`responseTime_avg`, `availability`, …), a number or null.
 */
export type Analytics = Omit<AnalyticsResponse, 'series'> & {
  series: (Omit<AnalyticsSeries, 'data'> & {
    data: (AnalyticsSeries['data'][number] & Record<string, number | string | null>)[];
  })[];
};
/** A check group (`GET /v1/check-groups[/{id}]`). */
export type CheckGroup = Static<typeof CheckGroupSchema>;
/** An account environment variable (`GET /v1/variables`); a secret one's `value` always reads `*****`. */
export type Variable = Static<typeof VariableSchema>;
/** A client certificate for mutual TLS (`GET /v1/client-certificates`): never its private key or passphrase. */
export type ClientCertificate = Static<typeof ClientCertificateSchema>;
/** An account API key as listed (`GET /v1/api-keys`): its first characters, never the key. */
export type ApiKey = Static<typeof ApiKeySchema>;
/** The answer of `POST /v1/api-keys`: the key as listed and `rawKey`, shown this once. */
export type CreatedApiKey = Static<typeof CreatedApiKeySchema>;
/** Alert settings (`GET|PUT /v1/alert-settings`, a check group's `alertSettings`). */
export type AlertSettings = Static<typeof AlertSettingsSchema>;

/** A run of a check that ended without running, and why (`GET /v1/checks/{id}/expired-runs`). */
export type ExpiredRun = Static<typeof ExpiredRunSchema>;

/** A person of the account (`GET /v1/users`, docs/teams.md, "People"). */
export type User = Static<typeof UserSchema>;
/** The answer to an invitation: the person, and `invitationUrl` only when the service has no SMTP server. */
export type InvitedUser = Static<typeof InvitedUserSchema>;
/** One of the signed-in person's sessions (`GET /v1/users/me/sessions`). */
export type MySession = Static<typeof SessionSchema>;
/** A new TOTP seed, pending until confirmed (`POST /v1/users/me/two-factor`). */
export type TwoFactorEnrolment = Static<typeof TwoFactorSetupSchema>;
/** The account's single sign-on (`GET /v1/sso`): the client secret never, only whether one is stored. */
export type SsoSettings = Static<typeof SsoSettingsSchema>;
/** The body of `PUT /v1/sso`; `clientSecret` left out keeps the stored one. */
export type SsoSettingsBody = Static<typeof PutSsoBody>;
/** One entry of the audit log (`GET /v1/audit-log`). */
export type AuditEntry = Static<typeof AuditEntrySchema>;
