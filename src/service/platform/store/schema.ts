import type { ColumnType, Generated } from 'kysely';
import type { CHECK_SESSION_STATUSES, CheckType, RunStatus, TriggerSource } from '../../../protocol/enums.js';
import type { AgentEvent } from '../../../protocol/messages.js';
import type { CheckResult } from '../../../protocol/result.js';
import type { Role } from '../http/roles.js';

declare const documentType: unique symbol;

/**
 * The document type of each JSON `doc` column, declared by the module that owns the table, beside the
 * document's type, through interface merging:
 * `declare module '<path>/platform/store/schema.js' { interface StoredDocuments { checks: CheckDoc } }`.
 * So the store, the service's bottom layer, imports no module, and a read still needs no cast.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by the modules' declarations (interface merging)
export interface StoredDocuments {}

/** The document type `StoredDocuments` declares under `key` (`never` until a module declares it). */
type Doc<K extends string> = K extends keyof StoredDocuments ? StoredDocuments[K] : never;

/**
 * JSON text of a stored document of type `T`: a string that remembers what it holds, so a row
 * read from a table says which document its column stores and `readDoc` needs no cast.
 * Made only by `writeDoc` (or read from a column typed with `JsonColumn`).
 */
export type StoredJson<T> = string & { readonly [documentType]: T };

/**
 * A column holding JSON text of `T`. Reads are `StoredJson<T>`; writes take any JSON text
 * (`writeDoc(doc)` in the service; store-wide code such as secrets-at-rest and tests write raw text).
 */
export type JsonColumn<T> = ColumnType<StoredJson<T>, string, string>;

/** Parses a stored document. The one place the service reads JSON text of a stored document. */
export function readDoc<T>(text: StoredJson<T>): T {
  return JSON.parse(text) as T;
}

/** Serialises a document for a JSON text column. The one place the service writes one. */
export function writeDoc<T>(doc: T): StoredJson<T> {
  return JSON.stringify(doc) as StoredJson<T>;
}

/**
 * Tables of the service store. Portable types only (text, integer, real):
 * JSON documents are stored as text so the same queries run on SQLite and
 * PostgreSQL. Times are epoch milliseconds in integer columns. Text columns of an enumeration
 * (`check_type`, `status`, `result_type`, `trigger_source`) are typed with the protocol's
 * enumeration: the service writes only values its schemas validated, so a read needs no cast.
 */
export type Database = {
  accounts: AccountTable;
  api_keys: ApiKeyTable;
  checks: CheckTable;
  check_sessions: CheckSessionTable;
  jobs: JobTable;
  check_results: CheckResultTable;
  agents: AgentTable;
  agent_events: AgentEventTable;
  result_outbox: ResultOutboxTable;
  check_groups: DocRow<number, Doc<'check_groups'>> & { name: string };
  alert_channels: DocRow<number, Doc<'alert_channels'>> & { type: string };
  snippets: DocRow<number, Doc<'snippets'>> & { name: string };
  maintenance_windows: DocRow<number, Doc<'maintenance_windows'>> & { name: string };
  status_pages: DocRow<string, Doc<'status_pages'>> & {
    url: string | null;
    custom_domain: string | null;
    custom_domain_verified_at: number | null;
    custom_domain_verified_by: 'TXT' | 'ALLOW_LIST' | null;
    custom_domain_checked_at: number | null;
    custom_domain_problem: string | null;
  };
  status_page_services: Scoped<string> & { name: string };
  incidents: DocRow<string, Doc<'incidents'>>;
  incident_updates: DocRow<string, Doc<'incident_updates'>> & { incident_id: string; seq: number | null };
  incident_services: IncidentServiceTable;
  variables: Scoped<string> & { key: string; value: string; locked: number; secret: number };
  client_certificates: DocRow<string, Doc<'client_certificates'>> & { host: string };
  error_groups: Scoped<string> & {
    check_id: string;
    error_hash: string;
    raw_error_message: string | null;
    cleaned_error_message: string;
    first_seen: number;
    last_seen: number;
    archived_until_next_event: number;
    archived_forever: number;
  };
  private_locations: DocRow<string, Doc<'private_locations'>> & { slug: string };
  private_location_keys: Scoped<string> & { location_id: string; key_hash: string; masked_key: string };
  account_settings: AccountSettingsTable;
  alert_states: AlertStateTable;
  check_alerts: CheckAlertTable;
  alert_notifications: AlertNotificationTable;
  alert_attempts: AlertAttemptTable;
  ssl_certificates: SslCertificateTable;
  heartbeats: HeartbeatTable;
  heartbeat_pings: HeartbeatPingTable;
  web_sessions: WebSessionTable;
  users: UserTable;
  audit_log: AuditLogTable;
  agentic_repairs: AgenticRepairTable;
  agentic_runs: AgenticRunTable;
  sso_settings: SsoSettingsTable;
  sso_domains: { domain: string; account_id: string };
  sso_sign_ins: SsoSignInTable;
  user_tokens: UserTokenTable;
  check_last_results: CheckLastResultTable;
  check_stats_hourly: CheckStatsHourlyTable;
  check_stats_daily: CheckStatsDailyTable;
  status_page_subscribers: StatusPageSubscriberTable;
  expired_runs: ExpiredRunTable;
  test_runs: TestRunTable;
  dashboards: DocRow<number, Doc<'dashboards'>> & {
    dashboard_id: string;
    custom_url: string | null;
    custom_domain: string | null;
  };
  triggers: TriggerTable;
  projects: ProjectTable;
  project_resources: ProjectResourceTable;
  /** Artifacts kept in the store (migration 0026; empty while artifacts are files). */
  artifacts: {
    account_id: string;
    job_id: string;
    name: string;
    upload_id: string;
    size_bytes: number;
    sha256: string;
    created_at: number;
  };
  /** The bytes of each artifact upload, in chunks of at most 1 MiB, `seq` from 0 (migration 0026). */
  artifact_chunks: { upload_id: string; seq: number; data: Buffer; created_at: number };
  /** Counters of the rate limiters replicas share on PostgreSQL (migration 0023; empty on SQLite). */
  rate_limits: { key: string; points: number; expire: number | null };
};

