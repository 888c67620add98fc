import type { CheckType, Job } from '../../../protocol/index.js';
import { jobClassOf } from '../../../protocol/index.js';
import { checkTypeEntry } from '../../checks/index.js';
import { SecretBox, secretBoxOf } from '../../platform/store/secret-box.js';
import type { Insertable } from 'kysely';
import type { Database } from '../../platform/store/database.js';
import type { JobQueries } from './store.js';

/**
 * The runtime a job needs on its agent: the check's `runtimeId` when the job runs a script (a type
 * whose registry entry has `runsScript`, or an API check with a setup or teardown script), else null.
 * @throws Error when the service accepts no `checkType` (see checkTypeEntry): jobs are only built
 *   for stored checks, which always have a type of the registry.
 */
export function requiredRuntimeOf(job: Job, checkType: CheckType): string | null {
  const runsScript =
    checkTypeEntry(checkType).runsScript || Boolean(job.setupScript) || Boolean(job.tearDownScript);
  return runsScript ? job.check.runtimeId : null;
}

/** The place a job's payload is sealed for (SecretBox AAD): a payload copied to another row does not open. */
const payloadPlace = (jobId: string) => `jobs:${jobId}:payload`;

/**
 * A job's payload as stored: sealed with the store's SecretBox (it holds the merged secret variables and
 * client-certificate keys, issue 9, 1.7); a row written before sealing is plain JSON.
 * @throws OutpostError OUTPOST_ERR_ENCRYPTION_KEY when it cannot be opened (wrong key, damaged).
 */
export function openPayload(store: JobQueries, jobId: string, stored: string): Job {
  const text = SecretBox.isSealed(stored) ? secretBoxOf(store.db).open(stored, payloadPlace(jobId)) : stored;
  return JSON.parse(text) as Job;
}

/** Where and when a job is queued (see insertQueuedJob). Times are epoch ms. */
export type QueuedJobSpec = {
  job: Job;
  checkType: CheckType;
  /** When it may be claimed (`enqueued_at`): now, or later for a retry that waits its back-off. */
  readyAtMs: number;
  /** How long a queued job waits for a claim before it expires, ms (QueueOptions.queueExpiryMs). */
  queueExpiryMs: number;
  /**
   * The run it belongs to (`round_id`; `checkRunId` in the protocol and API, "run" in the docs):
   * the first job's id of the run, shared by a parallel check's locations and kept by retries.
   */
  roundId: string | null;
};

/**
 * Inserts a queued job in the caller's transaction: its payload sealed (see openPayload), the
 * runtime it needs (requiredRuntimeOf) and its expiry `queueExpiryMs` after `readyAtMs`. Used by
 * the queue (new runs) and the result ingest (the next attempt of a retried run).
 */
export async function insertQueuedJob(store: JobQueries, spec: QueuedJobSpec): Promise<void> {
  await store.insertJobs([queuedJobRow(store, spec)]);
}

/** The `jobs` row of a queued job (see insertQueuedJob), for inserting many at once (JobQueries.insertJobs). */
export function queuedJobRow(store: JobQueries, spec: QueuedJobSpec): Insertable<Database['jobs']> {
  const { job, checkType, readyAtMs } = spec;
  return {
    id: job.jobId,
    account_id: job.accountId,
    check_id: job.check.id,
    check_session_id: job.checkSessionId,
    location: job.runLocation,
    job_class: jobClassOf(checkType),
    check_type: checkType,
    state: 'queued',
    attempt: job.attempt,
    claims: 0,
    payload: secretBoxOf(store.db).seal(JSON.stringify(job), payloadPlace(job.jobId)),
    enqueued_at: readyAtMs,
    expires_at: readyAtMs + spec.queueExpiryMs,
    agent_id: null,
    lease_expires_at: null,
    result_hash: null,
    runtime_id: requiredRuntimeOf(job, checkType),
    round_id: spec.roundId,
  };
}
