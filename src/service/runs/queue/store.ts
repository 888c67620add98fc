import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import { sql } from 'kysely';
import type { CheckType, JobClass } from '../../../protocol/index.js';
import type { Database } from '../../platform/store/database.js';
import type { StoredJson } from '../../platform/store/schema.js';
import type { CheckDoc } from '../../checks/index.js';
import { isPostgres } from '../../platform/store/dialect.js';
import { Statement } from '../../platform/store/statement.js';

/** Every stored result deletes its job (platform/store/statement.ts: built once). */
const DELETE_JOB = new Statement((db: Kysely<Database>, v: { jobId: string }) =>
  db.deleteFrom('jobs').where('id', '=', v.jobId),
);

/** The store, or a transaction open on it. */
export type Tx = Kysely<Database> | Transaction<Database>;

/**
 * A row of `jobs` as stored. `round_id` is the run the job belongs to: the protocol and the API call
 * it `checkRunId`, the docs a "run" (one id for a parallel check's locations and every retry
 * attempt; the first job's id). The column keeps its first name; there is no migration for it.
 */
export type JobRow = Selectable<Database['jobs']>;

/**
 * Which jobs of one account and class a claim may take (see {@link JobQueries.claimable}).
 * Times are epoch ms.
 */
export type ClaimableFilter = {
  accountId: string;
  jobClass: JobClass;
  nowMs: number;
  checkTypes: readonly CheckType[];
  /** Runtime ids the agent holds; a job needing another runtime is left. */
  runtimes: readonly string[];
  /** The claiming agent: jobs whose lease it lost are never handed to it again. */
  agentId: string;
  /** Locations the agent serves; null: every location of the account. */
  locations: string[] | null;
  limit: number;
};

/** A job of the agent's scope, named by id: the account and, when not null, the locations it serves. */
export type JobScope = { accountId: string; locations: string[] | null };

/** Rows per INSERT of {@link JobQueries.insertJobs}: 18 values a row × 200 stays far below SQLite's limit. */
const INSERT_CHUNK_ROWS = 200;

/**
 * Every statement of the job queue (JobQueue in queue.ts) against `jobs`, and the reads of checks and
 * results it answers claims and refusals with. Results are written by ResultWriteQueries
 * (runs/results/store.ts), sessions settled by SessionQueries (runs/sessions/store.ts). One instance
 * per store handle or transaction (`new JobQueries(tx)`); the callers keep the transactions and the
 * order of statements.
 *
 * This is where the PostgreSQL dialect meets the queue: the claim's lost-agents test uses SQLite's
 * `instr` or PostgreSQL's `strpos`, and a claim on PostgreSQL locks the rows it reads with
 * `FOR UPDATE SKIP LOCKED` in {@link claimable}, so replicas claiming at once take different jobs
 * (SQLite serialises writers, so it needs none).
 */
export class JobQueries {
  /** The handle this store runs on, for collaborators that take one (the job builder, secrets, the outbox). */
  readonly db: Tx;

  constructor(db: Tx) {
    this.db = db;
  }

  /**
   * Inserts job rows, up to {@link INSERT_CHUNK_ROWS} per statement (a scheduler batch queues hundreds at once;
   * SQLite allows at most 32 766 bound values in one statement).
   */
  async insertJobs(rows: readonly Insertable<Database['jobs']>[]): Promise<void> {
    for (let i = 0; i < rows.length; i += INSERT_CHUNK_ROWS) {
      await this.db
        .insertInto('jobs')
        .values(rows.slice(i, i + INSERT_CHUNK_ROWS))
        .execute();
    }
  }

