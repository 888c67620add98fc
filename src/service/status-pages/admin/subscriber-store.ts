import { randomUUID } from 'node:crypto';
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database } from '../../platform/store/database.js';
import type { SubscriberMailDoc } from './subscribers.js';

/** The store handle or a transaction of it. */
type Db = Kysely<Database> | Transaction<Database>;

/** `alert_type` of a status-page subscriber's confirmation mail (double opt-in). */
export const STATUS_PAGE_CONFIRMATION = 'STATUS_PAGE_CONFIRMATION';

/** Least time between two confirmation mails to one unconfirmed subscriber, ms (10 minutes). */
export const CONFIRMATION_RESEND_MS = 10 * 60_000;

/** A row of `status_page_subscribers`. */
export type SubscriberRow = Database['status_page_subscribers'];

/** A subscriber as the API shows it (docs/api.md, "Status pages and services"). */
export type SubscriberView = {
  id: string;
  email: string;
  /** Ids of the status-page services subscribed to; null for the whole page. */
  services: string[] | null;
  confirmed: boolean;
  created_at: string;
  confirmed_at: string | null;
};

/** The API view of a row. */
export function presentSubscriber(row: SubscriberRow): SubscriberView {
  return {
    id: row.id,
    email: row.email,
    services: row.service_ids === null ? null : (JSON.parse(row.service_ids) as string[]),
    confirmed: row.confirmed_at !== null,
    created_at: new Date(Number(row.created_at)).toISOString(),
    confirmed_at: row.confirmed_at === null ? null : new Date(Number(row.confirmed_at)).toISOString(),
  };
}

/** What {@link SubscriberQueries.subscribe} did; the visitor is told the same in every case. */
export type SubscribeOutcome = {
  subscriberId: string;
  /** A confirmation mail was queued (new or unconfirmed address, none queued in the last 10 minutes). */
  confirmationQueued: boolean;
  /** The notification id of that mail, when queued. */
  notificationId: number | null;
};

/**
 * The subscribers of status pages (`status_page_subscribers`, docs/status-pages.md, "Subscriptions"):
 * the double opt-in, the API's list and delete, the confirmation mails queued in `alert_notifications` for
 * the delivery worker, and the reads and inserts of an incident update's fan-out (`queueUpdateMails` in
 * subscribers.ts, in its caller's transaction: construct it with `tx`). Portable kysely only; times in
 * epoch ms.
 */
