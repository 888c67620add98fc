import pg from 'pg';
import type { Logger } from '../../../common/logger.js';
import { postgresPoolOf } from './postgres.js';

/** The channels replicas wake each other on; a notification carries one id, never data. */
export type StoreChannel = 'outpost_jobs' | 'outpost_session' | 'outpost_status_pages';

/** What a notification names: the channel and the id (an account id, a check session id); `*`: wake everyone. */
export type StoreWakeUp = { channel: StoreChannel; id: string };

const CHANNELS: readonly StoreChannel[] = ['outpost_jobs', 'outpost_session', 'outpost_status_pages'];
/** First and longest wait before the listening connection is opened again, ms. */
const RECONNECT_MS = { first: 500, max: 15_000 };

/**
 * Wake-ups across service replicas on one PostgreSQL store, with `LISTEN`/`NOTIFY`: a replica that queues
 * jobs for an account or ends a check session publishes the id (`pg_notify`, after its transaction
 * committed), and every replica, itself included, hands it to its waiting long polls. A hint only: the
 * waiters look at the store again, and keep polling as the safety net for a notification lost while the
 * listening connection was down (after it reconnects, every waiter is woken once: id `*`).
 *
 * One connection per replica listens (a dedicated `pg.Client`, outside the query pool); publishing goes
 * through the pool. Behind a transaction-pooling proxy (PgBouncer), where `LISTEN` cannot work, the
 * notifier stays off (`OUTPOST_DATABASE_NOTIFY=off`) and the waiters poll.
 */
export class StoreNotifier {
  readonly #pool: pg.Pool;
  readonly #log: Logger;
  readonly #handlers = new Set<(wakeUp: StoreWakeUp) => void>();
  #client: pg.Client | null = null;
  #stopped = false;
  #retryMs = RECONNECT_MS.first;
  #timer: NodeJS.Timeout | null = null;

  private constructor(pool: pg.Pool, log: Logger) {
    this.#pool = pool;
    this.#log = log;
  }

  /** A notifier for the PostgreSQL store `db`; null for a store of one process (SQLite), which needs none. */
  static for(db: object, log: Logger): StoreNotifier | null {
    const pool = postgresPoolOf(db);
    return pool === undefined ? null : new StoreNotifier(pool, log);
  }

  /** Calls `handler` for every wake-up received (its own published ones included). */
  subscribe(handler: (wakeUp: StoreWakeUp) => void): void {
    this.#handlers.add(handler);
  }

  /** Publishes `id` on `channel` to every replica; a failure is logged, never thrown (waiters still poll). */
  publish(channel: StoreChannel, id: string): void {
    this.#pool.query('select pg_notify($1, $2)', [channel, id]).catch((err: unknown) => {
      this.#log.debug(
        { err, channel },
        'a wake-up could not be published; replicas will find the work by polling',
      );
    });
  }

  /** Opens the listening connection; resolves once it listens, or after the first failure (it then retries). */
  async start(): Promise<void> {
    this.#stopped = false;
    await this.#connect();
  }

  /** Closes the listening connection and stops reconnecting. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => {});
  }

  async #connect(): Promise<void> {
    if (this.#stopped) return;
    const client = new pg.Client(this.#pool.options);
    // A connection that dies is reopened; an 'error' nobody listens to would end the process.
    client.on('error', () => {});
    client.on('end', () => {
      if (this.#client !== client) return;
      this.#client = null;
      this.#log.warn('the wake-up connection to PostgreSQL ended; opening it again');
      this.#schedule();
    });
    client.on('notification', (message) => {
      const channel = message.channel as StoreChannel;
      if (!CHANNELS.includes(channel) || message.payload === undefined) return;
      this.#deliver({ channel, id: message.payload });
    });
    try {
      await client.connect();
      for (const channel of CHANNELS) await client.query(`LISTEN ${channel}`);
    } catch (err) {
      await client.end().catch(() => {});
      this.#log.warn(
        { err: (err as Error).message, retryInMs: this.#retryMs },
        'cannot listen for wake-ups yet',
      );
      this.#schedule();
      return;
    }
    if (this.#stopped) {
      await client.end().catch(() => {});
      return;
    }
    const reconnected = this.#retryMs !== RECONNECT_MS.first;
    this.#client = client;
    this.#retryMs = RECONNECT_MS.first;
    // What was published while no connection listened is lost: every waiter looks again.
    if (reconnected) for (const channel of CHANNELS) this.#deliver({ channel, id: '*' });
  }

  #schedule(): void {
    if (this.#stopped || this.#timer) return;
    const waitMs = this.#retryMs;
    this.#retryMs = Math.min(RECONNECT_MS.max, this.#retryMs * 2);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#connect();
    }, waitMs);
    this.#timer.unref();
  }

  #deliver(wakeUp: StoreWakeUp): void {
    for (const handler of this.#handlers) {
      try {
        handler(wakeUp);
      } catch (err) {
        this.#log.error({ err }, 'a wake-up handler threw');
      }
    }
  }
}