  /**
   * Queued jobs a claim may take, oldest `enqueued_at` first (index `jobs_claimable`): due
   * (`enqueued_at` ≤ now), unexpired, of the filter's check types and locations, needing no
   * runtime or one the agent holds, never lost by this agent.
   */
  async claimable(filter: ClaimableFilter) {
    const runtimes = [...filter.runtimes];
    let query = this.db
      .selectFrom('jobs')
      .select(['id', 'payload', 'check_id', 'check_session_id'])
      .where('account_id', '=', filter.accountId)
      .where('state', '=', 'queued')
      .where('job_class', '=', filter.jobClass)
      .where('enqueued_at', '<=', filter.nowMs)
      .where('expires_at', '>', filter.nowMs)
      .where('check_type', 'in', [...filter.checkTypes])
      .where((eb) =>
        runtimes.length > 0
          ? eb.or([eb('runtime_id', 'is', null), eb('runtime_id', 'in', runtimes)])
          : eb('runtime_id', 'is', null),
      )
      .orderBy('enqueued_at')
      .limit(filter.limit);
    const lostHere = `,${filter.agentId},`;
    if (isPostgres(this.db)) {
      query = query
        .where(sql<number>`strpos(',' || lost_agents || ',', ${lostHere})`, '=', 0)
        .forUpdate()
        .skipLocked();
    } else {
      query = query.where(sql<number>`instr(',' || lost_agents || ',', ${lostHere})`, '=', 0);
    }
    if (filter.locations) query = query.where('location', 'in', filter.locations);
    return query.execute();
  }

  /**
   * Of `checkIds`, those that still exist (in any account: each job's own account holds it), or, for the job of a
   * test run (runs/test-runs: its check id is a `test_runs` row, never a check), whose test run is still kept. Two
   * statements for a whole claim.
   */
  async existingChecks(checkIds: readonly string[]): Promise<Set<string>> {
    const ids = [...new Set(checkIds)];
    if (ids.length === 0) return new Set();
    const checks = await this.db.selectFrom('checks').select('id').where('id', 'in', ids).execute();
    const found = new Set(checks.map((row) => row.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) {
      const testRuns = await this.db
        .selectFrom('test_runs')
        .select('id')
        .where('id', 'in', missing)
        .execute();
      for (const row of testRuns) found.add(row.id);
    }
    return found;
  }

  /** The stored document of a check of the account (JSON text), or undefined when it is gone. */
  async checkDoc(accountId: string, checkId: string): Promise<StoredJson<CheckDoc> | undefined> {
    const row = await this.db
      .selectFrom('checks')
      .select('doc')
      .where('account_id', '=', accountId)
      .where('id', '=', checkId)
      .executeTakeFirst();
    return row?.doc;
  }

  /**
   * Deletes a job (payload included).
   * @returns false when there was no such row: another transaction deleted it first (on PostgreSQL this one
   *   waited for that one's row lock, then found the row gone).
   */
  async deleteJob(jobId: string): Promise<boolean> {
    const res = await DELETE_JOB.run(this.db, { jobId });
    return (res.numAffectedRows ?? 0n) > 0n;
  }

  /**
   * Leases queued jobs (one statement for a claim's jobs) to an agent until `leaseExpiresAtMs` and counts the
   * claim. `acknowledgedAtMs`: when the agent received them; null while the claim's answer may not have reached
   * it (see {@link acknowledge}).
   */
  async lease(
    jobIds: readonly string[],
    agentId: string,
    leaseExpiresAtMs: number,
    acknowledgedAtMs: number | null,
  ): Promise<void> {
    if (jobIds.length === 0) return;
    await this.db
      .updateTable('jobs')
      .set((eb) => ({
        state: 'leased',
        agent_id: agentId,
        lease_expires_at: leaseExpiresAtMs,
        acknowledged_at: acknowledgedAtMs,
        claims: eb('claims', '+', 1),
      }))
      .where('id', 'in', jobIds)
      .where('state', '=', 'queued')
      .execute();
  }

  /**
   * Acknowledges the jobs of `jobIds` the agent holds (leased to it, in the scope, unlapsed at `nowMs`): each
   * is marked received now and its lease runs to `leaseExpiresAtMs`. An already acknowledged job is answered
   * as acknowledged again (a repeated acknowledgement) without moving its lease.
   * @returns the ids acknowledged.
   */
  async acknowledge(
    scope: JobScope & { agentId: string },
    jobIds: readonly string[],
    nowMs: number,
    leaseExpiresAtMs: number,
  ): Promise<string[]> {
    if (jobIds.length === 0) return [];
    const held = this.db
      .updateTable('jobs')
      .where('id', 'in', [...jobIds])
      .where('account_id', '=', scope.accountId)
      .where('state', '=', 'leased')
      .where('agent_id', '=', scope.agentId)
      .where('lease_expires_at', '>', nowMs);
    const scoped = scope.locations ? held.where('location', 'in', scope.locations) : held;
    await scoped
      .set({ acknowledged_at: nowMs, lease_expires_at: leaseExpiresAtMs })
      .where('acknowledged_at', 'is', null)
      .execute();
    let rows = this.db
      .selectFrom('jobs')
      .select('id')
      .where('id', 'in', [...jobIds])
      .where('account_id', '=', scope.accountId)
      .where('state', '=', 'leased')
      .where('agent_id', '=', scope.agentId)
      .where('acknowledged_at', 'is not', null)
      .where('lease_expires_at', '>', nowMs);
    if (scope.locations) rows = rows.where('location', 'in', scope.locations);
    return (await rows.execute()).map((r) => r.id);
  }

  /**
   * Returns a claimed job its agent never acknowledged to the queue: the claim is not counted and the agent is
   * not barred from it (it never received it).
   */
  async release(jobId: string): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set((eb) => ({
        state: 'queued',
        agent_id: null,
        lease_expires_at: null,
        acknowledged_at: null,
        claims: eb('claims', '-', 1),
      }))
      .where('id', '=', jobId)
      .where('state', '=', 'leased')
      .execute();
  }

