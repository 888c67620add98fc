import { urlCredentialForms } from '../../../common/uri.js';
import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import nodemailer from 'nodemailer';
import { Scrubber } from '../../../common/scrub.js';
import { strict } from '../../platform/http/schema-helpers.js';
import type { ChannelSender, DeliveryResult, ProviderConfig } from '../types.js';
import { channelModule, envValue, notConfigured } from './channel.js';
import { guarded, requiredString } from './config.js';
import { MAX_ANSWER_CHARS, noAnswer } from './http.js';
import { alertMailHtml, alertMailText } from './email-template.js';
import { truncate } from './message.js';

/** Time allowed to connect, for the greeting, and between socket reads, ms. */
const SMTP_TIMEOUT_MS = 10_000;
/** Longest subject, characters. */
const MAX_SUBJECT = 250;
/** Longest left part of a Message-ID built from an idempotency key. */
const MAX_ID_LEFT = 200;

/** The variables EMAIL channels need, in the words of a delivery error. */
export const SMTP_VARIABLES = ['OUTPOST_SMTP_URL', 'OUTPOST_SMTP_FROM'] as const;

/**
 * The SMTP provider from the environment: `smtp` when both `OUTPOST_SMTP_URL` (e.g.
 * `smtp://user:pass@mail.example.com:587`) and `OUTPOST_SMTP_FROM` are set (empty counts as unset), else
 * nothing (EMAIL notifications then fail naming SMTP_VARIABLES).
 */
export function smtpFromEnv(env: NodeJS.ProcessEnv): Pick<ProviderConfig, 'smtp' | 'timeZone'> {
  const url = envValue(env, 'OUTPOST_SMTP_URL');
  const from = envValue(env, 'OUTPOST_SMTP_FROM');
  // The service's start-up refuses a zone Intl does not know (config.ts); an unknown one here falls back to UTC.
  const timeZone = envValue(env, 'OUTPOST_TIME_ZONE');
  return { ...(url && from ? { smtp: { url, from } } : {}), ...(timeZone ? { timeZone } : {}) };
}

/** A nodemailer transporter: sends through one SMTP server. */
export type SmtpTransport = ReturnType<typeof nodemailer.createTransport>;

/** A pooled transporter's limits: connections kept open per server, messages sent per connection. */
export type SmtpPool = { maxConnections: number; maxMessages: number };

/** Transporters by SMTP URL, made on first use (see smtpTransports). */
export type SmtpTransports = {
  /** The transporter of `url`, made on the first call and reused after. */
  get(url: string): SmtpTransport;
  /** Closes every transporter made so far (the next `get` makes a new one). Never throws. */
  close(): void;
};

/**
 * A cache of SMTP transporters, one per URL, each with 10 s connect, greeting and socket timeouts and
 * nodemailer's logging off (logs could hold addresses). Without `pool` each message opens its own
 * connection (alert email: a few messages, far apart); with it connections are pooled and kept (status-page
 * subscriber mail goes out in bursts). Each caller keeps a cache of its own and closes it on its own.
 */
export function smtpTransports(pool?: SmtpPool): SmtpTransports {
  const transports = new Map<string, SmtpTransport>();
  return {
    get(url) {
      let t = transports.get(url);
      if (t === undefined) {
        t = nodemailer.createTransport({
          url,
          ...(pool ? { pool: true, maxConnections: pool.maxConnections, maxMessages: pool.maxMessages } : {}),
          connectionTimeout: SMTP_TIMEOUT_MS,
          greetingTimeout: SMTP_TIMEOUT_MS,
          socketTimeout: SMTP_TIMEOUT_MS,
          logger: false,
        } as Parameters<typeof nodemailer.createTransport>[0]);
        transports.set(url, t);
      }
      return t;
    },
    close() {
      for (const t of transports.values()) t.close();
      transports.clear();
    },
  };
}

/** The transporters of alert email: one per SMTP URL, unpooled. */
const transporters = smtpTransports();

/** Closes every SMTP transporter of alert email (the next email opens a new one). */
export function closeTransporters(): void {
  transporters.close();
}

/** Characters of an RFC 5322 dot-atom (`id-left` of a Message-ID), dot excepted. */
const ATEXT = /[^A-Za-z0-9!#$%&'*+/=?^_`{|}~-]/g;

/**
 * The Message-ID of a notification, `<{key}@outpost>`: the idempotency key made a valid dot-atom
 * (other characters become `-`, empty dot runs are dropped); a key that had to change, or was
 * too long, gets a hash of the original so two keys never share an id.
 */
export function messageIdOf(idempotencyKey: string): string {
  const atoms = idempotencyKey
    .split('.')
    .map((a) => a.replace(ATEXT, '-'))
    .filter((a) => a !== '');
  let left = atoms.join('.');
  if (left !== idempotencyKey || left.length > MAX_ID_LEFT) {
    const hash = createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 16);
    left = `${left.slice(0, MAX_ID_LEFT - 17).replace(/\.+$/, '')}${left === '' ? '' : '.'}${hash}`;
  }
  return `<${left}@outpost>`;
}

/** Most characters of the SMTP reply line kept as an attempt's `answer`. */
const MAX_SMTP_REPLY_CHARS = 200;

