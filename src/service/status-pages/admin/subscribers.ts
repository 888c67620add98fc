import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Impact, UpdateStatus } from '../incidents/schema.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc } from '../../platform/store/schema.js';
import { secretBoxOf } from '../../platform/store/secret-box.js';
import type { StatusPageDoc } from './status-pages.js';

type Db = Kysely<Database> | Transaction<Database>;

/** `alert_type` of a status-page subscriber's confirmation mail (double opt-in). */
export const STATUS_PAGE_CONFIRMATION = 'STATUS_PAGE_CONFIRMATION';
/** `alert_type` of a status-page subscriber's mail about an incident update. */
export const STATUS_PAGE_UPDATE = 'STATUS_PAGE_UPDATE';

/** Longest email address accepted, characters (RFC 5321's path limit less the brackets). */
export const MAX_EMAIL_CHARS = 254;
/** How long a confirmation link holds, ms (7 days); unconfirmed subscribers older than this may be deleted. */
export const CONFIRMATION_TTL_MS = 7 * 24 * 3_600_000;
/** How long an unsubscribe link holds, ms (365 days: mails are kept and read long after). */
export const UNSUBSCRIBE_TTL_MS = 365 * 24 * 3_600_000;
/** Least time between two confirmation mails to one unconfirmed subscriber, ms (10 minutes). */
export const CONFIRMATION_RESEND_MS = 10 * 60_000;
/** Rows inserted per statement when an update fans out to subscribers. */
const FAN_OUT_BATCH = 200;
/** `SecretBox.deriveKey` purpose of the subscription link tokens. */
const TOKEN_KEY_PURPOSE = 'status-page-subscriber';

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

/** What a link token authorises: confirming the subscription, or deleting it. */
export type TokenPurpose = 'confirm' | 'unsubscribe';

/**
 * The document of a subscriber notification (`alert_notifications.doc`): what the mail says. Links are
 * not stored: the sender builds them when it sends (the page's current address, fresh tokens).
 */
export type SubscriberMailDoc =
  | { kind: 'confirmation'; pageId: string; pageName: string }
  | {
      kind: 'update';
      pageId: string;
      pageName: string;
      incidentId: string;
      incidentName: string;
      impact: Impact;
      updateId: string;
      status: UpdateStatus;
      description: string;
      /** The update's `publicIncidentUpdateDate`, ISO 8601. */
      updateDate: string;
      /** Names of the page's services the incident affects. */
      serviceNames: string[];
      /** The incident is resolved with this update. */
      resolved: boolean;
    };

/**
 * A syntax check of an email address, no more (the confirmation mail is the real test): at most 254
 * characters, one `@`, a local part of printable characters without spaces, angle brackets, quotes or
 * commas, and a domain of at least two dot-separated labels of letters, digits and hyphens (IDN in
 * Unicode accepted).
 */
