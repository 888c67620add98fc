import { CoalescedPasses } from '../../../common/coalesced-passes.js';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import type { Logger } from '../../../common/logger.js';
import { Scrubber } from '../../../common/scrub.js';
import { openChannelDoc } from '../alert-channels/alert-channels.js';
import { accountVariables as storedVariables } from '../../resources/index.js';
import type { Database } from '../../platform/store/database.js';
import { failure, normalise } from './results.js';
import { channelSecretValues, providerSecrets } from './secrets.js';
import { DeliveryQueries, type Lease, type NotificationRow } from './store.js';
import {
  closeSubscriberTransporters,
  SUBSCRIBER_SMTP_CONNECTIONS,
  sendSubscriberMail,
} from '../../status-pages/index.js';
import type {
  ChannelSender,
  ChannelTarget,
  DeliveryResult,
  NotificationDoc,
  OutgoingNotification,
  ProviderConfig,
} from '../types.js';

/** Longest provider answer (a status text) or error kept in an attempt, characters. */
export const MAX_ATTEMPT_TEXT_CHARS = 2000;
/**
 * Longest wait a provider's Retry-After may impose on a notification before its next attempt, ms (1 h): a
 * broken header cannot park a notification for days. This cap rules: the senders read a Retry-After up to
 * MAX_PARSED_RETRY_AFTER_MS (1 day, channels/http.ts), and the worker cuts that down to this.
 */
export const MAX_RETRY_AFTER_WAIT_MS = 3_600_000;
/** Time a sender gets past `sendTimeoutMs` to settle after its signal aborted, ms, before the worker stops waiting. */
const SEND_GRACE_MS = 1000;
/** The default lease's time beyond the send timeout, ms: the attempt's record after the send. */
const LEASE_MARGIN_MS = 5000;

/** Options of the DeliveryWorker. Times in ms. */
export type DeliveryWorkerOptions = {
  log: Logger;
  /** The sender of each channel type (`WEBHOOK`, `EMAIL`, …). A type without one fails its notifications. */
  senders: Record<string, ChannelSender>;
  /** Where providers are reached (SMTP, PagerDuty, …), passed to every sender. */
  providers: ProviderConfig;
  /**
   * The service's public URL, the start of the status-page links in subscriber mail. Default
   * `OUTPOST_APP_URL`, else `http://localhost:{PORT}` (as the service's configuration defaults it).
   */
  appUrl?: string;
  /**
   * The account's variables (`{{VAR}}` in webhook templates), secrets in clear. Default: the
   * account's stored environment variables. Secret ones are scrubbed from attempts either way.
   */
  accountVariables?: (accountId: string) => Promise<Record<string, string>>;
  /**
   * How long a claim holds a notification, default `sendTimeoutMs` + 5 000 (20 000). After it a notification
   * still SENDING is taken as abandoned (its worker died) and sent again, by any replica, with the same
   * idempotency key. It must outlast a send (a send is aborted at `sendTimeoutMs`); longer only delays the
   * resend of what a crashed replica was sending.
   */
  leaseMs?: number;
  /** A send is aborted after this, default 15 000 (and counted as a RETRY). */
  sendTimeoutMs?: number;
  /** Attempts per notification before it is FAILED, default 10. */
  maxAttempts?: number;
  /** Back-off of the first retry, default 1 000; doubles per attempt (jittered). */
  baseDelayMs?: number;
  /** Longest back-off, default 600 000 (10 min). */
  maxDelayMs?: number;
  /** How often due notifications are looked for without a wake-up, default 1 000. */
  pollMs?: number;
  /** Sends in flight at once, default 8 (never two of one channel and check). */
  concurrency?: number;
  /**
   * Status-page subscriber mails in flight at once, in slots of their own besides `concurrency`
   * (a burst of them never holds back an alert), default 16: the SMTP connections the subscriber
   * sender pools.
   */
  subscriberConcurrency?: number;
  /** Clock, epoch ms; tests inject one. Default Date.now. */
  now?: () => number;
  /** Name of this worker in leases, default `${hostname}:${pid}:${random}`. */
  workerId?: string;
  /** Source of randomness for the back-off's jitter, in [0, 1); default Math.random. */
  random?: () => number;
  /**
   * At start, end the leases left by a previous run of this store's only delivering process, so
   * the sends a crash cut short are sent again at once rather than after `leaseMs` (same
   * idempotency keys). Only where no other process delivers from the store: the embedded SQLite
   * store, which one service process owns. Default false (several processes may share one store).
   */
  releaseLeasesAtStart?: boolean;
};

