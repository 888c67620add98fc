import type { Kysely } from 'kysely';
import type { Scrubber } from '../../../common/scrub.js';
import { subscriberMail } from './subscriber-mail.js';
import {
  CONFIRMATION_TTL_MS,
  type SubscriberMailDoc,
  subscriberToken,
  UNSUBSCRIBE_TTL_MS,
} from '../admin/subscribers.js';
import { SubscriberQueries } from '../admin/subscriber-store.js';
import type { StatusPageDoc } from '../admin/status-pages.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc } from '../../platform/store/schema.js';
import { noAnswer } from '../../alerting/index.js';
import { messageIdOf, SMTP_VARIABLES, smtpDelivery, smtpTransports } from '../../alerting/index.js';
import type { NotificationRow } from '../../alerting/index.js';
import type { DeliveryResult, ProviderConfig } from '../../alerting/index.js';

/** SMTP connections kept open per server: subscriber mail goes out in bursts (one per subscriber). */
export const SUBSCRIBER_SMTP_CONNECTIONS = 16;

/** The pooled SMTP transporters of subscriber mail, one per SMTP URL: a burst of mails reuses their connections. */
const pools = smtpTransports({ maxConnections: SUBSCRIBER_SMTP_CONNECTIONS, maxMessages: 1000 });

/** Closes the pooled SMTP connections of subscriber mail (the next mail opens new ones). */
export function closeSubscriberTransporters(): void {
  pools.close();
}

/**
 * The public address of a status page's links: `https://{customDomain}` for a page whose custom
 * domain is verified (`domainVerified`), else `{appUrl}/status/{url}` (a pending domain does not
 * serve the page yet); no trailing slash.
 */
export function publicPageUrl(
  appUrl: string,
  doc: Pick<StatusPageDoc, 'url' | 'customDomain'>,
  domainVerified: boolean,
): string {
  if (doc.customDomain && domainVerified) return `https://${doc.customDomain}`;
  return `${appUrl.replace(/\/+$/, '')}/status/${encodeURIComponent(doc.url)}`;
}

/** What the subscriber sender needs besides the notification. */
export type SubscriberSendOptions = {
  db: Kysely<Database>;
  providers: ProviderConfig;
  /** The service's public URL (`OUTPOST_APP_URL`): status-page links in mail start with it. */
  appUrl: string;
  /** The clock, epoch ms (token expiries). */
  nowMs: number;
  /** Filled with the secrets an answer could echo (the SMTP credentials, the links' tokens). */
  scrubber: Scrubber;
};

/**
 * Sends one status-page subscriber notification (`subscriber_id` set; docs/status-pages.md,
 * "Subscriptions"): reads the subscriber and its page fresh, builds the links (a confirm token for a
 * confirmation, an unsubscribe token always, both signed for 7 and 365 days), and sends text and HTML
 * through the providers' SMTP server on a pooled connection, with the Message-ID of the idempotency key
 * and the RFC 8058 one-click unsubscribe headers. A subscriber deleted meanwhile is FAILED
 * "unsubscribed"; an update to a subscriber not confirmed is FAILED; SMTP 4xx and connection errors
 * (and an abort by `signal`) are RETRY, 5xx FAILED; without OUTPOST_SMTP_URL and OUTPOST_SMTP_FROM it
 * is FAILED saying so.
 * @throws when the store cannot be read (the worker retries later).
 */
export async function sendSubscriberMail(
  row: NotificationRow,
  options: SubscriberSendOptions,
  signal: AbortSignal,
): Promise<DeliveryResult> {
  const { db, providers, scrubber } = options;
  // The subscriber with its page, in one read (a page deleted meanwhile leaves a null doc).
  const subscriber = await new SubscriberQueries(db).withPage(row.subscriber_id ?? '');
  if (!subscriber) return noAnswer('FAILED', 'unsubscribed');
  const doc = JSON.parse(row.doc) as SubscriberMailDoc;
  if (doc.kind === 'update' && subscriber.confirmed_at === null) {
    return noAnswer('FAILED', 'the subscriber has not confirmed the subscription');
  }
  if (subscriber.page_doc === null) return noAnswer('FAILED', 'status page deleted');
  const page = { id: subscriber.status_page_id, doc: subscriber.page_doc };
  const smtp = providers.smtp;
  if (!smtp) return noAnswer('FAILED', `subscriber mail needs ${SMTP_VARIABLES.join(' and ')}`);

  const pageDoc = readDoc(page.doc) as StatusPageDoc;
  const base = publicPageUrl(options.appUrl, pageDoc, subscriber.custom_domain_verified_at !== null);
  const unsubscribeToken = subscriberToken(
    db,
    'unsubscribe',
    page.id,
    subscriber.id,
    options.nowMs + UNSUBSCRIBE_TTL_MS,
  );
  scrubber.add(unsubscribeToken);
  const links: Parameters<typeof subscriberMail>[1] = {
    page: base,
    unsubscribe: `${base}/unsubscribe?token=${encodeURIComponent(unsubscribeToken)}`,
  };
  if (doc.kind === 'confirmation') {
    const confirmToken = subscriberToken(
      db,
      'confirm',
      page.id,
      subscriber.id,
      options.nowMs + CONFIRMATION_TTL_MS,
    );
    scrubber.add(confirmToken);
    links.confirm = `${base}/subscribe/confirm?token=${encodeURIComponent(confirmToken)}`;
  } else {
    links.incident = `${base}/incidents/${encodeURIComponent(doc.incidentId)}`;
  }
  const mail = subscriberMail({ ...doc, pageName: pageDoc.name || doc.pageName }, links);

  const send = pools.get(smtp.url).sendMail({
    from: smtp.from,
    to: subscriber.email,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId: messageIdOf(row.idempotency_key),
    headers: { ...mail.headers, 'X-Outpost-Alert-Type': row.alert_type },
  });
  return smtpDelivery(send, signal, scrubber);
}
