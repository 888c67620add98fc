import type { Insertable, Kysely, Transaction } from 'kysely';
import type { ChannelDoc } from './alert-channels/alert-channels.js';
import { type SubscriberCheck, subscribesTo } from './alert-channels/alert-channels.js';
import type { GroupDoc } from '../resources/index.js';
import type { CheckDoc } from '../checks/index.js';
import type { CheckResult } from '../../protocol/index.js';
import type { Database } from '../platform/store/database.js';
import { KEYED_LOCKS, lockKeyForTransaction } from '../platform/store/dialect.js';
import { type AlertNotificationTable, type CheckAlertTable, readDoc } from '../platform/store/schema.js';
import { Statement } from '../platform/store/statement.js';
import type { AlertSettingsDoc } from './settings.js';

type Tx = Kysely<Database> | Transaction<Database>;

/** What of a subscribed channel decides the alerts it takes (channelWants, the SSL milestones): no secret. */
export type SubscribedChannelSettings = Pick<
  ChannelDoc,
  'sendFailure' | 'sendDegraded' | 'sendRecovery' | 'sslExpiry' | 'sslExpiryThreshold'
>;

// The statements of every FINAL result, built once (platform/store/statement.ts).
// The check and its alert state in one statement: every FINAL result needs both (one statement less per result).
const CHECK_WITH_STATE = new Statement((db: Kysely<Database>, v: { accountId: string; checkId: string }) =>
  db
    .selectFrom('checks')
    .leftJoin('alert_states', 'alert_states.check_id', 'checks.id')
    .select(['checks.doc as doc', 'alert_states.doc as state'])
    .where('checks.account_id', '=', v.accountId)
    .where('checks.id', '=', v.checkId),
);
const ACCOUNT_SETTINGS = new Statement((db: Kysely<Database>, v: { accountId: string }) =>
  db.selectFrom('account_settings').select('doc').where('account_id', '=', v.accountId),
);
const newerRun = (db: Kysely<Database>, v: { checkId: string; startedAtMs: number }) =>
  db
    .selectFrom('check_results')
    .select('id')
    .where('check_id', '=', v.checkId)
    .where('started_at', '>', v.startedAtMs)
    .where('result_type', '=', 'FINAL');
const NEWER_RUN_OF_OTHER_ROUND = new Statement(
  (db: Kysely<Database>, v: { checkId: string; startedAtMs: number; roundId: string }) =>
    newerRun(db, v)
      .where((eb) => eb.or([eb('round_id', 'is', null), eb('round_id', '!=', v.roundId)]))
      .limit(1),
);
const NEWER_RUN_ANY = new Statement((db: Kysely<Database>, v: { checkId: string; startedAtMs: number }) =>
  newerRun(db, v).limit(1),
);
const SAVE_ALERT_STATE = new Statement(
  (db: Kysely<Database>, v: { checkId: string; accountId: string; doc: string; nowMs: number }) =>
    db
      .insertInto('alert_states')
      .values({ check_id: v.checkId, account_id: v.accountId, doc: v.doc, updated_at: v.nowMs })
      .onConflict((oc) => oc.column('check_id').doUpdateSet({ doc: v.doc, updated_at: v.nowMs })),
);

/**
 * Every statement alerting runs in a result's transaction (recorder.ts) and the account settings
 * API: portable kysely only. Inserts that must happen once (alerts, notifications) are
 * `ON CONFLICT DO NOTHING` on their key, which SQLite and PostgreSQL read alike.
 */
/** A new alert's row: every column, as the recorder writes them. */
const INSERT_ALERT = new Statement((db: Kysely<Database>, v: CheckAlertTable) =>
  db
    .insertInto('check_alerts')
    .values({
      id: v.id,
      account_id: v.account_id,
      check_id: v.check_id,
      alert_type: v.alert_type,
      episode_id: v.episode_id,
      sequence: v.sequence,
      notified: v.notified,
      result_id: v.result_id,
      doc: v.doc,
      created_at: v.created_at,
    })
    .onConflict((oc) => oc.column('id').doNothing()),
);
/** A new notification's row: every column the recorder writes (the others keep their defaults). */
type NotificationInsert = Pick<
  AlertNotificationTable,
  | 'account_id'
  | 'alert_id'
  | 'channel_id'
  | 'check_id'
  | 'alert_type'
  | 'idempotency_key'
  | 'order_key'
  | 'state'
  | 'next_attempt_at'
  | 'doc'
  | 'created_at'