export class SubscriberQueries {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * Subscribes `email` (lower-cased by this method) to a page, in one transaction: a new address is
   * stored unconfirmed and sent a confirmation; an unconfirmed one gets its services replaced and a new
   * confirmation unless one was queued less than 10 minutes ago; a confirmed one is left unchanged and
   * gets no mail. `serviceIds` null: the whole page. Writes `status_page_subscribers` and
   * `alert_notifications`; `nowMs` (epoch ms) is the row's `created_at` and the mail's `confirmation_sent_at`.
   *
   * The one method here that carries rules (the double opt-in and the resend throttle,
   * CONFIRMATION_RESEND_MS): they decide between statements of one transaction, so they stay with them.
   * Opens its own transaction: call it on the store handle, never on a `tx`.
   */
  async subscribe(
    page: { id: string; accountId: string; name: string },
    email: string,
    serviceIds: string[] | null,
    nowMs: number,
  ): Promise<SubscribeOutcome> {
    const address = email.toLowerCase();
    const services = serviceIds === null ? null : JSON.stringify(serviceIds);
    return this.#db.transaction().execute(async (trx) => {
      await trx
        .insertInto('status_page_subscribers')
        .values({
          id: randomUUID(),
          account_id: page.accountId,
          status_page_id: page.id,
          email: address,
          service_ids: services,
          created_at: nowMs,
          confirmed_at: null,
          confirmation_sent_at: null,
        })
        .onConflict((oc) => oc.columns(['status_page_id', 'email']).doNothing())
        .execute();
      const row = await trx
        .selectFrom('status_page_subscribers')
        .selectAll()
        .where('status_page_id', '=', page.id)
        .where('email', '=', address)
        .executeTakeFirstOrThrow();
      const resend =
        row.confirmed_at === null &&
        (row.confirmation_sent_at === null ||
          nowMs - Number(row.confirmation_sent_at) >= CONFIRMATION_RESEND_MS);
      // A confirmed subscription is left as it is: anybody who knows an address could otherwise narrow
      // its subscription without the mailbox agreeing (to change it, unsubscribe and subscribe again). An
      // unconfirmed one takes the latest choice, which its confirmation then approves.
      if (row.confirmed_at === null) {
        await trx
          .updateTable('status_page_subscribers')
          .set({ service_ids: services, ...(resend ? { confirmation_sent_at: nowMs } : {}) })
          .where('id', '=', row.id)
          .execute();
      }
      if (!resend) return { subscriberId: row.id, confirmationQueued: false, notificationId: null };
      const doc: SubscriberMailDoc = { kind: 'confirmation', pageId: page.id, pageName: page.name };
      const inserted = await trx
        .insertInto('alert_notifications')
        .values(
          notificationRow(
            page.accountId,
            row.id,
            STATUS_PAGE_CONFIRMATION,
            `sp:${row.id}:confirm:${nowMs}`,
            doc,
            nowMs,
          ),
        )
        .onConflict((oc) => oc.column('idempotency_key').doNothing())
        .returning('id')
        .executeTakeFirst();
      return {
        subscriberId: row.id,
        confirmationQueued: true,
        notificationId: inserted ? Number(inserted.id) : null,
      };
    });
  }

  /** The subscriber `id` of page `pageId`; undefined when there is none. */
  get(pageId: string, id: string): Promise<SubscriberRow | undefined> {
    return this.#db
      .selectFrom('status_page_subscribers')
      .selectAll()
      .where('status_page_id', '=', pageId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /**
   * The subscriber `id` (of any page) with its page, in one read, for its mail: the page's document
   * (`page_doc`, null when the page was deleted meanwhile) and when its custom domain was verified (epoch ms;
   * null while pending or without one).
   * @returns undefined when the subscriber is gone.
   */
  withPage(id: string) {
    return this.#db
      .selectFrom('status_page_subscribers as s')
      .leftJoin('status_pages as p', 'p.id', 's.status_page_id')
      .select([
        's.id',
        's.email',
        's.confirmed_at',
        's.status_page_id',
        'p.doc as page_doc',
        'p.custom_domain_verified_at',
      ])
      .where('s.id', '=', id)
      .executeTakeFirst();
  }

  /** Confirms a subscriber (idempotent: a confirmed one keeps its first time). @returns false when it is gone. */
  async confirm(pageId: string, id: string, nowMs: number): Promise<boolean> {
    await this.#db
      .updateTable('status_page_subscribers')
      .set({ confirmed_at: nowMs })
      .where('status_page_id', '=', pageId)
      .where('id', '=', id)
      .where('confirmed_at', 'is', null)
      .execute();
    return (await this.get(pageId, id)) !== undefined;
  }

  /**
   * Deletes a subscriber of a page; mails still queued for it then fail as "unsubscribed".
   * @returns false when there was none.
   */
  async delete(pageId: string, id: string): Promise<boolean> {
    const result = await this.#db
      .deleteFrom('status_page_subscribers')
      .where('status_page_id', '=', pageId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** One page of a status page's subscribers, oldest first (`limit` rows from `offset`). */
  async list(accountId: string, pageId: string, limit: number, offset: number): Promise<SubscriberView[]> {
    const rows = await this.#db
      .selectFrom('status_page_subscribers')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('status_page_id', '=', pageId)
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute();
    return rows.map(presentSubscriber);
  }

  /**
   * Deletes subscribers never confirmed whose row is older than `olderThanMs` (epoch ms): their
   * confirmation link has expired. For the retention pass.
   * @returns how many were deleted.
   */
  async deleteUnconfirmed(olderThanMs: number): Promise<number> {
    const result = await this.#db
      .deleteFrom('status_page_subscribers')
      .where('confirmed_at', 'is', null)
      .where('created_at', '<', olderThanMs)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** The account's status pages, `id` and `doc` (for the pages that show an incident's services). */
  accountPages(accountId: string) {
    return this.#db
      .selectFrom('status_pages')
      .select(['id', 'doc'])
      .where('account_id', '=', accountId)
      .execute();
  }

  /** `id` and `name` of the account's status-page services among `serviceIds`. */
  serviceNames(accountId: string, serviceIds: readonly string[]) {
    return this.#db
      .selectFrom('status_page_services')
      .select(['id', 'name'])
      .where('account_id', '=', accountId)
      .where('id', 'in', serviceIds)
      .execute();
  }

  /** The confirmed subscribers of page `pageId`: `id` and `service_ids` (JSON, null for the whole page). */
  confirmedSubscribers(pageId: string) {
    return this.#db
      .selectFrom('status_page_subscribers')
      .select(['id', 'service_ids'])
      .where('status_page_id', '=', pageId)
      .where('confirmed_at', 'is not', null)
      .execute();
  }

  /**
   * Inserts notifications in one statement, ON CONFLICT (`idempotency_key`) DO NOTHING.
   * @returns how many were inserted.
   */
  async insertNotifications(rows: Insertable<Database['alert_notifications']>[]): Promise<number> {
    const result = await this.#db
      .insertInto('alert_notifications')
      .values(rows)
      .onConflict((oc) => oc.column('idempotency_key').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n);
  }
}

/** A PENDING subscriber notification, due at `nowMs` (epoch ms), in its subscriber's order key. */
export function notificationRow(
  accountId: string,
  subscriberId: string,
  type: string,
  idempotencyKey: string,
  doc: SubscriberMailDoc,
  nowMs: number,
): Insertable<Database['alert_notifications']> {
  return {
    account_id: accountId,
    alert_id: null,
    channel_id: 0,
    check_id: null,
    alert_type: type,
    idempotency_key: idempotencyKey,
    order_key: `sp:${subscriberId}`,
    state: 'PENDING',
    next_attempt_at: nowMs,
    doc: JSON.stringify(doc),
    created_at: nowMs,
    subscriber_id: subscriberId,
  };
}
