import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { sql } from 'kysely';
import type { RetentionPass, RetentionTask } from '../platform/store/retention.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * The plain resources' old data (docs/architecture.md, "Retention"): the hourly and daily check-status
 * rollups of hours and days older than results (not counted), agent error reports (`agent_events_created`) and agents not
 * seen for `agentDays` (`agents_seen`).
 */
export const RESOURCES_RETENTION: readonly RetentionTask[] = [
  { run: (pass) => pruneRollup(pass, ROLLUPS.hourly) },
  { run: (pass) => pruneRollup(pass, ROLLUPS.daily) },
  {
    counted: 'agentEvents',
    run: (pass) =>
      pass.batches(async (limit) =>
        pass.deleteIds(
          'agent_events',
          await pass.db
            .selectFrom('agent_events')
            .select('id')
            .where('created_at', '<', pass.agentCutoffMs)
            .limit(limit)
            .execute(),
        ),
      ),
  },
  {
    counted: 'agents',
    run: async (pass) =>
      Number(
        (await pass.db.deleteFrom('agents').where('last_seen_at', '<', pass.agentCutoffMs).executeTakeFirst())
          .numDeletedRows,
      ),
  },
];

/** The check-status rollups, each keyed by account and the start of its bucket (epoch ms). */
const ROLLUPS = {
  hourly: { table: 'check_stats_hourly', start: 'hour_start', widthMs: HOUR_MS },
  daily: { table: 'check_stats_daily', start: 'day_start', widthMs: DAY_MS },
} as const;

/**
 * Deletes the rows of a rollup whose bucket (hour or UTC day) ended by the results' cut-off: one statement per
 * (account, bucket), a row per check (and run location, hourly), found by the rollup's (account_id, start)
 * index, yielding between statements. Returns 0 (not counted).
 */
async function pruneRollup(
  pass: RetentionPass,
  rollup: (typeof ROLLUPS)[keyof typeof ROLLUPS],
): Promise<number> {
  const lastStart = pass.resultCutoffMs - rollup.widthMs;
  const start = sql.ref(rollup.start);
  const accounts = await pass.db.selectFrom('accounts').select('id').execute();
  for (const { id } of accounts) {
    for (;;) {
      const oldest = await pass.db
        .selectFrom(rollup.table)
        .select(sql<number>`${start}`.as('start'))
        .where('account_id', '=', id)
        .where(start, '<=', lastStart)
        .orderBy(start)
        .limit(1)
        .executeTakeFirst();
      if (!oldest || pass.stopped()) break;
      await pass.db
        .deleteFrom(rollup.table)
        .where('account_id', '=', id)
        .where(start, '=', oldest.start)
        .execute();
      await yieldToLoop();
    }
  }
  return 0;
}
