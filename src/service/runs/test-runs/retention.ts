import type { RetentionTask } from '../../platform/store/retention.js';
import type { Artifacts } from '../artifacts/artifacts.js';
import { TestRunQueries } from './store.js';

/** How long a test run, its session, result and artifact files are kept after it was made: 1 hour, in ms. */
export const TEST_RUN_KEPT_MS = 3_600_000;

/**
 * Deletes test runs made more than {@link TEST_RUN_KEPT_MS} before the pass (docs/api.md, "Check sessions"):
 * their artifact files first, then, in one transaction per run, their result, job, expired-run record, check
 * session and row. Counted as `testRuns`.
 *
 * @param artifacts where the agents' uploads are kept.
 */
export function testRunRetention(artifacts: Artifacts): RetentionTask[] {
  return [
    {
      counted: 'testRuns',
      run: (pass) =>
        pass.batches(async (limit) => {
          const runs = await new TestRunQueries(pass.db).madeBefore(pass.nowMs - TEST_RUN_KEPT_MS, limit);
          for (const run of runs) {
            for (const jobId of await new TestRunQueries(pass.db).jobIds(run.id)) {
              await artifacts.removeJob(run.account_id, jobId);
            }
            await pass.db.transaction().execute((tx) => new TestRunQueries(tx).delete(run));
          }
          return runs.length;
        }),
    },
  ];
}
