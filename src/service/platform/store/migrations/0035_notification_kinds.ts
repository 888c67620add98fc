import { type Kysely, type Migration, sql } from 'kysely';

/**
 * `0035_notification_kinds`: the delivery worker's statements each read an index made for them.
 *
 * A pass asks for the due notifications to alert channels (`subscriber_id` null) and, in slots of their own,
 * the due mails to status-page subscribers (`subscriber_id` set). Both walked `alert_notifications_due`
 * (`state, next_attempt_at`) and filtered by kind row by row, so each pass asking for subscriber mail first
 * read every due alert notification: with 1,000 alerts queued by a burst of failures, 0.14–0.17 ms of
 * SQLite per pass, and a burst makes a pass per send.
 * - `alert_notifications_due_channel` and `alert_notifications_due_subscriber`: `(state, next_attempt_at,
 *   id)` where `subscriber_id` is null, and where it is not (partial indexes, SQLite and PostgreSQL alike).
 *   Each due query reads only its own kind's rows, in the order it asks for.
 * - `alert_notifications_leases` on `(state, lease_expires_at)` replaces `alert_notifications_due`: the
 *   statements that look at every kind look for sends whose lease ran out. Dropping the old index also
 *   keeps SQLite's planner, which has no statistics here, from preferring it to the partial ones.
 */
export const notificationKinds: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('alert_notifications_due_channel')
      .on('alert_notifications')
      .columns(['state', 'next_attempt_at', 'id'])
      .where(sql.ref('subscriber_id'), 'is', null)
      .execute();
    await db.schema
      .createIndex('alert_notifications_due_subscriber')
      .on('alert_notifications')
      .columns(['state', 'next_attempt_at', 'id'])
      .where(sql.ref('subscriber_id'), 'is not', null)
      .execute();
    await db.schema
      .createIndex('alert_notifications_leases')
      .on('alert_notifications')
      .columns(['state', 'lease_expires_at'])
      .execute();
    await db.schema.dropIndex('alert_notifications_due').execute();
  },
};
