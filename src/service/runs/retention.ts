import type { RetentionPass, RetentionTask } from '../platform/store/retention.js';
import { readDoc, writeDoc } from '../platform/store/schema.js';
import { compactResult, isPassingRun } from './results/compaction.js';
import type { Artifacts } from './artifacts/artifacts.js';
import { DatabaseArtifactStore } from './artifacts/database-store.js';
import { PARTITION_DAYS_AHEAD, ResultPartitions } from '../platform/store/result-partitions.js';

const DAY_MS = 86_400_000;

/**
 * The partition side of the results' retention (PostgreSQL; nothing on SQLite): makes the partitions of
 * yesterday to a week ahead that are missing, then drops the partitions whose day ended by the cut-off.
 * @returns the result rows the dropped partitions held.
 */
async function dropResultPartitions(pass: RetentionPass): Promise<number> {
  const partitions = new ResultPartitions(pass.db);
  await partitions.ensureDays(pass.nowMs - DAY_MS, pass.nowMs + PARTITION_DAYS_AHEAD * DAY_MS);
  return (await partitions.dropEndedBy(pass.resultCutoffMs)).rows;
}

/**
 * The run pipeline's old data (docs/architecture.md, "Retention"): artifact files first, so results deleted
 * next leave no files behind (results keep their row, `has_artifacts` cleared); then results
 * (`check_results_created`, `check_results_artifacts_created`); then the bulky parts of passing runs past
 * OUTPOST_PASSING_DETAIL_HOURS (results/compaction.ts, `check_results_details_pending`); ended check sessions
 * (`check_sessions_started`) and the records of runs that never ran (`expired_runs_time`).
 *
 * @param artifacts where the agents' uploads are kept.
 */
export function runRetention(artifacts: Artifacts): RetentionTask[] {
  return [
    {
      // Chunks of artifact uploads that never completed (database artifact store: a replica stopped
      // mid-upload), an hour on; not counted. With artifacts in files the table is empty.
      run: (pass) =>
        pass.batches((limit) => new DatabaseArtifactStore(pass.db).pruneOrphans(pass.nowMs, limit)),
    },
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
      // On PostgreSQL the days past the cut-off go as whole partitions first (platform/store/result-partitions.ts), and the
      // week ahead gets its partitions; the batches then take what is left (rows of the default partition, of
      // the day that holds the cut-off, of a partition kept for its artifacts). On SQLite only the batches run.
      run: async (pass) =>
        (await dropResultPartitions(pass)) +
        (await pass.batches(async (limit) =>
          pass.deleteIds(
            'check_results',
            await pass.db
              .selectFrom('check_results')
              .select('id')
              .where('created_at', '<', pass.resultCutoffMs)
              .limit(limit)
              .execute(),
          ),
        )),
    },
    {
      // Passing runs' bulky parts, once older than OUTPOST_PASSING_DETAIL_HOURS (compaction.ts); failing and
      // degraded runs are only marked. Index `check_results_details_pending` holds the results not looked at.
      run: (pass) =>
        pass.batches(async (limit) => {
          const rows = await pass.db
            .selectFrom('check_results')
            .select(['id', 'status', 'has_failures', 'has_errors', 'is_degraded', 'doc'])
            .where('details_settled', '=', 0)
            .where('created_at', '<', pass.passingDetailCutoffMs)
            .orderBy('created_at')
            .limit(limit)
            .execute();
          if (rows.length === 0) return 0;
          await pass.db.transaction().execute(async (tx) => {
            const kept: string[] = [];
            for (const row of rows) {
              const compacted = isPassingRun(row)
                ? compactResult(readDoc(row.doc), pass.passingDetailHours)
                : null;
              if (compacted === null) {
                kept.push(row.id);
                continue;
              }
              // `details_settled = 0`: another replica that got there first is left as it wrote it.
              await tx
                .updateTable('check_results')
                .set({ doc: writeDoc(compacted), details_settled: 1 })
                .where('id', '=', row.id)
                .where('details_settled', '=', 0)
                .execute();
            }
            if (kept.length > 0) {
              await tx
                .updateTable('check_results')
                .set({ details_settled: 1 })
                .where('id', 'in', kept)
                .execute();
            }
          });
          return rows.length;
        }),
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