/**
 * Back-off before attempt `attempts + 1`, ms: a random wait between half and all of
 * `baseDelayMs · 2^(attempts−1)` (jitter spreads the retries of many notifications that failed
 * together), capped at `maxDelayMs`.
 */
export function backoffMs(
  attempts: number,
  baseDelayMs: number,
  maxDelayMs: number,
  random = Math.random,
): number {
  const full = baseDelayMs * 2 ** Math.max(0, attempts - 1);
  return Math.min(maxDelayMs, Math.round(full / 2 + random() * (full / 2)));
}

/**
 * Delivers queued notifications (`alert_notifications`, written in a result's transaction)
 * through the sender of each channel's type, recording every attempt in `alert_attempts`.
 *
 * A notification is claimed with a lease (a conditional UPDATE, so two workers never send one at
 * once), sent under `AbortSignal.timeout(sendTimeoutMs)`, then DELIVERED, retried after a jittered
 * exponential back-off (or the provider's Retry-After, at most 1 h, when longer), or FAILED
 * (permanent failure or out of attempts; logged at warn with the reason). Notifications of one
 * (channel, check) go out in order: only the oldest undelivered one is ever claimed, so one being
 * retried holds back the ones after it; a FAILED one does not. A notification whose lease expired
 * (its worker died mid-send) is sent again with the same idempotency key, for the receiver to
 * dedupe. Rows are durable: a restart loses nothing and never sends a DELIVERED one again.
 * Provider answers (a short status text, never a body: see DeliveryResult.answer) and errors are cut to
 * 2 000 characters and scrubbed of the channel's secrets
 * (integration secrets, webhook credential headers, the account's secret variables). Its SQL is
 * in DeliveryQueries (store.ts).
 */
export class DeliveryWorker {
  readonly #db: Kysely<Database>;
  readonly #store: DeliveryQueries;
  readonly #log: Logger;
  readonly #senders: Record<string, ChannelSender>;
  readonly #providers: ProviderConfig;
  readonly #appUrl: string;
  readonly #accountVariables: ((accountId: string) => Promise<Record<string, string>>) | undefined;
  readonly #leaseMs: number;
  readonly #sendTimeoutMs: number;
  readonly #maxAttempts: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #pollMs: number;
  readonly #concurrency: number;
  readonly #subscriberConcurrency: number;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #releaseLeasesAtStart: boolean;
  /** This worker's name in leases. */
  readonly workerId: string;
  /** Sends in flight by notification id, and the order keys they hold. */
  readonly #inFlight = new Map<number, Promise<void>>();
  readonly #inFlightKeys = new Set<string>();
  /** The ids of #inFlight that are subscriber mails (their own slots). */
  readonly #subscriberSends = new Set<number>();
  /** Callers waiting for an attempt of a notification to be recorded (see attempted). */
  readonly #waiters = new Map<number, Set<() => void>>();
  #timer: NodeJS.Timeout | undefined;
  readonly #passes: CoalescedPasses;
  /**
   * Whether the next pass also looks for abandoned sends (SENDING, lease expired): set by the timer,
   * at start and by runDue. A lease only runs out with time, so the passes that commits and finished
   * sends start (one per send in a burst) skip those statements; an abandoned send is picked up by the
   * next timer pass, within `pollMs` of its lease's end.
   */
  #sweep = true;
  #started = false;
  #stopped = false;

