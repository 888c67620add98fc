import type { Kysely } from 'kysely';
import type { CheckResult } from '../protocol/index.js';
import type { Logger } from '../common/logger.js';
import type { AnalyticsWorkers } from './analytics/workers.js';
import type { OutboundPolicy } from './platform/http/outbound-policy.js';
import type { CustomDomainPolicy } from './status-pages/admin/custom-domains.js';
import type { ArtifactStore } from './runs/artifacts/artifacts.js';
import type { JobQueue } from './runs/queue/queue.js';
import type { CheckSessions } from './runs/sessions/sessions.js';
import type { Database } from './platform/store/database.js';

/** What routes share: the store, the queue, sessions, artifacts, the log and the shutdown signal. */
export type ServiceContext = {
  db: Kysely<Database>;
  queue: JobQueue;
  sessions: CheckSessions;
  log: Logger;
  /** Aborts when the service starts closing, so long polls answer at once. */
  shutdown: AbortSignal;
  /** Reader threads for analytics over a store file; null for an in-memory store or one core. */
  analyticsWorkers: AnalyticsWorkers | null;
  /** Files agents upload for their runs (traces, screenshots, …). */
  artifacts: ArtifactStore;
  /**
   * Where people open the service (`OUTPOST_APP_URL`), without a trailing slash: the base of links the
   * service writes (check sessions, alerts, ping URLs, status-page feeds and mail).
   */
  appUrl: string;
  /**
   * Which addresses the URLs users give (alert channels) may reach (OUTPOST_OUTBOUND_ALLOW,
   * OUTPOST_OUTBOUND_PRIVATE; docs/alerting.md, "Where alerts may go").
   */
  outbound: OutboundPolicy;
  /**
   * Status-page custom domains (docs/status-pages.md, "Custom domains"): the service's own host names, the
   * operator's allow-list (OUTPOST_STATUS_PAGE_DOMAINS) and the TXT lookup (OUTPOST_DNS_SERVERS).
   */
  customDomains: CustomDomainPolicy;
};

/** A stored result, as result hooks see it. */
export type StoredResult = { accountId: string; jobId: string; checkId: string; result: CheckResult };

/** Something to do after a result is stored. */
export type ResultHook = (stored: StoredResult) => void | Promise<void>;
