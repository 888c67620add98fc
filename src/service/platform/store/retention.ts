import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Logger } from '../../../common/logger.js';
import type { ArtifactStore } from '../../runs/artifacts/artifacts.js';
import type { Database } from './database.js';
import { SESSION_IDLE_MS } from '../web/sessions.js';
import { CONFIRMATION_TTL_MS, SubscriberStore } from '../../status-pages/admin/subscribers.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** How long stored data is kept, in days (OUTPOST_*_RETENTION_DAYS, see config.ts). */
export type RetentionPolicy = {
  /** Results and ended check sessions. Default 90. */
  resultDays: number;
  /** Artifact files of results. Default 30. */
  artifactDays: number;
  /** Agents' error reports, and agents not seen for this long. Default 30. */
  agentDays: number;
};

/** Defaults of RetentionPolicy (issue 9, 2.3). */
export const DEFAULT_RETENTION: RetentionPolicy = { resultDays: 90, artifactDays: 30, agentDays: 30 };

/** Options of the RetentionWorker. Times in ms. */
export type RetentionOptions = RetentionPolicy & {
  log: Logger;
  /** Time between passes. Default 600 000 (10 min). */
  intervalMs?: number;
  /** Rows deleted per statement; the event loop is given back between batches. Default 500. */
  batchSize?: number;
};

/** Rows each kind of data lost in one pass. */
export type RetentionOutcome = {
  results: number;
  artifacts: number;
  sessions: number;
  agentEvents: number;
  agents: number;
  /** Alerts, and delivered or failed notifications with their attempts, older than the results. */
  alerts: number;
  notifications: number;
};

/**
 * Deletes what is older than its retention: results (`created_at`), ended check sessions
 * (`started_at`), artifact files on disk (results keep their row, `has_artifacts` cleared),
 * alerts and delivered or failed alert notifications with their attempts (as old as results;
 * a notification still owed is kept), the hourly check-status rollups of hours older than
 * results, agent error reports and agents not seen for `agentDays`, and ended web-app sessions
 * (past `expires_at`, idle for 7 days, or their API key deleted). Works in batches of `batchSize`
 * rows by index (`check_results_created`, `check_results_artifacts_created`,
 * `check_sessions_started`, `agent_events_created`, `agents_seen`), each batch its own short
 * statement, yielding to the event loop between batches, so a pass never holds it long.
 */
export class RetentionWorker {
  readonly #db: Kysely<Database>;
  readonly #artifacts: ArtifactStore;
  readonly #options: Required<RetentionOptions>;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;

  constructor(db: Kysely<Database>, artifacts: ArtifactStore, options: RetentionOptions) {
    for (const key of ['resultDays', 'artifactDays', 'agentDays'] as const) {
      if (!Number.isInteger(options[key]) || options[key] < 1) {
        throw new RangeError(`${key} must be an integer of at least 1, got ${options[key]}`);
      }
    }
    this.#db = db;
    this.#artifacts = artifacts;
    this.#options = { intervalMs: 600_000, batchSize: 500, ...options };
  }

