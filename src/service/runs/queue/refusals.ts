import { HttpError, notFound } from '../../platform/http/errors.js';
import type { JobScope, JobQueries } from './store.js';

/** 409 OUTPOST_ERR_LEASE_LOST for job `jobId`; `what` says what is not done, e.g. "its result is not stored". */
export const leaseLost = (jobId: string, what: string): HttpError =>
  new HttpError('OUTPOST_ERR_LEASE_LOST', `lease of job ${jobId} was lost; ${what}`, { jobId });

/**
 * Throws the answer for a job the agent does not hold: 409 OUTPOST_ERR_LEASE_LOST when the job (or
 * its result) is in the scope, else 404 (another account's or location's jobs are not shown to exist).
 * @throws HttpError always.
 */
export async function refuse(
  store: JobQueries,
  scope: JobScope,
  jobId: string,
  what: string,
): Promise<never> {
  if (await store.jobInScope(scope, jobId)) throw leaseLost(jobId, what);
  if (await store.resultOf(scope, jobId)) throw leaseLost(jobId, what);
  throw notFound('job', jobId);
}
