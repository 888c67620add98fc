import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import { Statement } from '../../platform/store/statement.js';
import type { ChannelRow } from '../alert-channels/store.js';
import { ChannelQueries } from '../alert-channels/store.js';
import type { Database } from '../../platform/store/database.js';
import type { DeliveryResult } from '../types.js';

/**
 * A row of `alert_notifications`: one notification of one alert (or a channel test) to one channel, or
 * one mail to a status-page subscriber (`subscriber_id` set, `channel_id` 0).
 */
export type NotificationRow = Selectable<Database['alert_notifications']>;
/** A row of `alert_attempts`: one delivery attempt of a notification. */
export type AttemptRow = Selectable<Database['alert_attempts']>;

export { NOTIFICATION_STATES, type NotificationState } from '../enums.js';
import type { NotificationState } from '../enums.js';

/** The lease a worker holds on a notification it sends: who, and the attempt number it claimed. */
export type Lease = { id: number; owner: string; attempts: number };

/** Filters and page of the notifications list; `limit` rows from `offset`, newest first. */
export type NotificationFilter = {
  checkId?: string | undefined;
  alertChannelId?: number | undefined;
  state?: NotificationState | undefined;
  limit: number;
  offset: number;
};

/** The notifications queued for one kind of slot: to alert channels, or mails to status-page subscribers. */
type NotificationKind = 'channel' | 'subscriber';

type KindFilter = NotificationKind | undefined;
type Notifications = Database & { n: Database['alert_notifications'] };

/**
 * Whether `n` is the oldest undelivered notification of its `order_key` (delivery stays in order per channel
 * and check; a FAILED one does not hold back those after it).
 */
function firstOfItsKey(eb: ExpressionBuilder<Notifications, 'n'>) {
  return eb.not(
    eb.exists(
      eb
        .selectFrom('alert_notifications as o')
        .select('o.id')
        .whereRef('o.order_key', '=', 'n.order_key')
        .where('o.state', 'in', ['PENDING', 'SENDING'])
        .whereRef('o.id', '<', 'n.id'),
    ),
  );
}

/**
 * Notifications of `kind` (both when undefined) as the query states it: the partial indexes of
 * 0035_notification_kinds match only `subscriber_id` is / is not null written as there.
 */
function ofKind(kind: KindFilter) {
  return (eb: ExpressionBuilder<Notifications, 'n'>) =>
    kind === undefined ? eb.lit(true) : eb('n.subscriber_id', kind === 'subscriber' ? 'is not' : 'is', null);
}

/**
 * The statements of {@link DeliveryQueries.claimable}, one per kind and limit (a handful: the worker's free
 * slots): built and compiled once each (store/statement.ts), with the limit written into the SQL.
 */
const claimableStatements = new Map<
  string,
  {
    pending: Statement<Database, { nowMs: number }, NotificationRow>;
    expired: Statement<Database, { nowMs: number; maxAttempts: number }, NotificationRow>;
  }
>();

function claimableStatementsFor(kind: KindFilter, limit: number) {
  const key = `${kind ?? 'all'}:${limit}`;
  let statements = claimableStatements.get(key);
  if (statements === undefined) {
    statements = {
      // Two queries, each walking its index in order and stopping after `limit` rows (one OR'ed query
      // sorted every due row on each pass: 1.4 ms with 1,000 queued, paid once per send). The due ones of
      // a kind walk that kind's partial index.
      pending: new Statement((db: Kysely<Database>, v: { nowMs: number }) =>
        db
          .selectFrom('alert_notifications as n')
          .selectAll('n')
          .where('n.state', '=', 'PENDING')
          .where(ofKind(kind))
          .where('n.next_attempt_at', '<=', v.nowMs)
          .where(firstOfItsKey)
          .orderBy('n.next_attempt_at')
          .orderBy('n.id')
          .limit(limit),
      ),
      expired: new Statement((db: Kysely<Database>, v: { nowMs: number; maxAttempts: number }) =>
        db
          .selectFrom('alert_notifications as n')
          .selectAll('n')
          .where('n.state', '=', 'SENDING')
          .where('n.lease_expires_at', '<=', v.nowMs)
          .where('n.attempts', '<', v.maxAttempts)
          .where(ofKind(kind))
          .where(firstOfItsKey)
          .orderBy('n.id')
          .limit(limit),
      ),
    };
    claimableStatements.set(key, statements);
  }
  return statements;
}

