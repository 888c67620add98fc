import type { OutboundPolicy } from '../platform/http/outbound-policy.js';

/**
 * The contracts of alerting (docs/alerting.md): what the alert engine takes and returns, what a
 * notification carries, and what a channel sender answers. The engine (engine.ts) is pure; the
 * recorder (recorder.ts) runs it in the result's transaction; the delivery worker (delivery/worker.ts) hands
 * each notification to the sender of its channel type (channels/).
 */

export { ALERT_TYPES, type AlertType } from './enums.js';
import type { AlertType } from './enums.js';

/** What one run says about a check: the unit the engine alerts on. */
export type RunVerdict = 'PASSING' | 'DEGRADED' | 'FAILING';

/** One location's FINAL result within a run (several for a `runParallel` check). */
export type LocationOutcome = {
  location: string;
  /** The result failed (`hasFailures` or `hasErrors`). */
  failed: boolean;
  /** The result passed but was degraded. */
  degraded: boolean;
};

/** A run as the engine sees it. Times are epoch ms. */
export type AlertRun = {
  /** The result that completed the run (the last location's): the alert's `resultId`. */
  resultId: string;
  /** ATTEMPT results (a retry follows) never alert; only FINAL ones. */
  resultType: 'FINAL' | 'ATTEMPT';
  /** The check ran in parallel in every location (`runParallel`). */
  parallel: boolean;
  /** One entry per location of the run; one for a check that does not run in parallel. */
  locations: LocationOutcome[];
  /** When the run started (its first location's start). */
  startedAtMs: number;
};

/**
 * Alert settings after resolution (account → group → check, see resolveAlertSettings) with the
 * field's defaults filled in: RUN_BASED, `failedRunThreshold` 1, TIME_BASED 5 minutes, no reminders
 * (interval 5 minutes), parallel threshold off at 10 %.
 */
export type ResolvedAlertSettings = {
  escalationType: 'RUN_BASED' | 'TIME_BASED';
  /** RUN_BASED: consecutive failing (or degraded) runs before the first alert, 1–5. */
  failedRunThreshold: number;
  /** TIME_BASED: minutes a check fails (or is degraded) before the first alert: 5, 10, 15 or 30. */
  minutesFailingThreshold: number;
  /** Reminders until recovery: `amount` 0–5, or 100000 for unlimited; `intervalMinutes` apart. */
  reminders: { amount: number; intervalMinutes: number };
  /** A parallel run fails when at least `percentage` % of its locations failed (when enabled). */
  parallelRunFailureThreshold: { enabled: boolean; percentage: number };
  /** The check or its group is muted: alerts are recorded, nothing is sent. */
  muted: boolean;
};

/** An alert the engine raised. */
export type EngineAlert = {
  alertType: AlertType;
  /**
   * The episode the alert belongs to: the `resultId` of the run that opened it (the first
   * non-passing run after a passing one). Recoveries carry the episode they close.
   */
  episodeId: string;
  /**
   * How many alerts of this type the episode raised before this one (0 for the first). With
   * (check, episode, type) it makes the idempotency key of the alert's notifications unique.
   */
  sequence: number;
  /** A reminder (ALERT_FAILURE_REMAIN / ALERT_DEGRADED_REMAIN); `reminderSequence` 1, 2, … */
  isReminder: boolean;
  reminderSequence: number;
  /**
   * Whether notifications go out: false when muted, and for a follow-up (reminder, recovery,
   * de-escalation) of an episode whose opening alert was not notified. The alert is recorded either way.
   */
  notify: boolean;
  /** The result that raised it. */
  resultId: string;
};

/** What `evaluate` returns: the state to store and the alerts to record (in order). */
export type Evaluation<State> = { state: State; alerts: EngineAlert[] };

/**
 * The variables of one notification, fixed when it is queued (a later edit of the check does not
 * change a message already owed). Names are the webhook template variables of docs/alerting.md.
 */