  /**
   * Deletes the scheduled runs of a check still waiting in a location's queue (unclaimed first attempts with no
   * check session): a run started now in that location takes their place, so the check does not run twice at
   * once.
   * @returns how many were deleted.
   */
  async dropQueuedScheduledRuns(accountId: string, checkId: string, location: string): Promise<number> {
    const res = await this.db
      .deleteFrom('jobs')
      .where('account_id', '=', accountId)
      .where('check_id', '=', checkId)
      .where('location', '=', location)
      .where('state', '=', 'queued')
      .where('check_session_id', 'is', null)
      .where('attempt', '=', 1)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  /** Records a run that ended without running (`expired_runs`). */
  async recordExpiredRun(row: Insertable<Database['expired_runs']>): Promise<void> {
    await this.db.insertInto('expired_runs').values(row).execute();
  }

  /**
   * Moves the lease end of a job to `leaseExpiresAtMs`, in one conditional UPDATE: only while it is
   * leased, to `agentId`, in the scope, and the lease has not lapsed by `nowMs`.
   * @returns whether the lease was renewed.
   */
  async renewLease(
    scope: JobScope & { agentId: string },
    jobId: string,
    nowMs: number,
    leaseExpiresAtMs: number,
  ): Promise<boolean> {
    let update = this.db
      .updateTable('jobs')
      // A renewal also acknowledges: the agent has the job.
      .set((eb) => ({
        lease_expires_at: leaseExpiresAtMs,
        acknowledged_at: eb.fn.coalesce('acknowledged_at', eb.val(nowMs)),
      }))
      .where('id', '=', jobId)
      .where('account_id', '=', scope.accountId)
      .where('state', '=', 'leased')
      .where('agent_id', '=', scope.agentId)
      // A lease that lapsed is lost, whether or not the job went to another agent yet.
      .where('lease_expires_at', '>', nowMs);
    if (scope.locations) update = update.where('location', 'in', scope.locations);
    const res = await update.executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  /** Whether the job exists in the scope, in any state. */
  async jobInScope(scope: JobScope, jobId: string): Promise<boolean> {
    let job = this.db
      .selectFrom('jobs')
      .select('id')
      .where('id', '=', jobId)
      .where('account_id', '=', scope.accountId);
    if (scope.locations) job = job.where('location', 'in', scope.locations);
    return (await job.executeTakeFirst()) !== undefined;
  }

  /** Whether `agentId` holds the job's lease in the scope, unlapsed at `nowMs`. */
  async isHeldBy(scope: JobScope & { agentId: string }, jobId: string, nowMs: number): Promise<boolean> {
    let query = this.db
      .selectFrom('jobs')
      .select('id')
      .where('id', '=', jobId)
      .where('account_id', '=', scope.accountId)
      .where('state', '=', 'leased')
      .where('agent_id', '=', scope.agentId)
      .where('lease_expires_at', '>', nowMs);
    if (scope.locations) query = query.where('location', 'in', scope.locations);
    return (await query.executeTakeFirst()) !== undefined;
  }

  /** The job row in the scope, or undefined. */
  async job(scope: JobScope, jobId: string): Promise<JobRow | undefined> {
    let query = this.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', jobId)
      .where('account_id', '=', scope.accountId);
    if (scope.locations) query = query.where('location', 'in', scope.locations);
    return query.executeTakeFirst();
  }

  /** The job rows of `jobIds` in the scope (any order; ids not found are left out). */
  async jobsOf(scope: JobScope, jobIds: readonly string[]): Promise<JobRow[]> {
    if (jobIds.length === 0) return [];
    let query = this.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', 'in', jobIds)
      .where('account_id', '=', scope.accountId);
    if (scope.locations) query = query.where('location', 'in', scope.locations);
    return query.execute();
  }

  /** The result stored for a job of the scope (one per job: each attempt is its own job), or undefined. */
  async resultOf(scope: JobScope, jobId: string) {
    let query = this.db
      .selectFrom('check_results')
      .select(['doc', 'agent_id', 'result_hash', 'check_id', 'check_session_id'])
      .where('job_id', '=', jobId)
      .where('account_id', '=', scope.accountId);
    if (scope.locations) query = query.where('run_location', 'in', scope.locations);
    return query.executeTakeFirst();
  }

  /**
   * Per run location of the account: how many jobs are queued, due by `nowMs` and unexpired, and the
   * `enqueued_at` (epoch ms) of the oldest of them. Locations with none are left out.
   */
  async queuedByLocation(
    accountId: string,
    nowMs: number,
  ): Promise<{ location: string; queued: number; oldestEnqueuedAtMs: number }[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .select((eb) => [
        'location',
        eb.fn.countAll<number>().as('queued'),
        eb.fn.min('enqueued_at').as('oldest'),
      ])
      .where('account_id', '=', accountId)
      .where('state', '=', 'queued')
      .where('enqueued_at', '<=', nowMs)
      .where('expires_at', '>', nowMs)
      .groupBy('location')
      .orderBy('location')
      .execute();
    return rows.map((r) => ({
      location: r.location,
      queued: Number(r.queued),
      oldestEnqueuedAtMs: Number(r.oldest),
    }));
  }

  /** Queued jobs whose `expires_at` passed by `nowMs` (index `jobs_queue_expiry`), at most `limit`. */
  async expiredQueued(nowMs: number, limit: number) {
    return this.db
      .selectFrom('jobs')
      .select(['id', 'account_id', 'check_id', 'check_session_id', 'round_id', 'location'])
      .where('state', '=', 'queued')
      .where('expires_at', '<=', nowMs)
      .limit(limit)
      .$if(isPostgres(this.db), (q) => q.forUpdate().skipLocked())
      .execute();
  }

  /**
   * Leased jobs whose lease lapsed by `nowMs` (index `jobs_lease_expiry`), of one account when
   * `accountId` is given, at most `limit`.
   */
  async lapsedLeases(nowMs: number, limit: number, accountId?: string): Promise<JobRow[]> {
    let query = this.db
      .selectFrom('jobs')
      .selectAll()
      .where('state', '=', 'leased')
      .where('lease_expires_at', '<=', nowMs);
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    // On PostgreSQL the rows are locked until the caller's transaction ends, and rows another replica's pass
    // (or claim) holds are skipped: a lapsed lease is ended once.
    return query
      .limit(limit)
      .$if(isPostgres(this.db), (q) => q.forUpdate().skipLocked())
      .execute();
  }

  /** Queues a leased job again, with `lostAgents` (comma-separated) never to get it back. */
  async requeue(jobId: string, lostAgents: string): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({
        state: 'queued',
        agent_id: null,
        lease_expires_at: null,
        acknowledged_at: null,
        lost_agents: lostAgents,
      })
      .where('id', '=', jobId)
      .where('state', '=', 'leased')
      .execute();
  }
}
