import type { Kysely } from 'kysely';
import type { CheckResult } from '../protocol/index.js';
import type { Logger } from '../shared/logger.js';
import type { JobQueue } from './queue.js';
import type { CheckSessions } from './sessions.js';
import type { Database } from './store/database.js';

/** What routes share: the store, the queue, sessions, the log and the shutdown signal. */
export type ServiceContext = {
  db: Kysely<Database>;
  queue: JobQueue;
  sessions: CheckSessions;
  log: Logger;
  /** Aborts when the service starts closing, so long polls answer at once. */
  shutdown: AbortSignal;
  /** Called after a new result is stored (used by `outpost up` to print results). */
  onResult?: (accountId: string, jobId: string, result: CheckResult) => void;
};