/** Columns every account-scoped resource row has. Integer ids are generated by the store. */
export type Scoped<Id extends string | number> = {
  id: Id extends number ? Generated<number> : string;
  account_id: string;
  created_at: number;
  updated_at: number | null;
};

/** A scoped row holding its document (`Doc`, defined with its resource) as JSON text. */
export type DocRow<Id extends string | number, Doc> = Scoped<Id> & { doc: JsonColumn<Doc> };

export type AccountTable = { id: string; name: string; created_at: number };

export type ApiKeyTable = {
  id: string;
  account_id: string;
  /** SHA-256 of the key, hex. The key itself is never stored. */
  key_hash: string;
  /** First characters of the key, for humans to tell keys apart. */
  key_prefix: string;
  /** `embedded-agent` for the key `outpost up` makes for its own agent at each start. */
  label: string | null;
  created_at: number;
  /** The last request made with the key or a web session of it (epoch ms), to the minute; null: none yet. */
  last_used_at: number | null;
  /** The role the key acts with (platform/http/permissions.ts `ROLES`); OWNER for keys older than roles. */
  role: Generated<Role>;
  /** When the key stops working, epoch ms; null: never. */
  expires_at: number | null;
  /** The person the key belongs to (0030_users); null for an account key. */
  user_id: string | null;
};

export type CheckTable = {
  id: string;
  account_id: string;
  check_type: CheckType;
  name: string;
  activated: number;
  /** Tags as a JSON array, duplicated out of `doc` for filtering. */
  tags: JsonColumn<string[]>;
  frequency: number;
  frequency_offset: number | null;
  /** The whole check as the API shows it, JSON. */
  doc: JsonColumn<Doc<'checks'>>;
  /** Epoch ms of the next scheduled run; null when not activated. */
  next_run_at: number | null;
  /** Round-robin cursor over the check's locations. */
  location_cursor: number;
  created_at: number;
  updated_at: number | null;
};

/** A check session's status: PROGRESS while runs are pending, then one of the final statuses. */
export type SessionStatus = 'PROGRESS' | (typeof CHECK_SESSION_STATUSES)[number];

export type CheckSessionTable = {
  id: string;
  account_id: string;
  check_id: string;
  check_type: CheckType;
  name: string;
  trigger_source: TriggerSource;
  /** PROGRESS while runs are pending, then a final status. */
  status: SessionStatus;
  /** Locations the session runs in, a JSON array. */
  run_locations: JsonColumn<string[]>;
  started_at: number;
  stopped_at: number | null;
  /** Runs that ended without a result (expired unclaimed); > 0 ends the session TIMED_OUT. */
  timed_out_runs: Generated<number>;
};

