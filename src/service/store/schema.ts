import type { ColumnType, Generated } from 'kysely';

/**
 * Tables of the service store. Portable types only (text, integer, real):
 * JSON documents are stored as text so the same queries run on SQLite and
 * PostgreSQL. Times are epoch milliseconds in integer columns.
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
};

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
};

export type CheckTable = {
  id: string;
  account_id: string;
  check_type: string;
  name: string;
  activated: number;
  /** Tags as a JSON array, duplicated out of `doc` for filtering. */
  tags: string;
  frequency: number;
  frequency_offset: number | null;
  /** The whole check as the API shows it, JSON. */
  doc: string;
  /** Epoch ms of the next scheduled run; null when not activated. */
  next_run_at: number | null;
  /** Round-robin cursor over the check's locations. */
  location_cursor: number;
  created_at: number;
  updated_at: number | null;
};

export type CheckSessionTable = {
  id: string;
  account_id: string;
  check_id: string;
  check_type: string;
  name: string;
  trigger_source: string;
  /** PROGRESS while runs are pending, then a final status. */
  status: string;
  run_locations: string;
  started_at: number;
  stopped_at: number | null;
};

export type JobTable = {
  id: string;
  account_id: string;
  check_id: string;
  check_session_id: string | null;
  location: string;
  job_class: string;
  check_type: string;
  /** queued | leased | done | expired */
  state: string;
  attempt: number;
  /** Times the job was claimed; > 1 after a lease was lost. */
  claims: number;
  /** The job as handed to an agent, JSON (without lease fields). */
  payload: string;
  enqueued_at: number;
  /** A queued job not claimed by this time expires (6 minutes by default). */
  expires_at: number;
  agent_id: string | null;
  lease_expires_at: number | null;
  /** SHA-256 of the accepted result body, to recognise a repeated post. */
  result_hash: string | null;
};

export type CheckResultTable = {
  id: string;
  account_id: string;
  check_id: string;
  job_id: string;
  check_session_id: string | null;
  run_location: string;
  status: string;
  has_failures: number;
  has_errors: number;
  is_degraded: number;
  response_time: number;
  result_type: string;
  started_at: number;
  stopped_at: number;
  /** The whole result, JSON. */
  doc: string;
  created_at: number;
};

export type AgentTable = {
  id: string;
  account_id: string;
  version: string;
  last_seen_at: number;
};

export type AgentEventTable = {
  id: Generated<number>;
  account_id: string;
  agent_id: string;
  doc: string;
  created_at: ColumnType<number, number, never>;
};
