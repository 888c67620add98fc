import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { RetentionPass, RetentionTask } from '../platform/store/retention.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * The plain resources' old data (docs/architecture.md, "Retention"): the hourly and daily check-status
 * rollups of hours and days older than results (not counted), agent error reports (`agent_events_created`) and agents not
 * seen for `agentDays` (`agents_seen`).
 */
export const RESOURCES_RETENTION: readonly RetentionTask[] = [
  { run: pruneHourlyStats },
  { run: pruneDailyStats },
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

/**
 * Deletes the `check_stats_hourly` rows of hours that ended by the results' cut-off: one statement per
 * (account, hour), a row per check and run location, found by the (account_id, hour_start) index,
 * yielding between statements. Returns 0 (not counted).
 */
async function pruneHourlyStats(pass: RetentionPass): Promise<number> {
  const lastHourStart = pass.resultCutoffMs - HOUR_MS;
  const accounts = await pass.db.selectFrom('accounts').select('id').execute();
  for (const { id } of accounts) {
    for (;;) {
      const oldest = await pass.db
        .selectFrom('check_stats_hourly')
        .select('hour_start')
        .where('account_id', '=', id)
        .where('hour_start', '<=', lastHourStart)
        .orderBy('hour_start')
        .limit(1)
        .executeTakeFirst();
      if (!oldest || pass.stopped()) break;
      await pass.db
        .deleteFrom('check_stats_hourly')
        .where('account_id', '=', id)
        .where('hour_start', '=', oldest.hour_start)
        .execute();
      await yieldToLoop();
    }
  }
  return 0;
}

/**
 * Deletes the `check_stats_daily` rows of UTC days that ended by the results' cut-off: one statement per
 * (account, day), a row per check, found by the (account_id, day_start) index, yielding between
 * statements. Returns 0 (not counted).
 */
async function pruneDailyStats(pass: RetentionPass): Promise<number> {
  const lastDayStart = pass.resultCutoffMs - DAY_MS;
  const accounts = await pass.db.selectFrom('accounts').select('id').execute();
  for (const { id } of accounts) {
    for (;;) {
      const oldest = await pass.db
        .selectFrom('check_stats_daily')
        .select('day_start')
        .where('account_id', '=', id)
        .where('day_start', '<=', lastDayStart)
        .orderBy('day_start')
        .limit(1)
        .executeTakeFirst();
      if (!oldest || pass.stopped()) break;
      await pass.db
        .deleteFrom('check_stats_daily')
        .where('account_id', '=', id)
        .where('day_start', '=', oldest.day_start)
        .execute();
      await yieldToLoop();
    }
  }
  return 0;
}
