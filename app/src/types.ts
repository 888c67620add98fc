/**
 * Shapes of the API answers the pages read. Types only (erased by the build): results and sessions come from
 * the very schemas the service validates with, so the app and the service cannot drift apart.
 */
export type { CheckResult, RunLog, IcmpCheckResult } from '../../src/protocol/result.js';
export type { CheckSession, SessionResult } from '../../src/service/http/responses.js';

/** Check types (docs/checks.md). */
export type CheckType =
  | 'API'
  | 'URL'
  | 'TCP'
  | 'DNS'
  | 'ICMP'
  | 'BROWSER'
  | 'MULTI_STEP'
  | 'PLAYWRIGHT'
  | 'HEARTBEAT'
  | 'AGENTIC';

/** A check as `GET /v1/checks` answers it: the fields every type shares, and its type's own. */
export type Check = {
  id: string;
  name: string;
  checkType: CheckType;
  activated: boolean;
  muted: boolean;
  frequency: number;
  frequencyOffset?: number;
  tags: string[];
  locations: string[];
  privateLocations?: string[];
  groupId: number | null;
  runParallel?: boolean;
  degradedResponseTime?: number;
  maxResponseTime?: number;
  created_at: string;
  updated_at: string | null;
  /** Heartbeat checks: the URL their job pings (docs/heartbeats.md). */
  pingUrl?: string;
  [field: string]: unknown;
};

/**
 * One entry of `GET /v1/check-statuses`: the check's latest final result (the compatible API's fields) and
 * its last 24 hours (Outpost's additions). Times ISO 8601, durations ms.
 */
export type CheckStatus = {
  checkId: string;
  name: string;
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
  /** Response time of the latest result, ms; null before the first result. */
  longestRun: number | null;
  shortestRun: number | null;
  lastRunLocation: string | null;
  lastCheckRunId: string | null;
  sslDaysRemaining: number | null;
  created_at: string;
  updated_at: string | null;
  /** Id of the latest final result (for `/checks/{checkId}/results/{id}`); null before the first. */
  lastResultId: string | null;
  /** When the latest final result started; null before the first. */
  lastRunAt: string | null;
  /** Percent of the last 24 hours' final runs that passed (degraded counts as passed); null without runs. */
  availability24h: number | null;
  /** Mean response time over the last 24 hours, ms; null without runs. */
  responseTimeAvg24h: number | null;
  /** 24 hourly mean response times, oldest first, ms; null for an hour without runs. */
  responseTimes24h: (number | null)[];
};

/** The status a check shows: never shown by colour alone (see components/status.tsx). */
export type CheckDisplayStatus = 'passing' | 'degraded' | 'failing' | 'muted' | 'paused' | 'pending';