  /** Runs a pass now and then every `intervalMs` (timer unref'ed). */
  start(): void {
    if (this.#timer || this.#stopped) return;
    const pass = () => {
      if (this.#running) return;
      this.#running = this.runOnce(Date.now())
        .then((outcome) => {
          if (Object.values(outcome).some((n) => n > 0)) this.#options.log.info(outcome, 'retention pass');
        })
        .catch((err: unknown) => this.#options.log.error({ err }, 'retention pass failed'))
        .finally(() => {
          this.#running = undefined;
        });
    };
    this.#timer = setInterval(pass, this.#options.intervalMs);
    this.#timer.unref();
    pass();
  }

  /** Stops the timer and waits for a pass in progress (it ends after its current batch). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** One full pass at `nowMs` (epoch ms). */
  async runOnce(nowMs: number): Promise<RetentionOutcome> {
    const { resultDays, artifactDays, agentDays } = this.#options;
    const outcome: RetentionOutcome = {
      results: 0,
      artifacts: 0,
      sessions: 0,
      agentEvents: 0,
      agents: 0,
      alerts: 0,
      notifications: 0,
    };
    // Artifact files first, so results deleted below leave no files behind.
    const artifactCutoff = nowMs - Math.min(artifactDays, resultDays) * DAY_MS;
    outcome.artifacts = await this.#batches(async (limit) => {
      const rows = await this.#db
        .selectFrom('check_results')
        .select(['id', 'account_id', 'job_id'])
        .where('has_artifacts', '=', 1)
        .where('created_at', '<', artifactCutoff)
        .limit(limit)
        .execute();
      for (const row of rows) await this.#artifacts.removeJob(row.account_id, row.job_id);
      if (rows.length > 0) {
        await this.#db
          .updateTable('check_results')
          .set({ has_artifacts: 0 })
          .where(
            'id',
            'in',
            rows.map((r) => r.id),
          )
          .execute();
      }
      return rows.length;
    });
    const resultCutoff = nowMs - resultDays * DAY_MS;
    outcome.results = await this.#batches(async (limit) =>
      this.#deleteIds(
        'check_results',
        await this.#db
          .selectFrom('check_results')
          .select('id')
          .where('created_at', '<', resultCutoff)
          .limit(limit)
          .execute(),
      ),
    );
    outcome.sessions = await this.#batches(async (limit) =>
      this.#deleteIds(
        'check_sessions',
        await this.#db
          .selectFrom('check_sessions')
          .select('id')
          .where('started_at', '<', resultCutoff)
          .where('status', '!=', 'PROGRESS')
          .limit(limit)
          .execute(),
      ),
    );
    // Alerts and finished notifications live as long as results; a notification still owed is kept.
    outcome.alerts = await this.#batches(async (limit) =>
      this.#deleteIds(
        'check_alerts',
        await this.#db
          .selectFrom('check_alerts')
          .select('id')
          .where('created_at', '<', resultCutoff)
          .limit(limit)
          .execute(),
      ),
    );
    outcome.notifications = await this.#batches(async (limit) => {
      const rows = await this.#db
        .selectFrom('alert_notifications')
        .select('id')
        .where('created_at', '<', resultCutoff)
        .where('state', 'in', ['DELIVERED', 'FAILED'])
        .limit(limit)
        .execute();
      if (rows.length === 0) return 0;
      const ids = rows.map((r) => r.id);
      await this.#db.deleteFrom('alert_attempts').where('notification_id', 'in', ids).execute();
      return this.#deleteIds('alert_notifications', rows);
    });
    // Hourly check-status rollups live as long as results (not counted in the outcome).
    await this.#pruneHourlyStats(resultCutoff);
    const agentCutoff = nowMs - agentDays * DAY_MS;
    outcome.agentEvents = await this.#batches(async (limit) =>
      this.#deleteIds(
        'agent_events',
        await this.#db
          .selectFrom('agent_events')
          .select('id')
          .where('created_at', '<', agentCutoff)
          .limit(limit)
          .execute(),
      ),
    );
    outcome.agents = Number(
      (await this.#db.deleteFrom('agents').where('last_seen_at', '<', agentCutoff).executeTakeFirst())
        .numDeletedRows,
    );
    // Web-app sessions end on their own at their next use; these are the ones never used again.
    await this.#pruneWebSessions(nowMs);
    // Status-page subscribers who never confirmed: their confirmation link has expired.
    await new SubscriberStore(this.#db).deleteUnconfirmed(nowMs - CONFIRMATION_TTL_MS);
    return outcome;
  }

  /**
   * Deletes the `web_sessions` rows that ended by `nowMs` (epoch ms): past `expires_at`, unused for
   * SESSION_IDLE_MS, or whose API key was deleted; in batches (not counted in the outcome).
   */
  async #pruneWebSessions(nowMs: number): Promise<void> {
    const idleCutoff = nowMs - SESSION_IDLE_MS;
    await this.#batches(async (limit) => {
      const rows = await this.#db
        .selectFrom('web_sessions')
        .select('id_hash')
        .where((eb) =>
          eb.or([
            eb('expires_at', '<=', nowMs),
            eb('last_seen_at', '<=', idleCutoff),
            eb('api_key_id', 'not in', eb.selectFrom('api_keys').select('id')),
          ]),
        )
        .limit(limit)
        .execute();
      if (rows.length === 0) return 0;
      await this.#db
        .deleteFrom('web_sessions')
        .where(
          'id_hash',
          'in',
          rows.map((r) => r.id_hash),
        )
        .execute();
      return rows.length;
    });
  }

  /**
   * Deletes the `check_stats_hourly` rows of hours that ended by `cutoffMs` (epoch ms): one
   * statement per (account, hour), a row per check and run location, found by the
   * (account_id, hour_start) index, yielding between statements.
   */
  async #pruneHourlyStats(cutoffMs: number): Promise<void> {
    const lastHourStart = cutoffMs - HOUR_MS;
    const accounts = await this.#db.selectFrom('accounts').select('id').execute();
    for (const { id } of accounts) {
      for (;;) {
        const oldest = await this.#db
          .selectFrom('check_stats_hourly')
          .select('hour_start')
          .where('account_id', '=', id)
          .where('hour_start', '<=', lastHourStart)
          .orderBy('hour_start')
          .limit(1)
          .executeTakeFirst();
        if (!oldest || this.#stopped) break;
        await this.#db
          .deleteFrom('check_stats_hourly')
          .where('account_id', '=', id)
          .where('hour_start', '=', oldest.hour_start)
          .execute();
        await yieldToLoop();
      }
    }
  }

  /** Deletes the rows of `table` with the ids selected (one batch); returns how many. */
  async #deleteIds(
    table: 'check_results' | 'check_sessions' | 'agent_events' | 'check_alerts' | 'alert_notifications',
    rows: readonly { id: string | number }[],
  ): Promise<number> {
    if (rows.length === 0) return 0;
    // Ids are text in check_results and check_sessions, integers in agent_events: the store
    // compares them as they are; the cast only unites the three tables' id types for kysely.
    const ids = rows.map((r) => r.id) as string[];
    await this.#db.deleteFrom(table).where('id', 'in', ids).execute();
    return rows.length;
  }

  /** Repeats `batch` until it handles fewer than a full batch, yielding between batches. */
  async #batches(batch: (limit: number) => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await batch(this.#options.batchSize);
      total += n;
      if (n < this.#options.batchSize || this.#stopped) return total;
      await yieldToLoop();
    }
  }
}