/**
 * The short answer of an SMTP reply: `SMTP ` and its first line (`SMTP 250 2.0.0 Ok: queued as 4F2B1`), cut
 * to 200 characters and scrubbed; null for an empty reply. The SMTP server is the operator's own
 * (OUTPOST_SMTP_URL), and only its status line is kept, as for HTTP.
 */
export function smtpAnswer(reply: string, scrub: Pick<Scrubber, 'cut'>): string | null {
  const line = reply.split(/\r?\n/, 1)[0]?.trim() ?? '';
  return line === '' ? null : scrub.cut(`SMTP ${line}`, MAX_SMTP_REPLY_CHARS);
}

/** SMTP reply code of a nodemailer error, or null. */
function replyCode(err: unknown): number | null {
  const code = (err as { responseCode?: unknown } | null)?.responseCode;
  return typeof code === 'number' && code >= 200 && code < 600 ? code : null;
}

/**
 * The delivery result of a failed nodemailer send: an SMTP 4xx reply is RETRY and a 5xx FAILED (the reply
 * code kept, its first line as the answer: smtpAnswer); no reply at all (refused, timed out) is RETRY.
 */
export function smtpFailure(err: unknown, scrub: Pick<Scrubber, 'cut'>): DeliveryResult {
  const code = replyCode(err);
  const message = scrub.cut(err instanceof Error ? err.message : String(err), MAX_ANSWER_CHARS);
  const answer = smtpAnswer(String((err as { response?: unknown }).response ?? ''), scrub);
  if (code !== null) {
    const temporary = code < 500;
    return {
      outcome: temporary ? 'RETRY' : 'FAILED',
      statusCode: code,
      answer,
      error: `the SMTP server answered ${code} (${temporary ? 'temporary' : 'permanent'}): ${message}`,
      retryAfterMs: null,
    };
  }
  return noAnswer('RETRY', `the SMTP server could not be reached: ${message}`);
}

/** Secrets of an SMTP URL: its password and user, as written and decoded (urlCredentialForms). */
function smtpSecrets(url: string): string[] {
  try {
    return urlCredentialForms(new URL(url));
  } catch {
    return [];
  }
}

/**
 * EMAIL sender: one message from `smtp.from` to `config.address`, text and HTML in the layout of the
 * status-page mails (email-template.ts: times in UTC, a link to the result page, the failure screenshot of a
 * browser check pointed to there), Message-ID from the idempotency key. SMTP 4xx and connection errors (and an abort) are RETRY, SMTP 5xx FAILED;
 * without OUTPOST_SMTP_URL and OUTPOST_SMTP_FROM it is FAILED saying so. Never throws.
 */
const sendEmail: ChannelSender = (notification, channel, providers, signal) =>
  guarded(async () => {
    const smtp = providers.smtp;
    if (!smtp) return noAnswer('FAILED', notConfigured('EMAIL', SMTP_VARIABLES));
    const to = requiredString(channel, 'address');
    const scrub = new Scrubber(smtpSecrets(smtp.url));
    const v = notification.variables;
    const prefix = v.ALERT_TYPE === 'ALERT_TEST' ? '[Test] ' : '';
    const send = transporters.get(smtp.url).sendMail({
      from: smtp.from,
      to,
      subject: truncate(`${prefix}${v.ALERT_TITLE}`.replace(/[\r\n]+/g, ' '), MAX_SUBJECT),
      text: alertMailText(v, providers.timeZone),
      html: alertMailHtml(v, providers.timeZone),
      messageId: messageIdOf(notification.idempotencyKey),
      headers: { 'X-Outpost-Alert-Type': v.ALERT_TYPE, 'X-Outpost-Check-Id': v.CHECK_ID.slice(0, 200) },
    });
    return smtpDelivery(send, signal, scrub);
  });

/**
 * The delivery result of a nodemailer send (`send`, a `sendMail` promise), awaited until `signal` aborts:
 * DELIVERED with the reply code (250 when the reply has none) and its first line as the answer
 * (smtpAnswer); a failure as smtpFailure says (SMTP 4xx and connection errors RETRY, 5xx FAILED); an abort
 * before the server answered RETRY (the send goes on, its outcome ignored). Shared by alert email and
 * status-page subscriber mail. Never throws.
 */
export async function smtpDelivery(
  send: Promise<{ response?: unknown }>,
  signal: AbortSignal,
  scrub: Pick<Scrubber, 'cut'>,
): Promise<DeliveryResult> {
  let onAbort = () => {};
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const info = await Promise.race([send, aborted]);
    if (info === 'aborted') {
      send.catch(() => undefined);
      return noAnswer('RETRY', 'the delivery was aborted before the SMTP server answered');
    }
    const response = typeof info.response === 'string' ? info.response : '';
    const code = Number(/^\d{3}/.exec(response)?.[0] ?? 250);
    return {
      outcome: 'DELIVERED',
      statusCode: code,
      answer: smtpAnswer(response, scrub),
      error: null,
      retryAfterMs: null,
    };
  } catch (err) {
    return smtpFailure(err, scrub);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** EMAIL: one message to `config.address` through the operator's SMTP server (OUTPOST_SMTP_URL). */
export const emailChannel = channelModule({
  type: 'EMAIL',
  configSchema: Type.Object({ address: Type.String({ format: 'email', maxLength: 254 }) }, strict),
  secretFields: [],
  send: sendEmail,
  providerEnv: smtpFromEnv,
});
