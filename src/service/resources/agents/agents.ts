import type { Kysely, Selectable } from 'kysely';
import {
  type CheckType,
  type ClaimRequest,
  JOB_CLASSES,
  type JobClass,
  jobClassOf,
} from '../../../protocol/index.js';
import { notFound } from '../../http/errors.js';
import { offsetOf } from '../../http/pagination.js';
import type { Database } from '../../store/database.js';

/**
 * An agent counts as connected while its last claim is at most this old: the longest claim long
 * poll (20 s, docs/protocol.md) and a 15 s margin for the round trip and the next claim.
 */
export const AGENT_CONNECTED_WINDOW_MS = 35_000;

/**
 * What an agent's claims reported, per job class, kept as `agents.claim_report` (JSON). An agent
 * claims per job class (each claim carries one class's check types and free slots), so each
 * class keeps its own last report: `freeSlots` is what the claim offered minus the jobs its answer
 * handed out, i.e. the slots still free when that claim ended.
 */
export type ClaimReport = {
  classes: Partial<Record<JobClass, { freeSlots: number; checkTypes: CheckType[]; reportedAt: number }>>;
  runtimes: string[];
};

/** An agent as the API shows it (see `AgentResponseSchema`). */
export type AgentView = Record<string, unknown> & { id: string };

const iso = (ms: number | null | undefined) => (ms == null ? null : new Date(Number(ms)).toISOString());

/**
 * Records what a successful claim of agent `agentId` reported (`claim`, and `handedOut`: the
 * check types of the jobs its answer holds), and when the agent was first seen (the start of its
 * first claim). Only the job classes whose check types the claim names are updated. The agent's
 * row is written by the claim itself; an agent whose row is gone (retention) is left alone.
 */
export async function recordClaimReport(
  db: Kysely<Database>,
  accountId: string,
  agentId: string,
  claim: Pick<ClaimRequest, 'freeSlots' | 'checkTypes' | 'runtimes'>,
  handedOut: readonly CheckType[],
  nowMs: number,
): Promise<void> {
  // One transaction: an agent's two class pollers may answer at once; neither report is lost.
  await db.transaction().execute(async (tx) => {
    const row = await tx
      .selectFrom('agents')
      .select('claim_report')
      .where('account_id', '=', accountId)
      .where('id', '=', agentId)
      .executeTakeFirst();
    if (!row) return;
    const before = row.claim_report ? (JSON.parse(row.claim_report) as Partial<ClaimReport>) : {};
    const report: ClaimReport = { classes: { ...(before.classes ?? {}) }, runtimes: claim.runtimes };
    for (const jobClass of JOB_CLASSES) {
      const checkTypes = claim.checkTypes.filter((t) => jobClassOf(t) === jobClass);
      if (checkTypes.length === 0) continue;
      const taken = handedOut.filter((t) => jobClassOf(t) === jobClass).length;
      report.classes[jobClass] = {
        freeSlots: Math.max(0, claim.freeSlots[jobClass] - taken),
        checkTypes,
        reportedAt: nowMs,
      };
    }
    await tx
      .updateTable('agents')
      .set((eb) => ({
        claim_report: JSON.stringify(report),
        // The claim wrote last_seen_at when it began: the first one is when the agent was first seen.
        first_seen_at: eb.fn.coalesce('first_seen_at', 'last_seen_at'),
      }))
      .where('account_id', '=', accountId)
      .where('id', '=', agentId)
      .execute();
  });
}

/**
 * Reads the agents of an account: what they serve, when they were seen, their free slots and
 * running jobs, and their error reports (`POST /v1/agent/events`). Every query is scoped by
 * account: another account's agent is a 404.
 */
export class Agents {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Every agent of the account, the most recently seen first. `nowMs` decides `connected`. */
  async list(accountId: string, nowMs: number): Promise<AgentView[]> {
    const rows = await this.#db
      .selectFrom('agents')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('last_seen_at', 'desc')
      .orderBy('id')
      .execute();
    return this.#present(accountId, rows, nowMs);
  }

  /** One agent of the account. @throws HttpError 404 when the account has no agent `agentId`. */
  async get(accountId: string, agentId: string, nowMs: number): Promise<AgentView> {
    const row = await this.#db
      .selectFrom('agents')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', agentId)
      .executeTakeFirst();
    if (!row) throw notFound('agent', agentId);
    const [view] = await this.#present(accountId, [row], nowMs);
    return view!;
  }