  /**
   * @throws Error when `leaseMs` does not outlast a send (`sendTimeoutMs` plus a second): a lease
   * that ran out mid-send would let another worker send the same notification at once.
   */
  constructor(db: Kysely<Database>, options: DeliveryWorkerOptions) {
    const sendTimeoutMs = options.sendTimeoutMs ?? 15_000;
    const leaseMs = options.leaseMs ?? sendTimeoutMs + LEASE_MARGIN_MS;
    if (leaseMs <= sendTimeoutMs + SEND_GRACE_MS) {
      throw new Error(
        `leaseMs (${leaseMs}) must be longer than sendTimeoutMs (${sendTimeoutMs}) plus ${SEND_GRACE_MS} ms`,
      );
    }
    this.#db = db;
    this.#store = new DeliveryQueries(db);
    this.#log = options.log;
    this.#senders = options.senders;
    this.#providers = options.providers;
    this.#appUrl = options.appUrl ?? defaultAppUrl();
    this.#accountVariables = options.accountVariables;
    this.#leaseMs = leaseMs;
    this.#sendTimeoutMs = sendTimeoutMs;
    this.#maxAttempts = options.maxAttempts ?? 10;
    this.#baseDelayMs = options.baseDelayMs ?? 1000;
    this.#maxDelayMs = options.maxDelayMs ?? 600_000;
    this.#pollMs = options.pollMs ?? 1000;
    this.#concurrency = Math.max(1, options.concurrency ?? 8);
    this.#subscriberConcurrency = Math.max(1, options.subscriberConcurrency ?? SUBSCRIBER_SMTP_CONNECTIONS);
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.#releaseLeasesAtStart = options.releaseLeasesAtStart ?? false;
    this.#passes = new CoalescedPasses(
      () => this.#pass(),
      (err) => this.#log.error({ err }, 'notification delivery pass failed'),
    );
  }

  /**
   * Starts polling for due notifications (timer unref'ed);
   * with `releaseLeasesAtStart`, first ends the leases a previous run left.
   */
  start(): void {
    if (this.#timer || this.#stopped) return;
    this.#started = true;
    this.#timer = setInterval(() => {
      this.#sweep = true;
      this.kick();
    }, this.#pollMs);
    this.#timer.unref();
    if (!this.#releaseLeasesAtStart) {
      this.kick();
      return;
    }
    this.#store
      .releaseLeases(this.#now())
      .then((released) => {
        if (released > 0) this.#log.info({ released }, 'sends cut short by the last stop are sent again');
      })
      .catch((err: unknown) => this.#log.error({ err }, 'leases of the last run could not be ended'))
      .finally(() => this.kick());
  }

  /**
   * Looks for due notifications soon (not awaited; call it after a commit that queued some).
   * A pass in progress runs again after. Nothing before `start` or after `stop`.
   */
  kick(): void {
    if (this.#started) this.#passes.kick();
  }

  /** Whether this worker delivers (started and not stopped): routes then wait on {@link attempted}. */
  get running(): boolean {
    return this.#started && !this.#stopped;
  }

  /**
   * Stops claiming and waits for sends in flight (each ends by its timeout); their outcome is
   * recorded. Idempotent.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#passes.stop();
    await Promise.allSettled([...this.#inFlight.values()]);
    closeSubscriberTransporters();
  }

  /**
   * One pass for tests: claims what is due now (up to the free slots) and waits for those sends.
   * @returns how many attempts were made.
   */
  async runDue(): Promise<number> {
    this.#sweep = true;
    const sends = await this.#pass();
    await Promise.allSettled(sends);
    return sends.length;
  }

  /**
   * Resolves when this worker records an attempt of notification `id`, or after `timeoutMs`
   * (whichever comes first); never rejects. For the channel test endpoint.
   */
  attempted(id: number, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const waiters = this.#waiters.get(id) ?? new Set();
      this.#waiters.set(id, waiters);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0 && this.#waiters.get(id) === waiters) this.#waiters.delete(id);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      waiters.add(done);
    });
  }

  /** Claims due notifications up to the free slots and starts their sends; returns the sends. */
  async #pass(): Promise<Promise<void>[]> {
    if (this.#stopped) return [];
    const nowMs = this.#now();
    const sweep = this.#sweep;
    this.#sweep = false;
    for (const row of sweep
      ? await this.#store.failAbandoned(
          nowMs,
          this.#maxAttempts,
          `its last attempt (${this.#maxAttempts}) never finished: the worker sending it stopped`,
        )
      : []) {
      this.#log.warn(
        { alertChannelId: row.channel_id, notificationId: row.id, reason: 'abandoned on its last attempt' },
        'notification failed',
      );
    }
    const sends: Promise<void>[] = [];
    // Alert notifications and subscriber mail have slots of their own: a burst of status-page mail
    // never holds back an alert.
    for (const kind of ['channel', 'subscriber'] as const) {
      const busy =
        kind === 'subscriber' ? this.#subscriberSends.size : this.#inFlight.size - this.#subscriberSends.size;
      let free = (kind === 'subscriber' ? this.#subscriberConcurrency : this.#concurrency) - busy;
      if (free <= 0 || this.#stopped) continue;
      // The due ones are never this worker's own sends (those are SENDING): the free slots' worth fills
      // them. A sweep's expired leases can be this worker's own sends (a lease that expired mid-send): it
      // asks for enough to fill the free slots anyway.
      const rows = await this.#store.claimable(
        nowMs,
        this.#maxAttempts,
        sweep ? free + busy : free,
        kind,
        sweep,
      );
      for (const row of rows) {
        if (free <= 0 || this.#stopped) break;
        if (this.#inFlight.has(row.id) || this.#inFlightKeys.has(row.order_key)) continue;
        const lease = await this.#store.claim(row.id, {
          owner: this.workerId,
          nowMs,
          leaseMs: this.#leaseMs,
          maxAttempts: this.#maxAttempts,
        });
        if (!lease) continue;
        free -= 1;
        this.#inFlightKeys.add(row.order_key);
        if (kind === 'subscriber') this.#subscriberSends.add(row.id);
        const send = this.#deliver(row, lease)
          .catch((err: unknown) =>
            // The store failed: the lease expires and the notification is claimed again then.
            this.#log.error({ err, notificationId: row.id }, 'notification delivery could not be recorded'),
          )
          .finally(() => {
            this.#inFlight.delete(row.id);
            this.#subscriberSends.delete(row.id);
            this.#inFlightKeys.delete(row.order_key);
            for (const wake of [...(this.#waiters.get(row.id) ?? [])]) wake();
            // A slot is free, and the next notification of this order key may be due.
            this.kick();
          });
        this.#inFlight.set(row.id, send);
        sends.push(send);
      }
    }
    return sends;
  }

  /** Sends one claimed notification and records the attempt and what follows from it. */
  async #deliver(row: NotificationRow, lease: Lease): Promise<void> {
    const startedAtMs = this.#now();
    const started = performance.now();
    const scrubber = new Scrubber();
    let result: DeliveryResult;
    try {
      result = await this.#send(row, scrubber);
    } catch (err) {
      // Reading the channel or the variables failed (store, sealed secret): try again later.
      result = failure(
        'RETRY',
        `could not prepare the send: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    const latencyMs = Math.round((performance.now() - started) * 1000) / 1000;
    const answer =
      result.answer === null ? null : scrubber.cut(String(result.answer), MAX_ATTEMPT_TEXT_CHARS);
    const error = result.error === null ? null : scrubber.cut(String(result.error), MAX_ATTEMPT_TEXT_CHARS);
    const attempt = {
      accountId: row.account_id,
      startedAtMs,
      latencyMs,
      result: { outcome: result.outcome, statusCode: result.statusCode, answer, error },
    };
    const context = { alertChannelId: row.channel_id, notificationId: row.id, attempts: lease.attempts };
    let kept: boolean;
    if (result.outcome === 'DELIVERED') {
      kept = await this.#store.finish(lease, attempt, { state: 'DELIVERED', atMs: this.#now() });
    } else if (result.outcome === 'RETRY' && lease.attempts < this.#maxAttempts) {
      const backoff = backoffMs(lease.attempts, this.#baseDelayMs, this.#maxDelayMs, this.#random);
      const asked = result.retryAfterMs === null ? 0 : Math.min(result.retryAfterMs, MAX_RETRY_AFTER_WAIT_MS);
      const retryAtMs = this.#now() + Math.max(asked, backoff);
      kept = await this.#store.finish(lease, attempt, { state: 'PENDING', retryAtMs, lastError: error });
      if (kept)
        this.#log.info({ ...context, reason: error, retryAtMs }, 'notification not delivered; retrying');
    } else {
      const reason =
        result.outcome === 'RETRY'
          ? `${error ?? 'not delivered'} (gave up after ${lease.attempts} attempts)`
          : (error ?? 'not delivered');
      kept = await this.#store.finish(lease, attempt, { state: 'FAILED', lastError: reason });
      if (kept) this.#log.warn({ ...context, reason }, 'notification failed');
    }
    if (!kept)
      this.#log.warn(context, 'notification lease lost during the send; another worker took it over');
  }

  /**
   * Reads the channel fresh, fills `scrubber` with its secrets and sends under the timeout.
   * Never throws for what a provider does; throws when the store cannot be read.
   */
  async #send(row: NotificationRow, scrubber: Scrubber): Promise<DeliveryResult> {
    if (row.subscriber_id !== null) return this.#sendToSubscriber(row, scrubber);
    const channelRow = await this.#store.channel(row.account_id, row.channel_id);
    if (!channelRow) return failure('FAILED', 'channel deleted');
    const doc = openChannelDoc(this.#db, channelRow);
    for (const secret of channelSecretValues(doc.type, doc as unknown as Record<string, unknown>)) {
      scrubber.add(secret);
    }
    for (const secret of providerSecrets(this.#providers)) scrubber.add(secret);
    // Read once: their secret values are scrubbed, and (unless injected) they are the template's variables.
    const stored = await storedVariables(this.#db, row.account_id);
    for (const variable of stored) {
      if (variable.secret) scrubber.add(variable.value);
    }
    const sender = this.#senders[doc.type];
    if (!sender) return failure('FAILED', `no sender for ${doc.type} channels`);
    const notification: OutgoingNotification = {
      idempotencyKey: row.idempotency_key,
      variables: JSON.parse(row.doc) as NotificationDoc,
      accountVariables: this.#accountVariables
        ? await this.#accountVariables(row.account_id)
        : Object.fromEntries(stored.map((v) => [v.key, v.value])),
    };
    const target: ChannelTarget = { id: Number(channelRow.id), type: doc.type, config: doc.config };
    return this.#bounded(sender, notification, target);
  }

  /**
   * Sends a status-page subscriber's mail (`subscriber_id` set, `channel_id` 0) through
   * status-pages/mail/sender.ts under the same timeout as a channel's send; the SMTP credentials and the
   * links' tokens are scrubbed from the attempt.
   */
  async #sendToSubscriber(row: NotificationRow, scrubber: Scrubber): Promise<DeliveryResult> {
    for (const secret of providerSecrets(this.#providers)) scrubber.add(secret);
    const options = {
      db: this.#db,
      providers: this.#providers,
      appUrl: this.#appUrl,
      nowMs: this.#now(),
      scrubber,
    };
    const notification: OutgoingNotification = {
      idempotencyKey: row.idempotency_key,
      variables: {} as NotificationDoc,
      accountVariables: {},
    };
    const target: ChannelTarget = { id: 0, type: 'STATUS_PAGE_SUBSCRIBER', config: {} };
    return this.#bounded(
      (_n, _t, _p, signal) => sendSubscriberMail(row, options, signal),
      notification,
      target,
    );
  }

  /**
   * The sender's result, or RETRY when it throws (the contract says it never does) or has not
   * settled `SEND_GRACE_MS` after its signal aborted: a stuck sender must not hold a slot forever.
   */
  async #bounded(
    sender: ChannelSender,
    notification: OutgoingNotification,
    target: ChannelTarget,
  ): Promise<DeliveryResult> {
    const signal = AbortSignal.timeout(this.#sendTimeoutMs);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<DeliveryResult>((resolve) => {
      timer = setTimeout(
        () => resolve(failure('RETRY', `no answer within ${this.#sendTimeoutMs} ms`)),
        this.#sendTimeoutMs + SEND_GRACE_MS,
      );
    });
    try {
      const sent = sender(notification, target, this.#providers, signal).then(
        (result) => normalise(result, signal, this.#sendTimeoutMs),
        (err: unknown) => failure('RETRY', err instanceof Error ? err.message : String(err)),
      );
      return await Promise.race([sent, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** `OUTPOST_APP_URL`, else `http://localhost:{PORT}` (PORT default 3000), as config.ts defaults the app URL. */
function defaultAppUrl(): string {
  const configured = process.env.OUTPOST_APP_URL?.trim();
  if (configured) return configured;
  return `http://localhost:${process.env.PORT?.trim() || '3000'}`;
}