/** {@link DeliveryQueries.claim}'s conditional UPDATE (the conditions of `claimable`, checked again). */
const CLAIM = new Statement(
  (
    db: Kysely<Database>,
    v: { id: number; owner: string; nowMs: number; leaseExpiresAt: number; maxAttempts: number },
  ) =>
    db
      .updateTable('alert_notifications as n')
      .set((eb) => ({
        state: 'SENDING',
        lease_owner: v.owner,
        lease_expires_at: v.leaseExpiresAt,
        attempts: eb('attempts', '+', 1),
      }))
      .where('n.id', '=', v.id)
      .where((eb) =>
        eb.or([
          eb.and([eb('n.state', '=', 'PENDING'), eb('n.next_attempt_at', '<=', v.nowMs)]),
          eb.and([
            eb('n.state', '=', 'SENDING'),
            eb('n.lease_expires_at', '<=', v.nowMs),
            eb('n.attempts', '<', v.maxAttempts),
          ]),
        ]),
      )
      .where(firstOfItsKey)
      .returning('attempts'),
);

/** One delivery attempt's row (`alert_attempts`). */
const INSERT_ATTEMPT = new Statement(
  (
    db: Kysely<Database>,
    v: {
      notificationId: number;
      accountId: string;
      startedAtMs: number;
      latencyMs: number;
      outcome: string;
      statusCode: number | null;
      answer: string | null;
      error: string | null;
    },
  ) =>
    db.insertInto('alert_attempts').values({
      notification_id: v.notificationId,
      account_id: v.accountId,
      started_at: v.startedAtMs,
      latency_ms: v.latencyMs,
      outcome: v.outcome,
      status_code: v.statusCode,
      answer: v.answer,
      error: v.error,
    }),
);

/** The values every end of a lease is written with: the notification and the lease it must still be under. */
type LeaseValues = { id: number; owner: string; attempts: number };

/** Ends a lease with `set` if it still holds (same owner and attempt number, still SENDING). */
function endLease<V extends LeaseValues>(set: (v: V) => Record<string, unknown>) {
  return new Statement((db: Kysely<Database>, v: V) =>
    db
      .updateTable('alert_notifications')
      .set({ ...set(v), lease_owner: null, lease_expires_at: null })
      .where('id', '=', v.id)
      .where('state', '=', 'SENDING')
      .where('lease_owner', '=', v.owner)
      .where('attempts', '=', v.attempts),
  );
}

/** {@link DeliveryQueries.finish}'s three ends of a lease: DELIVERED, PENDING again (a retry) or FAILED. */
const FINISH = {
  DELIVERED: endLease((v: LeaseValues & { atMs: number }) => ({
    state: 'DELIVERED',
    delivered_at: v.atMs,
    last_error: null,
  })),
  PENDING: endLease((v: LeaseValues & { retryAtMs: number; lastError: string | null }) => ({
    state: 'PENDING',
    next_attempt_at: v.retryAtMs,
    last_error: v.lastError,
  })),
  FAILED: endLease((v: LeaseValues & { lastError: string }) => ({
    state: 'FAILED',
    last_error: v.lastError,
  })),
};

/**
 * Every statement of the delivery worker (worker.ts) and the notifications API (notification-routes.ts)
 * against `alert_notifications` and `alert_attempts`. Portable kysely only (SQLite now,
 * PostgreSQL later): claims are conditional UPDATEs whose affected row count says who won, so
 * two workers — in one process or two — never send one notification at once.
 */
