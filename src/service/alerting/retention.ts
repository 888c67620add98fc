import type { RetentionTask } from '../platform/store/retention.js';

/**
 * Alerting's old data (docs/architecture.md, "Retention"): alerts, and delivered or failed notifications
 * with their attempts, live as long as results; a notification still owed is kept.
 */
export const ALERTING_RETENTION: readonly RetentionTask[] = [
  {
    counted: 'alerts',
    run: (pass) =>
      pass.batches(async (limit) =>
        pass.deleteIds(
          'check_alerts',
          await pass.db
            .selectFrom('check_alerts')
            .select('id')
            .where('created_at', '<', pass.resultCutoffMs)
            .limit(limit)
            .execute(),
        ),
      ),
  },
  {
    counted: 'notifications',
    run: (pass) =>
      pass.batches(async (limit) => {
        const rows = await pass.db
          .selectFrom('alert_notifications')
          .select('id')
          .where('created_at', '<', pass.resultCutoffMs)
          .where('state', 'in', ['DELIVERED', 'FAILED'])
          .limit(limit)
          .execute();
        if (rows.length === 0) return 0;
        const ids = rows.map((r) => r.id);
        await pass.db.deleteFrom('alert_attempts').where('notification_id', 'in', ids).execute();
        return pass.deleteIds('alert_notifications', rows);
      }),
  },
];
