import type { Kysely, Migration } from 'kysely';
import { autoIncrementId } from './dialect.js';

/**
 * `0009_alerting`: the alerting outbox (docs/alerting.md). A stored FINAL result that ends a
 * run is evaluated in the result's own transaction: the check's alert state, the alerts it
 * raises and one notification per subscribed channel are written with it, so a crash either
 * keeps all of them or none. Notifications are then delivered by the delivery worker, which
 * records every attempt.
 */
export const alerting: Migration = {
  async up(db: Kysely<unknown>) {
    // The run a job belongs to: every location of one scheduled round or session of a check
    // shares it, and a retry keeps it, so a parallel run is evaluated once all its locations ended.
    await db.schema.alterTable('jobs').addColumn('round_id', 'text').execute();
    await db.schema.alterTable('check_results').addColumn('round_id', 'text').execute();
    await db.schema.createIndex('check_results_round').on('check_results').column('round_id').execute();
    await db.schema.createIndex('jobs_round').on('jobs').column('round_id').execute();

    // Account-wide settings (alert settings the checks with useGlobalAlertSettings use).
    await db.schema
      .createTable('account_settings')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('doc', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();

    // The alert engine's state per check (the JSON of AlertState), changed only with a result.
    await db.schema
      .createTable('alert_states')
      .addColumn('check_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('doc', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();

    // Every alert raised, sent or muted (GET /v1/check-alerts).
    await db.schema
      .createTable('check_alerts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('check_id', 'text', (c) => c.notNull())
      .addColumn('alert_type', 'text', (c) => c.notNull())
      .addColumn('episode_id', 'text', (c) => c.notNull())
      .addColumn('sequence', 'integer', (c) => c.notNull())
      .addColumn('notified', 'integer', (c) => c.notNull())
      .addColumn('result_id', 'text')
      .addColumn('doc', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('check_alerts_check')
      .on('check_alerts')
      .columns(['account_id', 'check_id', 'created_at'])
      .execute();
    await db.schema.createIndex('check_alerts_created').on('check_alerts').column('created_at').execute();
    await db.schema
      .createIndex('check_alerts_account')
      .on('check_alerts')
      .columns(['account_id', 'created_at'])
      .execute();

    // One notification per (alert, channel); the idempotency key is unique so nothing is ever
    // queued twice, and it is what receivers see (webhook-id, Message-ID, dedup keys).
    await autoIncrementId(db, db.schema.createTable('alert_notifications'))
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('alert_id', 'text')
      .addColumn('channel_id', 'integer', (c) => c.notNull())
      .addColumn('check_id', 'text')
      .addColumn('alert_type', 'text', (c) => c.notNull())
      .addColumn('idempotency_key', 'text', (c) => c.notNull().unique())
      // Notifications of one (channel, check) are delivered in id order: the key they share.
      .addColumn('order_key', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'bigint')
      .addColumn('doc', 'text', (c) => c.notNull())
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('delivered_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('alert_notifications_due')
      .on('alert_notifications')
      .columns(['state', 'next_attempt_at'])
      .execute();
    await db.schema
      .createIndex('alert_notifications_order')
      .on('alert_notifications')
      .columns(['order_key', 'state', 'id'])
      .execute();
    await db.schema
      .createIndex('alert_notifications_created')
      .on('alert_notifications')
      .column('created_at')
      .execute();
    await db.schema
      .createIndex('alert_notifications_account')
      .on('alert_notifications')
      .columns(['account_id', 'id'])
      .execute();

    // Every delivery attempt of a notification, kept with it.
    await autoIncrementId(db, db.schema.createTable('alert_attempts'))
      .addColumn('notification_id', 'integer', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('latency_ms', 'double precision', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('answer', 'text')
      .addColumn('error', 'text')
      .execute();
    await db.schema
      .createIndex('alert_attempts_notification')
      .on('alert_attempts')
      .columns(['notification_id', 'id'])
      .execute();

    // The latest certificate seen per (account, domain), for SSL expiry alerts.
    await db.schema
      .createTable('ssl_certificates')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('domain', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('valid_to', 'bigint', (c) => c.notNull())
      .addColumn('check_id', 'text', (c) => c.notNull())
      .addColumn('result_id', 'text')
      .addColumn('seen_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('ssl_certificates_pk', ['account_id', 'domain'])
      .execute();
  },
};
