import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Impact, UpdateStatus } from '../incidents/schema.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc } from '../../platform/store/schema.js';
import { secretBoxOf } from '../../platform/store/secret-box.js';
import type { StatusPageDoc } from './status-pages.js';
import { notificationRow, SubscriberQueries } from './subscriber-store.js';

type Db = Kysely<Database> | Transaction<Database>;

/** `alert_type` of a status-page subscriber's mail about an incident update. */
export const STATUS_PAGE_UPDATE = 'STATUS_PAGE_UPDATE';

/** Longest email address accepted, characters (RFC 5321's path limit less the brackets). */
export const MAX_EMAIL_CHARS = 254;
/** How long a confirmation link holds, ms (7 days); unconfirmed subscribers older than this may be deleted. */
export const CONFIRMATION_TTL_MS = 7 * 24 * 3_600_000;
/** How long an unsubscribe link holds, ms (365 days: mails are kept and read long after). */
export const UNSUBSCRIBE_TTL_MS = 365 * 24 * 3_600_000;
/** Rows inserted per statement when an update fans out to subscribers. */
const FAN_OUT_BATCH = 200;
/** `SecretBox.deriveKey` purpose of the subscription link tokens. */
const TOKEN_KEY_PURPOSE = 'status-page-subscriber';

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

/** Ids of the services a page's cards show, in card order, without repeats. */
export function pageServiceIds(doc: StatusPageDoc): string[] {
  return [...new Set(doc.cards.flatMap((c) => c.serviceIds))];
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
  const store = new SubscriberQueries(tx);
  const pages = await store.accountPages(input.accountId);
  const names = new Map(
    (await store.serviceNames(input.accountId, [...affected])).map((s) => [s.id, s.name]),
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
    const subscribers = await store.confirmedSubscribers(page.id);
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
      queued += await store.insertNotifications(rows.slice(i, i + FAN_OUT_BATCH));
    }
  }
  return queued;
}