export type JobTable = {
  id: string;
  account_id: string;
  check_id: string;
  check_session_id: string | null;
  location: string;
  job_class: string;
  check_type: CheckType;
  /** queued | leased. A job that ends (result, expiry, failure) is deleted (migration 0006_queue_bounds). */
  state: string;
  attempt: number;
  /** Times the job was claimed; > 1 after a lease was lost. */
  claims: number;
  /** The job as handed to an agent, JSON (without lease fields). */
  payload: string;
  /** When the job may be claimed: its enqueue time, later for a retry waiting out its back-off. */
  enqueued_at: number;
  /** A queued job not claimed by this time expires (6 minutes by default). */
  expires_at: number;
  agent_id: string | null;
  lease_expires_at: number | null;
  /** SHA-256 of the accepted result body, to recognise a repeated post. */
  result_hash: string | null;
  /** Runtime the job's script needs; null when it runs no script (0006_queue_bounds). */
  runtime_id: string | null;
  /** Agents that lost this job's lease, comma-separated; it is never leased to them again. */
  lost_agents: Generated<string>;
  /** The run the job belongs to: shared by the locations of one round and kept by retries (0009_alerting). */
  round_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the agent acknowledged the claim (epoch ms); null until then (0014_run_locations). */
  acknowledged_at: ColumnType<number | null, number | null | undefined, number | null>;
};

/**
 * A run that ended without running (0014_run_locations): its location, why, and when (epoch ms).
 * `round_id` is the run (`checkRunId`); `check_session_id` the session that started it, if any.
 */
export type ExpiredRunTable = {
  id: string;
  account_id: string;
  check_id: string;
  check_session_id: string | null;
  round_id: string | null;
  location: string;
  reason: string;
  expired_at: number;
};

/**
 * A run of a check's content before it is saved (0018_test_runs): `id` is the check id its job, session and
 * result carry, never a `checks` row. Kept an hour after `created_at` (epoch ms), then deleted with them.
 */
export type TestRunTable = {
  id: string;
  account_id: string;
  check_session_id: string;
  check_type: CheckType;
  created_at: number;
};