>;
const INSERT_NOTIFICATION = new Statement((db: Kysely<Database>, v: NotificationInsert) =>
  db
    .insertInto('alert_notifications')
    .values({
      account_id: v.account_id,
      alert_id: v.alert_id,
      channel_id: v.channel_id,
      check_id: v.check_id,
      alert_type: v.alert_type,
      idempotency_key: v.idempotency_key,
      order_key: v.order_key,
      state: v.state,
      next_attempt_at: v.next_attempt_at,
      doc: v.doc,
      created_at: v.created_at,
    })
    .onConflict((oc) => oc.column('idempotency_key').doNothing()),
);
const ACCOUNT_CHANNELS = new Statement((db: Kysely<Database>, v: { accountId: string }) =>
  db.selectFrom('alert_channels').selectAll().where('account_id', '=', v.accountId).orderBy('id'),
);

export class AlertQueries {
  readonly #db: Tx;

  constructor(db: Tx) {
    this.#db = db;
  }

  /**
   * The check's document and the engine's stored state of it (null before its first judged run), or
   * undefined when the check was deleted.
   */
  async checkWithState<T>(
    accountId: string,
    checkId: string,
  ): Promise<{ check: CheckDoc; state: T | null } | undefined> {
    const row = await CHECK_WITH_STATE.first(this.#db, { accountId, checkId });
    if (!row) return undefined;
    return { check: readDoc(row.doc), state: row.state === null ? null : (JSON.parse(row.state) as T) };
  }

  /** The group's document with its name, or null. */
  async group(accountId: string, groupId: number): Promise<(GroupDoc & { name: string }) | null> {
    const row = await this.#db
      .selectFrom('check_groups')
      .select(['doc', 'name'])
      .where('account_id', '=', accountId)
      .where('id', '=', groupId)
      .executeTakeFirst();
    return row ? { ...readDoc(row.doc), name: row.name } : null;
  }

  /** The account's alert settings as set through the API, or null (the field's defaults apply). */
  async accountAlertSettings(accountId: string): Promise<AlertSettingsDoc | null> {
    const row = await ACCOUNT_SETTINGS.first(this.#db, { accountId });
    if (!row) return null;
    return (JSON.parse(row.doc) as { alertSettings?: AlertSettingsDoc }).alertSettings ?? null;
  }

  /** Replaces the account's alert settings. */
  async setAccountAlertSettings(accountId: string, settings: AlertSettingsDoc, nowMs: number): Promise<void> {
    const doc = JSON.stringify({ alertSettings: settings });
    await this.#db
      .insertInto('account_settings')
      .values({ account_id: accountId, doc, updated_at: nowMs })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ doc, updated_at: nowMs }))
      .execute();
  }

  /**
   * Takes the check's alerting lock until the transaction ends (on PostgreSQL; SQLite runs one writer at a
   * time): the FINAL results of one check are judged one after the other, each reading the alert state and
   * the round the one before committed. Without it two results stored at once both read the same state (one
   * failure counted instead of two), and the two last locations of a parallel run each see the other's job
   * still there, so neither judges the run.
   */
  async lockCheckAlerting(checkId: string): Promise<void> {
    await lockKeyForTransaction(this.#db, KEYED_LOCKS.alertedCheck, checkId);
  }

  /** Whether jobs of the round are still queued or running (its run is not complete). */
  async roundHasJobs(roundId: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom('jobs')
      .select('id')
      .where('round_id', '=', roundId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The FINAL results of a round, one per location. */
  async roundResults(roundId: string): Promise<CheckResult[]> {
    const rows = await this.#db
      .selectFrom('check_results')
      .select('doc')
      .where('round_id', '=', roundId)
      .where('result_type', '=', 'FINAL')
      .execute();
    return rows.map((r) => readDoc(r.doc));
  }

  /**
   * Whether the check has a FINAL result of another run that started after `startedAtMs` (index
   * `check_results_check_time`): the run starting then is older than one already judged.
   * `roundId` is the run's own (its other locations are not "another run"); null: none.
   */
  async hasNewerRun(checkId: string, startedAtMs: number, roundId: string | null): Promise<boolean> {
    const row =
      roundId === null
        ? await NEWER_RUN_ANY.first(this.#db, { checkId, startedAtMs })
        : await NEWER_RUN_OF_OTHER_ROUND.first(this.#db, { checkId, startedAtMs, roundId });
    return row !== undefined;
  }

  /** Writes the engine's state of a check. */
  async saveAlertState(accountId: string, checkId: string, state: unknown, nowMs: number): Promise<void> {
    await SAVE_ALERT_STATE.run(this.#db, { checkId, accountId, doc: JSON.stringify(state), nowMs });
  }

  /** Inserts an alert. @returns false when an alert with its id exists (nothing written). */
  async insertAlert(row: CheckAlertTable): Promise<boolean> {
    const result = await INSERT_ALERT.run(this.#db, row);
    return (result.numAffectedRows ?? 0n) > 0n;
  }

  /** Replaces an alert's document (the incident it opened is added after it is recorded). */
  async setAlertDoc(id: string, doc: string): Promise<void> {
    await this.#db.updateTable('check_alerts').set({ doc }).where('id', '=', id).execute();
  }

  /**
   * The account's channels that alert for `check` (subscribesTo), by id, with what decides which alerts they
   * take: one read of the account's channels. Their secrets stay sealed: queueing a notification needs none
   * (the delivery worker opens the channel when it sends).
   */
  async subscribedChannels(
    accountId: string,
    check: SubscriberCheck,
  ): Promise<{ id: number; doc: SubscribedChannelSettings }[]> {
    const rows = await ACCOUNT_CHANNELS.rows(this.#db, { accountId });
    const subscribed: { id: number; doc: SubscribedChannelSettings }[] = [];
    for (const row of rows) {
      const doc = readDoc(row.doc);
      if (!subscribesTo(Number(row.id), doc, check)) continue;
      const { sendFailure, sendDegraded, sendRecovery, sslExpiry, sslExpiryThreshold } = doc;
      subscribed.push({
        id: Number(row.id),
        doc: { sendFailure, sendDegraded, sendRecovery, sslExpiry, sslExpiryThreshold },
      });
    }
    return subscribed;
  }

  /**
   * Queues a notification unless one with its idempotency key exists.
   * @returns whether it was queued.
   */
  async insertNotification(row: NotificationInsert): Promise<boolean> {
    const result = await INSERT_NOTIFICATION.run(this.#db, row);
    return (result.numAffectedRows ?? 0n) > 0n;
  }

  /** Records the latest certificate of a domain. */
  async saveCertificate(row: Insertable<Database['ssl_certificates']>): Promise<void> {
    const { account_id, domain, ...rest } = row;
    await this.#db
      .insertInto('ssl_certificates')
      .values(row)
      .onConflict((oc) => oc.columns(['account_id', 'domain']).doUpdateSet(rest))
      .execute();
  }

  /** The alert of an episode of a check of one type with an incident, if any (incident-trigger.ts). */
  async episodeAlerts(checkId: string, episodeId: string) {
    return this.#db
      .selectFrom('check_alerts')
      .select(['id', 'alert_type', 'doc'])
      .where('check_id', '=', checkId)
      .where('episode_id', '=', episodeId)
      .orderBy('created_at')
      .execute();
  }

  /**
   * One page of the account's alerts (`check_alerts` ⨝ `checks`: alerts of deleted checks are left out),
   * newest first (`created_at`, then `id`, descending), `limit` rows from `offset`; only `checkId`'s when
   * given, and only those created in `[fromMs, toMs)` (epoch ms, each bound when given).
   */
  async alertPage(
    accountId: string,
    page: {
      limit: number;
      offset: number;
      checkId?: string | undefined;
      fromMs?: number | undefined;
      toMs?: number | undefined;
    },
  ) {
    let q = this.#db
      .selectFrom('check_alerts')
      .innerJoin('checks', 'checks.id', 'check_alerts.check_id')
      .select([
        'check_alerts.id',
        'check_alerts.check_id',
        'check_alerts.alert_type',
        'check_alerts.episode_id',
        'check_alerts.notified',
        'check_alerts.result_id',
        'check_alerts.doc',
        'check_alerts.created_at',
      ])
      .where('check_alerts.account_id', '=', accountId)
      .orderBy('check_alerts.created_at', 'desc')
      .orderBy('check_alerts.id', 'desc')
      .limit(page.limit)
      .offset(page.offset);
    if (page.checkId) q = q.where('check_alerts.check_id', '=', page.checkId);
    if (page.fromMs !== undefined) q = q.where('check_alerts.created_at', '>=', page.fromMs);
    if (page.toMs !== undefined) q = q.where('check_alerts.created_at', '<', page.toMs);
    return q.execute();
  }
}
