import type { RetentionTask } from '../platform/store/retention.js';
import type { ArtifactStore } from './artifacts/artifacts.js';

/**
 * The run pipeline's old data (docs/architecture.md, "Retention"): artifact files first, so results deleted
 * next leave no files behind (results keep their row, `has_artifacts` cleared); then results
 * (`check_results_created`, `check_results_artifacts_created`), ended check sessions
 * (`check_sessions_started`) and the records of runs that never ran (`expired_runs_time`).
 *
 * @param artifacts where the agents' uploads are kept.
 */
export function runRetention(artifacts: ArtifactStore): RetentionTask[] {
  return [
    {
      counted: 'artifacts',
      run: (pass) =>
        pass.batches(async (limit) => {
          const rows = await pass.db
            .selectFrom('check_results')
            .select(['id', 'account_id', 'job_id'])
            .where('has_artifacts', '=', 1)
            .where('created_at', '<', pass.artifactCutoffMs)
            .limit(limit)
            .execute();
          for (const row of rows) await artifacts.removeJob(row.account_id, row.job_id);
          if (rows.length > 0) {
            await pass.db
              .updateTable('check_results')
              .set({ has_artifacts: 0 })
              .where(
                'id',
                'in',
                rows.map((r) => r.id),
              )
              .execute();
          }
          return rows.length;
        }),
    },
    {
      counted: 'results',
      run: (pass) =>
        pass.batches(async (limit) =>
          pass.deleteIds(
            'check_results',
            await pass.db
              .selectFrom('check_results')
              .select('id')
              .where('created_at', '<', pass.resultCutoffMs)
              .limit(limit)
              .execute(),
          ),
        ),
    },
    {
      counted: 'sessions',
      run: (pass) =>
        pass.batches(async (limit) =>
          pass.deleteIds(
            'check_sessions',
            await pass.db
              .selectFrom('check_sessions')
              .select('id')
              .where('started_at', '<', pass.resultCutoffMs)
              .where('status', '!=', 'PROGRESS')
              .limit(limit)
              .execute(),
          ),
        ),
    },
    {
      // Runs that never ran are kept as long as results (`expired_runs_time`).
      run: (pass) =>
        pass.batches(async (limit) =>
          pass.deleteIds(
            'expired_runs',
            await pass.db
              .selectFrom('expired_runs')
              .select('id')
              .where('expired_at', '<', pass.resultCutoffMs)
              .limit(limit)
              .execute(),
          ),
        ),
    },
  ];
}