export function isSaneEmail(email: string): boolean {
  if (email.length === 0 || email.length > MAX_EMAIL_CHARS) return false;
  const at = email.lastIndexOf('@');
  if (at < 1 || at !== email.indexOf('@')) return false;
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (local.length > 64 || /[\s<>()[\]\\,;:"]/u.test(local) || /[\p{Cc}]/u.test(local)) return false;
  if (local.startsWith('.') || local.endsWith('.') || local.includes('..')) return false;
  const labels = domain.split('.');
  if (labels.length < 2) return false;
  return labels.every((l) => /^[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u.test(l));
}

/** Signing keys of subscription tokens by secret box (derived once: a burst of mail signs a token each). */
const tokenKeys = new WeakMap<object, Buffer>();

/** The signing key of subscription tokens (HKDF from the store's secret box). */
function tokenKey(db: object): Buffer {
  const box = secretBoxOf(db);
  let key = tokenKeys.get(box);
  if (key === undefined) {
    key = box.deriveKey(TOKEN_KEY_PURPOSE);
    tokenKeys.set(box, key);
  }
  return key;
}

function mac(key: Buffer, purpose: TokenPurpose, pageId: string, subscriberId: string, expiresSec: number) {
  return createHmac('sha256', key)
    .update(`${purpose}\n${pageId}\n${subscriberId}\n${expiresSec}`)
    .digest('base64url');
}

/**
 * A link token for one subscriber of one page: `{subscriberId}.{expiry, epoch seconds}.{HMAC-SHA256}`,
 * the HMAC over the purpose, the page id, the subscriber id and the expiry, keyed with
 * `deriveKey('status-page-subscriber')` of the store's secret box (so tokens survive restarts and
 * open nothing on another store).
 */
export function subscriberToken(
  db: object,
  purpose: TokenPurpose,
  pageId: string,
  subscriberId: string,
  expiresAtMs: number,
): string {
  const expiresSec = Math.floor(expiresAtMs / 1000);
  return `${subscriberId}.${expiresSec}.${mac(tokenKey(db), purpose, pageId, subscriberId, expiresSec)}`;
}

/**
 * The subscriber id a token names, when it was made by {@link subscriberToken} for this purpose and
 * page and has not expired at `nowMs`; null otherwise (tampered, another page's or purpose's, expired,
 * malformed). Compares in constant time.
 */
export function verifySubscriberToken(
  db: object,
  token: string,
  purpose: TokenPurpose,
  pageId: string,
  nowMs: number,
): string | null {
  if (token.length > 200) return null;
  const match = /^([0-9a-f-]{36})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return null;
  const [, subscriberId, expires, given] = match as unknown as [string, string, string, string];
  const expiresSec = Number(expires);
  if (expiresSec * 1000 <= nowMs) return null;
  const expected = Buffer.from(mac(tokenKey(db), purpose, pageId, subscriberId, expiresSec));
  const actual = Buffer.from(given);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return null;
  return subscriberId;
}

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

/** Ids of the services a page's cards show, in card order, without repeats. */
export function pageServiceIds(doc: StatusPageDoc): string[] {
  return [...new Set(doc.cards.flatMap((c) => c.serviceIds))];
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
 * the double opt-in, the API's list and delete, and the confirmation mails queued in
 * `alert_notifications` for the delivery worker.
 */
export class SubscriberQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * Subscribes `email` (lower-cased by this method) to a page, in one transaction: a new address is
   * stored unconfirmed and sent a confirmation; an unconfirmed one gets its services replaced and a new
   * confirmation unless one was queued less than 10 minutes ago; a confirmed one is left unchanged and
   * gets no mail. `serviceIds` null: the whole page.
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
}

/** A PENDING subscriber notification, due at `nowMs`, in its subscriber's order key. */
function notificationRow(
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

/** An incident update that may be mailed to subscribers. */
export type UpdateToMail = {
  accountId: string;
  incident: { id: string; name: string; impact: Impact };
  /** Ids of the status-page services the incident affects. */
  serviceIds: readonly string[];
  update: {
    id: string;
    status: UpdateStatus;
    description: string;
    publicIncidentUpdateDate: string;
    notifySubscribers: boolean;
  };
  nowMs: number;
};

/**
 * Queues, in the caller's transaction `tx`, one STATUS_PAGE_UPDATE notification per confirmed subscriber
 * of every status page of the account that shows one of the incident's services: whole-page subscribers,
 * and those whose services include one of them. Idempotency key `sp:{subscriberId}:{updateId}` (ON
 * CONFLICT DO NOTHING: once per subscriber and update, whoever queues it again), order key
 * `sp:{subscriberId}`, inserted in batches. Nothing when the update does not `notifySubscribers`.
 * @returns how many notifications were queued (kick the delivery worker after the commit when > 0).
 */
export async function queueUpdateMails(tx: Db, input: UpdateToMail): Promise<number> {
  if (!input.update.notifySubscribers || input.serviceIds.length === 0) return 0;
  const affected = new Set(input.serviceIds);
  const pages = await tx
    .selectFrom('status_pages')
    .select(['id', 'doc'])
    .where('account_id', '=', input.accountId)
    .execute();
  const names = new Map(
    (
      await tx
        .selectFrom('status_page_services')
        .select(['id', 'name'])
        .where('account_id', '=', input.accountId)
        .where('id', 'in', [...affected])
        .execute()
    ).map((s) => [s.id, s.name]),
  );
  let queued = 0;
  for (const page of pages) {
    const doc = readDoc(page.doc) as StatusPageDoc;
    const shown = pageServiceIds(doc).filter((id) => affected.has(id));
    if (shown.length === 0) continue;
    const mail: SubscriberMailDoc = {
      kind: 'update',
      pageId: page.id,
      pageName: doc.name,
      incidentId: input.incident.id,
      incidentName: input.incident.name,
      impact: input.incident.impact,
      updateId: input.update.id,
      status: input.update.status,
      description: input.update.description,
      updateDate: input.update.publicIncidentUpdateDate,
      serviceNames: shown.map((id) => names.get(id)).filter((n): n is string => n !== undefined),
      resolved: input.update.status === 'RESOLVED',
    };
    const subscribers = await tx
      .selectFrom('status_page_subscribers')
      .select(['id', 'service_ids'])
      .where('status_page_id', '=', page.id)
      .where('confirmed_at', 'is not', null)
      .execute();
    const rows = subscribers
      .filter((s) => {
        if (s.service_ids === null) return true;
        return (JSON.parse(s.service_ids) as string[]).some((id) => shown.includes(id));
      })
      .map((s) =>
        notificationRow(
          input.accountId,
          s.id,
          STATUS_PAGE_UPDATE,
          `sp:${s.id}:${input.update.id}`,
          mail,
          input.nowMs,
        ),
      );
    for (let i = 0; i < rows.length; i += FAN_OUT_BATCH) {
      const result = await tx
        .insertInto('alert_notifications')
        .values(rows.slice(i, i + FAN_OUT_BATCH))
        .onConflict((oc) => oc.column('idempotency_key').doNothing())
        .executeTakeFirst();
      queued += Number(result.numInsertedOrUpdatedRows ?? 0n);
    }
  }
  return queued;
}