export type CheckResultTable = {
  id: string;
  account_id: string;
  check_id: string;
  job_id: string;
  check_session_id: string | null;
  run_location: string;
  status: RunStatus;
  has_failures: number;
  has_errors: number;
  is_degraded: number;
  response_time: number;
  result_type: CheckResult['resultType'];
  started_at: number;
  stopped_at: number;
  /** The whole result, JSON. */
  doc: JsonColumn<CheckResult>;
  created_at: number;
  /** HTTP timing phases, ms; null when the run has none (migration 0003_analytics, see analyticsColumnsOf). */
  phase_wait: number | null;
  phase_dns: number | null;
  phase_tcp: number | null;
  phase_first_byte: number | null;
  phase_download: number | null;
  /** HTTP status code of the final response; null without one (0003_analytics). */
  status_code: number | null;
  /** Attempts the run took; defaults to 1 (0003_analytics). */
  attempts: Generated<number>;
  /** Agent that posted the result; null for a result the service wrote (0006_queue_bounds). */
  agent_id: string | null;
  /** SHA-256 of the posted body, to recognise a repeated post once the job is gone. */
  result_hash: string | null;
  /** 1 while the run's artifact files are kept; artifact retention sets 0 when it deletes them. */
  has_artifacts: Generated<number>;
  /** The run (round) of the job; null for results stored before 0009_alerting. */
  round_id: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * 1 once the result-details task looked at the result (a passing run's bulky parts dropped from `doc`); 0
   * before (0017_result_details, runs/results/compaction.ts).
   */
  details_settled: Generated<number>;
};

export type AgentTable = {
  id: string;
  account_id: string;
  version: string;
  last_seen_at: number;
  /** Private location whose key the agent last used; null for an account API key (migration 0005_private_locations). */
  location_id: string | null;
  /** Epoch ms of the agent's first successful claim; null until then (migration 0008_agent_status). */
  first_seen_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** What its last claim reported, JSON `{ freeSlots, checkTypes, runtimes }`; null until then (0008_agent_status). */
  claim_report: ColumnType<
    StoredJson<Partial<Doc<'agents.claim_report'>>> | null,
    string | null | undefined,
    string | null
  >;
  /** The host name the agent reports with its claims; null until then (0014_run_locations). */
  host_name: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the agent said it stopped, epoch ms; null while it runs (0014_run_locations). */
  stopped_at: ColumnType<number | null, number | null | undefined, number | null>;
};

export type AgentEventTable = {
  id: Generated<number>;
  account_id: string;
  agent_id: string;
  /** The error report as the agent posted it, JSON. */
  doc: JsonColumn<AgentEvent>;
  created_at: ColumnType<number, number, never>;
};

/**
 * Work that follows a stored result (error groups, printing, alerting), one row per hook,
 * written in the result's transaction and done by the ResultOutbox worker (0006_queue_bounds).
 */
export type ResultOutboxTable = {
  id: Generated<number>;
  account_id: string;
  result_id: string;
  /** Name of the hook (see ResultOutbox). */
  hook: string;
  /** Attempts made so far. */
  attempts: Generated<number>;
  /** Epoch ms of the next attempt. */
  next_attempt_at: number;
  /** Message of the last failure. */
  last_error: string | null;
  created_at: number;
};

/** Links an incident to a status-page service it affects (migration 0004_status_pages). */
export type IncidentServiceTable = { incident_id: string; service_id: string; account_id: string };

/** Account-wide settings, JSON `{ alertSettings }` (migration 0009_alerting). */
export type AccountSettingsTable = { account_id: string; doc: string; updated_at: number };

/** The alert engine's state of one check, JSON of AlertState (src/service/alerting/engine.ts). */
export type AlertStateTable = { check_id: string; account_id: string; doc: string; updated_at: number };

/** An alert raised for a check (GET /v1/check-alerts); `notified` 1 when a channel was sent it (0009_alerting). */
export type CheckAlertTable = {
  id: string;
  account_id: string;
  check_id: string;
  alert_type: string;
  episode_id: string;
  sequence: number;
  notified: number;
  result_id: string | null;
  /** What the alert said when raised (check name, error message, location, …), JSON. */
  doc: string;
  created_at: number;
};

/**
 * One notification of an alert to one channel (0009_alerting). `state`: PENDING (waiting for
 * its turn or its next attempt), SENDING (leased by a delivery worker until `lease_expires_at`),
 * DELIVERED, FAILED (permanently, or out of attempts).
 */
export type AlertNotificationTable = {
  id: Generated<number>;
  account_id: string;
  alert_id: string | null;
  channel_id: number;
  check_id: string | null;
  alert_type: string;
  idempotency_key: string;
  order_key: string;
  state: string;
  attempts: Generated<number>;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  /** The message's variables, JSON (see NotificationDoc). */
  doc: string;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
  /** A mail to a status-page subscriber (then `channel_id` is 0); null for an alert channel (0012). */
  subscriber_id: Generated<string | null>;
};

/** One delivery attempt of a notification: DELIVERED, RETRY or FAILED (0009_alerting). */
export type AlertAttemptTable = {
  id: Generated<number>;
  notification_id: number;
  account_id: string;
  started_at: number;
  latency_ms: number;
  outcome: string;
  status_code: number | null;
  /** The provider's answer, truncated and scrubbed of the channel's secrets. */
  answer: string | null;
  error: string | null;
};

/** The latest certificate seen for a domain of an account (0009_alerting). */
export type SslCertificateTable = {
  account_id: string;
  domain: string;
  /** SHA-256 fingerprint, colon-separated hex. */
  fingerprint: string;
  /** Epoch ms the certificate expires. */
  valid_to: number;
  check_id: string;
  result_id: string | null;
  seen_at: number;
};

/**
 * A script change an AGENTIC run reported, verified (0034_agentic): `status` APPLIED, PENDING, REJECTED or STALE;
 * `new_version` null until applied. Times in epoch ms.
 */
export type AgenticRepairTable = {
  id: string;
  account_id: string;
  check_id: string;
  result_id: string | null;
  agent_id: string | null;
  kind: string;
  base_version: number;
  new_version: number | null;
  status: string;
  reason: string;
  diff: string;
  script: string;
  created_at: number;
  decided_at: number | null;
  decided_by: string | null;
};

/** The model usage of one stored AGENTIC result (0034_agentic); `duration_ms` ms, `created_at` epoch ms. */
export type AgenticRunTable = {
  result_id: string;
  account_id: string;
  check_id: string;
  mode: string;
  model_calls: number;
  duration_ms: number;
  prompt_tokens: number;
  completion_tokens: number;
  created_at: number;
};

/** A heartbeat monitor's live state (migration 0010_heartbeats). */
export type HeartbeatTable = {
  check_id: string;
  account_id: string;
  token: string;
  status: string;
  due_at: number | null;
  last_ping_at: number | null;
  started_at: number | null;
  /**
   * When the heartbeat was marked LATE, epoch ms, while the FAILED result that says so is still to be stored
   * (0037_heartbeat_late_results); null otherwise.
   */
  late_result_at: number | null;
  /** The expected period, ms; null for a cron `schedule`. */
  period_ms: number | null;
  /** A 5-field cron expression, or null for a period. */
  schedule: string | null;
  /** IANA time zone of `schedule`; null for a period. */
  timezone: string | null;
  /** Grace after the expected ping, ms. */
  grace_ms: number;
  created_at: number;
  updated_at: number | null;
};

/** A ping a heartbeat received (0010_heartbeats); bodies are kept up to 10 000 bytes. */
export type HeartbeatPingTable = {
  id: Generated<number>;
  account_id: string;
  check_id: string;
  kind: string;
  exit_code: number | null;
  method: string;
  remote_address: string | null;
  user_agent: string | null;
  body: string | null;
  body_size_bytes: number;
  received_at: number;
};

/** A signed-in browser of the web app (0011_web_app). Times in epoch ms. */
export type WebSessionTable = {
  /** SHA-256 (hex) of the session id the cookie carries; the id itself is never stored. */
  id_hash: string;
  account_id: string;
  /**
   * The api_keys row the session was opened with (the session ends when the key is deleted); null for a
   * person's session (`user_id`). A session has one or the other.
   */
  api_key_id: string | null;
  /** The person signed in (0030_users); the session ends when the person is deleted. */
  user_id: string | null;
  created_at: number;
  last_seen_at: number;
  /** Absolute end of the session. */
  expires_at: number;
  user_agent: string | null;
};

/**
 * One change recorded in an account's audit log (0033_audit_log, docs/teams.md, "Audit log"). Times in epoch
 * ms; `before` and `after` are masked JSON documents (never a secret), null when there is none.
 */
export type AuditLogTable = {
  /** Sorts in the order the rows were written. */
  id: string;
  account_id: string;
  occurred_at: number;
  actor_kind: string;
  actor_id: string;
  actor_name: string | null;
  /** Null for a private location's key, which has no role. */
  actor_role: string | null;
  action: string;
  resource_type: string;
  resource_id: string | null;
  before: string | null;
  after: string | null;
  ip: string | null;
  user_agent: string | null;
};

/** A person of an account (0030_users, docs/teams.md). Times in epoch ms. */
export type UserTable = {
  id: string;
  account_id: string;
  /** Lower-cased; unique in the store. */
  email: string;
  name: string;
  role: Role;
  /** Argon2id PHC string; null until the person sets a password (invited, or single sign-on only). */
  password_hash: string | null;
  /** The TOTP seed, sealed by the store's SecretBox; null without two-factor. */
  totp_secret: string | null;
  /** When two-factor was turned on; null while it is off (a seed may wait for its first code). */
  totp_enabled_at: number | null;
  /** `<issuer> <sub>` of the person's single sign-on identity; unique when set. */
  sso_subject: string | null;
  created_at: number;
  updated_at: number;
  last_sign_in_at: number | null;
};

/** What a row of `user_tokens` is (0031_user_tokens). */
export type UserTokenKind = 'invitation' | 'reset' | 'challenge' | 'recovery' | 'totp-step';

/**
 * A single-use secret of a person (0031_user_tokens, docs/teams.md): only its HMAC is stored. Times in epoch
 * ms; `expires_at` null for a recovery code.
 */
export type UserTokenTable = {
  token_hash: string;
  kind: UserTokenKind;
  user_id: string;
  account_id: string;
  created_at: number;
  expires_at: number | null;
  used_at: number | null;
  /** Wrong codes given with a two-factor challenge. */
  tries: Generated<number>;
};

/** The latest FINAL result of a check (0011_web_app), kept in the result's transaction. */
export type CheckLastResultTable = {
  check_id: string;
  account_id: string;
  result_id: string;
  check_session_id: string | null;
  run_location: string;
  status: RunStatus;
  has_failures: number;
  has_errors: number;
  is_degraded: number;
  /** Milliseconds. */
  response_time: number;
  started_at: number;
  stopped_at: number;
  /** FINAL results recorded for the check since 0028_list_versions (older ones too): what the ETag reads. */
  revision: Generated<number>;
};

/** FINAL results rolled up per check, UTC hour and run location (0011_web_app). */
export type CheckStatsHourlyTable = {
  check_id: string;
  /** Start of the hour, epoch ms. */
  hour_start: number;
  run_location: string;
  account_id: string;
  runs: number;
  /** Runs with hasFailures or hasErrors. */
  failures: number;
  degraded: number;
  /** Sum of the runs' response times, ms. */
  response_time_sum: number;
  /** Largest response time of the hour, ms. */
  response_time_max: number;
};

/** FINAL results counted per check, UTC day and run status (0024_daily_rollups). */
export type CheckStatsDailyTable = {
  check_id: string;
  /** Start of the UTC day, epoch ms. */
  day_start: number;
  account_id: string;
  /** Runs whose status is PASSED. */
  passed: number;
  /** Runs whose status is DEGRADED. */
  degraded: number;
  /** Runs whose status is FAILED. */
  failed: number;
};

/** An email subscriber of a status page (0012_public_status_pages). Times in epoch ms. */
export type StatusPageSubscriberTable = {
  id: string;
  account_id: string;
  status_page_id: string;
  /** Lower-cased address. */
  email: string;
  /** JSON array of status-page service ids; null for every service of the page. */
  service_ids: string | null;
  created_at: number;
  /** Null until the address confirmed (double opt-in); nothing is mailed before. */
  confirmed_at: number | null;
  confirmation_sent_at: number | null;
};

/** A monitoring-as-code project (migration 0022): keyed per account by its CLI `logical_id`. */
export type ProjectTable = {
  id: string;
  account_id: string;
  logical_id: string;
  name: string;
  repo_url: string | null;
  created_at: number;
  updated_at: number | null;
};

/** A resource a project's deploy created (migration 0022): its construct type, logical id and API id. */
export type ProjectResourceTable = {
  project_id: string;
  type: string;
  logical_id: string;
  physical_id: string;
  created_at: number;
};

/**
 * The trigger URL of a check or check group (0021_triggers): `target_id` the check id, or the group id as
 * text; the token's SHA-256 (hex) to look a call up by and the token sealed with the store's key. Epoch ms.
 */
export type TriggerTable = {
  id: Generated<number>;
  account_id: string;
  target_kind: 'CHECK' | 'GROUP';
  target_id: string;
  token_hash: string;
  token_sealed: string;
  called_at: number | null;
  created_at: number;
  updated_at: number | null;
};

/** An account's OpenID Connect single sign-on (migration 0032, docs/teams.md "Single sign-on"). Epoch ms. */
export type SsoSettingsTable = {
  account_id: string;
  /** The provider's issuer URL, as discovery confirmed it. */
  issuer: string;
  client_id: string;
  /** Sealed by the store's SecretBox (`v1:…`); never stored or answered in clear. */
  client_secret: string;
  /** The role of a person the provider signs in for the first time when no group maps to one. */
  default_role: Role;
  /** The ID token or userinfo claim naming the person's groups; null: roles are not read from groups. */
  groups_claim: string | null;
  /** JSON object text: group name → role. */
  group_roles: string;
  /** 1: only single sign-on opens the account's web sessions; 0: passwords and API keys may too. */
  sso_only: number;
  created_at: number;
  updated_at: number;
};

/** A single sign-on in progress (migration 0032): single-use, deleted by its callback. Epoch ms. */
export type SsoSignInTable = {
  /** SHA-256 (hex) of the `state` sent to the provider. */
  state_hash: string;
  account_id: string;
  /** SHA-256 (hex) of the random value of the browser's `outpost_sso` cookie. */
  browser_hash: string;
  /** The PKCE code verifier, sealed by the SecretBox. */
  code_verifier: string;
  /** The ID token's expected nonce, sealed by the SecretBox. */
  nonce: string;
  created_at: number;
  expires_at: number;
};