export type NotificationDoc = {
  ALERT_TITLE: string;
  ALERT_TYPE: AlertType | 'ALERT_TEST';
  CHECK_NAME: string;
  CHECK_ID: string;
  CHECK_TYPE: string;
  CHECK_DESCRIPTION: string | null;
  CHECK_RESULT_ID: string | null;
  CHECK_ERROR_MESSAGE: string | null;
  /** ms */
  RESPONSE_TIME: number | null;
  API_CHECK_RESPONSE_STATUS_CODE: number | null;
  API_CHECK_RESPONSE_STATUS_TEXT: string | null;
  RUN_LOCATION: string | null;
  /** Same as RUN_LOCATION (the market leader's alias). */
  REGION: string | null;
  RESULT_LINK: string | null;
  /** ISO 8601 */
  STARTED_AT: string;
  TAGS: string[];
  GROUP_NAME: string | null;
  SSL_DAYS_REMAINING: number | null;
  SSL_CHECK_DOMAIN: string | null;
  IS_REMINDER: boolean;
  REMINDER_SEQUENCE: number;
  /**
   * The episode the alert belongs to (PagerDuty `dedup_key`, Opsgenie `alias`: a recovery resolves
   * what its failure opened). For ALERT_SSL: domain and certificate fingerprint.
   */
  EPISODE_ID: string;
};

/** A notification as a sender gets it. */
export type OutgoingNotification = {
  /** Unique per (check, episode, alert type, sequence, channel): webhook-id, Message-ID. */
  idempotencyKey: string;
  /** The message's variables. */
  variables: NotificationDoc;
  /** The account's variables (`{{VAR}}` in webhook templates); secrets included, never logged. */
  accountVariables: Record<string, string>;
};

/** The channel as a sender gets it: its type and config with secrets in clear. */
export type ChannelTarget = { id: number; type: string; config: Record<string, unknown> };

/**
 * Where each provider is reached and with what credentials, from the environment
 * (`OUTPOST_SMTP_URL`, `OUTPOST_PAGERDUTY_URL`, …; see providersFromEnv). A provider left
 * undefined is not configured: its channels' notifications fail with a reason saying so.
 */
export type ProviderConfig = {
  smtp?: { url: string; from: string };
  /** IANA time zone the alert mails give times in (`OUTPOST_TIME_ZONE`); default UTC. */
  timeZone?: string;
  /** Events API v2 base, default https://events.pagerduty.com. */
  pagerdutyUrl: string;
  /** Opsgenie bases per region, default https://api.opsgenie.com and https://api.eu.opsgenie.com. */
  opsgenieUrl: { US: string; EU: string };
  /** Twilio-compatible API: base (default https://api.twilio.com), account SID, auth token, sender. */
  twilio?: { url: string; accountSid: string; authToken: string; from: string };
  /**
   * The outbound address policy for the URLs users give (WEBHOOK and SLACK `url`; docs/alerting.md,
   * "Where alerts may go"); default defaultOutboundPolicy() (no allow-list). The endpoints above are the
   * operator's own and are not subject to it.
   */
  outbound?: OutboundPolicy;
};

/**
 * What one delivery attempt came to. `DELIVERED`; `RETRY` (temporary: 5xx, 408, 429, a
 * connection error, SMTP 4xx), after `retryAfterMs` when the provider said so (`Retry-After`);
 * `FAILED` (permanent: other 4xx, SMTP 5xx, a provider that is not configured).
 */
export type DeliveryResult = {
  outcome: 'DELIVERED' | 'RETRY' | 'FAILED';
  /** HTTP status, or SMTP reply code; null when no answer came. */
  statusCode: number | null;
  /**
   * A short status text of the provider's answer, never its body: `HTTP 404 Not Found` for HTTP, the SMTP
   * reply line (`SMTP 250 2.0.0 Ok: queued`) for mail; null when no answer came. Scrubbed by the caller.
   */
  answer: string | null;
  /** Why it did not succeed, in words; null when delivered. */
  error: string | null;
  /** Wait the provider asked for, ms (Retry-After), or null. */
  retryAfterMs: number | null;
};

/**
 * Delivers one notification to one channel. Never throws: every failure is a DeliveryResult.
 * Must finish by `signal` (the worker aborts a send after its timeout).
 */
export type ChannelSender = (
  notification: OutgoingNotification,
  channel: ChannelTarget,
  providers: ProviderConfig,
  signal: AbortSignal,
) => Promise<DeliveryResult>;