export class DeliveryQueries {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * Notifications a worker may claim at `nowMs` (epoch ms), due first, at most `limit`: PENDING
   * ones whose `next_attempt_at` has come, and SENDING ones whose lease expired (their worker
   * died mid-send) with attempts left (fewer than `maxAttempts`), that are the oldest undelivered notification of their `order_key` — delivery
   * stays in order per (channel, check), and a FAILED one does not hold back those after it. `kind`:
   * only notifications to alert channels, or only mails to status-page subscribers (each has its own
   * slots in the worker); both when omitted. `abandoned` false leaves the SENDING ones out (default
   * true): a lease only expires with time, so the worker looks for them on its timer's passes, not on
   * each pass a commit or a finished send starts.
   */
  async claimable(
    nowMs: number,
    maxAttempts: number,
    limit: number,
    kind?: NotificationKind,
    abandoned = true,
  ): Promise<NotificationRow[]> {
    const statements = claimableStatementsFor(kind, limit);
    const pending = await statements.pending.rows(this.#db, { nowMs });
    if (!abandoned) return pending;
    const expired = await statements.expired.rows(this.#db, { nowMs, maxAttempts });
    return [...expired, ...pending]
      .sort((a, b) => Number(a.next_attempt_at) - Number(b.next_attempt_at) || a.id - b.id)
      .slice(0, limit);
  }

  /**
   * Leases the notification `id` to `claim.owner` until `nowMs + leaseMs` and counts the attempt, if it
   * is still claimable (the same conditions as {@link claimable}, checked again by the UPDATE).
   * @returns the lease, or null when another worker claimed it first.
   */
  async claim(
    id: number,
    claim: { owner: string; nowMs: number; leaseMs: number; maxAttempts: number },
  ): Promise<Lease | null> {
    const { owner, nowMs, leaseMs, maxAttempts } = claim;
    // RETURNING (SQLite and PostgreSQL alike): the row comes back only to the worker whose UPDATE matched.
    const row = await CLAIM.first(this.#db, {
      id,
      owner,
      nowMs,
      leaseExpiresAt: nowMs + leaseMs,
      maxAttempts,
    });
    return row ? { id, owner, attempts: Number(row.attempts) } : null;
  }

  /**
   * Notifications whose worker died during their last allowed attempt (SENDING, lease expired,
   * `attempts >= maxAttempts`): they are not sent again. Each is set FAILED with `reason`
   * (conditionally, so a worker that claimed it meanwhile wins).
   * @returns the rows set FAILED.
   */
  async failAbandoned(nowMs: number, maxAttempts: number, reason: string): Promise<NotificationRow[]> {
    const rows = await this.#db
      .selectFrom('alert_notifications')
      .selectAll()
      .where('state', '=', 'SENDING')
      .where('lease_expires_at', '<=', nowMs)
      .where('attempts', '>=', maxAttempts)
      .limit(100)
      .execute();
    const failed: NotificationRow[] = [];
    for (const row of rows) {
      const result = await this.#db
        .updateTable('alert_notifications')
        .set({ state: 'FAILED', lease_owner: null, lease_expires_at: null, last_error: reason })
        .where('id', '=', row.id)
        .where('state', '=', 'SENDING')
        .where('attempts', '=', row.attempts)
        .where('lease_expires_at', '<=', nowMs)
        .executeTakeFirst();
      if (result.numUpdatedRows === 1n) failed.push(row);
    }
    return failed;
  }

  /**
   * Ends every lease at `nowMs`: the notifications being sent (SENDING) become claimable at once,
   * attempts kept. Only for a worker that knows no other process delivers from this store (see
   * DeliveryWorkerOptions.releaseLeasesAtStart).
   * @returns how many leases were ended.
   */
  async releaseLeases(nowMs: number): Promise<number> {
    const result = await this.#db
      .updateTable('alert_notifications')
      .set({ lease_expires_at: nowMs })
      .where('state', '=', 'SENDING')
      .where('lease_expires_at', '>', nowMs)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** The channel a notification goes to, read fresh (secrets sealed); undefined when it was deleted. */
  channel(accountId: string, channelId: number): Promise<ChannelRow | undefined> {
    return new ChannelQueries(this.#db).get(accountId, channelId);
  }

  /**
   * Records one attempt and moves the notification on, in one transaction, if `lease` still
   * holds (same owner and attempt number, still SENDING): DELIVERED; PENDING again at
   * `next.retryAtMs`; or FAILED with `next.lastError`. The attempt is recorded either way: it
   * happened.
   * @returns false when the lease was lost (another worker took the notification over).
   */
  async finish(
    lease: Lease,
    attempt: {
      accountId: string;
      startedAtMs: number;
      latencyMs: number;
      result: Pick<DeliveryResult, 'outcome' | 'statusCode' | 'answer' | 'error'>;
    },
    next:
      | { state: 'DELIVERED'; atMs: number }
      | { state: 'PENDING'; retryAtMs: number; lastError: string | null }
      | { state: 'FAILED'; lastError: string },
  ): Promise<boolean> {
    return this.#db.transaction().execute(async (tx) => {
      await INSERT_ATTEMPT.run(tx, {
        notificationId: lease.id,
        accountId: attempt.accountId,
        startedAtMs: attempt.startedAtMs,
        latencyMs: attempt.latencyMs,
        outcome: attempt.result.outcome,
        statusCode: attempt.result.statusCode,
        answer: attempt.result.answer,
        error: attempt.result.error,
      });
      const held = { id: lease.id, owner: lease.owner, attempts: lease.attempts };
      const result =
        next.state === 'DELIVERED'
          ? await FINISH.DELIVERED.run(tx, { ...held, atMs: next.atMs })
          : next.state === 'PENDING'
            ? await FINISH.PENDING.run(tx, { ...held, retryAtMs: next.retryAtMs, lastError: next.lastError })
            : await FINISH.FAILED.run(tx, { ...held, lastError: next.lastError });
      return result.numAffectedRows === 1n;
    });
  }

  /**
   * Queues a channel test: a notification without alert, due now, ordered after the channel's
   * other check-less notifications (`order_key` `${channelId}:`).
   * @returns its id.
   */
  async queueTest(row: {
    accountId: string;
    channelId: number;
    idempotencyKey: string;
    doc: string;
    nowMs: number;
  }): Promise<number> {
    const { id } = await this.#db
      .insertInto('alert_notifications')
      .values({
        account_id: row.accountId,
        alert_id: null,
        channel_id: row.channelId,
        check_id: null,
        alert_type: 'ALERT_TEST',
        idempotency_key: row.idempotencyKey,
        order_key: `${row.channelId}:`,
        state: 'PENDING',
        next_attempt_at: row.nowMs,
        doc: row.doc,
        created_at: row.nowMs,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(id);
  }

  /**
   * One page of the account's notifications to alert channels, newest first. Mails to status-page
   * subscribers (`subscriber_id` set) are not alert notifications: left out.
   */
  list(accountId: string, filter: NotificationFilter): Promise<NotificationRow[]> {
    let query = this.#db
      .selectFrom('alert_notifications')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('subscriber_id', 'is', null);
    if (filter.checkId !== undefined) query = query.where('check_id', '=', filter.checkId);
    if (filter.alertChannelId !== undefined) query = query.where('channel_id', '=', filter.alertChannelId);
    if (filter.state !== undefined) query = query.where('state', '=', filter.state);
    return query.orderBy('id', 'desc').limit(filter.limit).offset(filter.offset).execute();
  }

  /**
   * The account's notification `id` to an alert channel; undefined when it is not in the account or is
   * a mail to a status-page subscriber.
   */
  get(accountId: string, id: number): Promise<NotificationRow | undefined> {
    return this.#db
      .selectFrom('alert_notifications')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('subscriber_id', 'is', null)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** The attempts of the account's notifications `ids`, oldest first. */
  async attempts(accountId: string, ids: readonly number[]): Promise<AttemptRow[]> {
    if (ids.length === 0) return [];
    return this.#db
      .selectFrom('alert_attempts')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('notification_id', 'in', [...ids])
      .orderBy('id')
      .execute();
  }
}