  /**
   * One page of an agent's error reports, newest first (index agent_events_agent).
   * @throws HttpError 404 when the account has neither the agent nor reports of it.
   */
  async errorReports(
    accountId: string,
    agentId: string,
    query: { limit: number; page: number },
  ): Promise<Record<string, unknown>[]> {
    const rows = await this.#db
      .selectFrom('agent_events')
      .select(['id', 'agent_id', 'doc', 'created_at'])
      .where('account_id', '=', accountId)
      .where('agent_id', '=', agentId)
      .orderBy('id', 'desc')
      .limit(query.limit)
      .offset(offsetOf(query))
      .execute();
    if (rows.length === 0) {
      // An empty page of a known agent is an empty list; an unknown agent a 404.
      const known = await this.#db
        .selectFrom('agents')
        .select('id')
        .where('account_id', '=', accountId)
        .where('id', '=', agentId)
        .executeTakeFirst();
      if (!known) throw notFound('agent', agentId);
    }
    return rows.map((r) => {
      const doc = JSON.parse(r.doc) as Record<string, unknown>;
      return {
        id: Number(r.id),
        agentId: r.agent_id,
        created_at: iso(r.created_at),
        message: String(doc.message ?? ''),
        stack: typeof doc.stack === 'string' ? doc.stack : null,
        agentVersion: String(doc.agentVersion ?? ''),
        platform: String(doc.platform ?? ''),
        runtimeVersion: String(doc.runtimeVersion ?? ''),
      };
    });
  }

  async #present(
    accountId: string,
    rows: Selectable<Database['agents']>[],
    nowMs: number,
  ): Promise<AgentView[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const locationIds = [
      ...new Set(rows.map((r) => r.location_id).filter((id): id is string => id !== null)),
    ];
    const locations = new Map(
      locationIds.length === 0
        ? []
        : (
            await this.#db
              .selectFrom('private_locations')
              .select(['id', 'slug', 'doc'])
              .where('account_id', '=', accountId)
              .where('id', 'in', locationIds)
              .execute()
          ).map((l) => [
            l.id,
            {
              id: l.id,
              slugName: l.slug,
              name: String((JSON.parse(l.doc) as { name?: unknown }).name ?? l.slug),
            },
          ]),
    );
    const jobs = await this.#db
      .selectFrom('jobs')
      .select([
        'id',
        'agent_id',
        'check_id',
        'check_type',
        'location',
        'check_session_id',
        'lease_expires_at',
      ])
      .where('account_id', '=', accountId)
      .where('state', '=', 'leased')
      .where('agent_id', 'in', ids)
      .orderBy('lease_expires_at')
      .execute();
    const reports = await this.#db
      .selectFrom('agent_events')
      .select((eb) => ['agent_id', eb.fn.countAll<number>().as('count'), eb.fn.max('created_at').as('last')])
      .where('account_id', '=', accountId)
      .where('agent_id', 'in', ids)
      .groupBy('agent_id')
      .execute();
    return rows.map((row) => {
      const report = row.claim_report ? (JSON.parse(row.claim_report) as Partial<ClaimReport>) : null;
      const classes = report?.classes ?? {};
      const location = row.location_id === null ? null : (locations.get(row.location_id) ?? null);
      const errors = reports.find((r) => r.agent_id === row.id);
      return {
        id: row.id,
        version: row.version,
        scope: row.location_id === null ? 'ACCOUNT' : 'PRIVATE_LOCATION',
        privateLocation: location,
        locations: row.location_id === null ? null : location ? [location.slugName] : [],
        firstSeenAt: iso(row.first_seen_at ?? row.last_seen_at),
        lastSeenAt: iso(row.last_seen_at),
        connected: nowMs - Number(row.last_seen_at) <= AGENT_CONNECTED_WINDOW_MS,
        // A class the agent never claimed for (an uptime-only agent's main class) has no free slots.
        freeSlots: report
          ? { uptime: classes.uptime?.freeSlots ?? 0, main: classes.main?.freeSlots ?? 0 }
          : null,
        checkTypes: JOB_CLASSES.flatMap((c) => classes[c]?.checkTypes ?? []),
        runtimes: report?.runtimes ?? [],
        runningJobs: jobs
          .filter((j) => j.agent_id === row.id)
          .map((j) => ({
            jobId: j.id,
            checkId: j.check_id,
            checkType: j.check_type,
            runLocation: j.location,
            checkSessionId: j.check_session_id,
            leaseExpiresAt: iso(j.lease_expires_at),
          })),
        errorReports: {
          count: Number(errors?.count ?? 0),
          lastReportedAt: iso(errors?.last as number | null),
        },
      };
    });
  }
}
