import { DEFAULT_RUNTIME_ID, type Job } from '../protocol/index.js';

/**
 * The runtime variables every script sees next to the check's own variables: setup and teardown
 * scripts of API checks, browser and multi-step checks (docs/checks.md, "Runtime variables and
 * scrubbing"). They win over a check variable of the same name.
 */
export function runtimeVariables(job: Job): Record<string, string> {
  return {
    ACCOUNT_ID: job.accountId,
    CHECK_ID: job.check.id,
    CHECK_NAME: job.check.name,
    CHECK_TYPE: job.check.checkType,
    CHECK_RUN_ID: job.checkRunId ?? job.jobId,
    REGION: job.runLocation,
    RUNTIME_VERSION: job.check.runtimeId ?? DEFAULT_RUNTIME_ID,
  };
}
