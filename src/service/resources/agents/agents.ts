import type { Static } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import {
  type AgentEvent,
  type CheckType,
  type ClaimRequest,
  JOB_CLASSES,
  type JobClass,
  jobClassOf,
} from '../../../protocol/index.js';
import { notFound } from '../../platform/http/errors.js';
import { iso, offsetOf } from '../../platform/http/pagination.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc, writeDoc } from '../../platform/store/schema.js';
import { LocationQueries } from '../private-locations/store.js';
import type { AgentErrorReportSchema, AgentResponseSchema } from './schema.js';
import { type AgentRow, AgentQueries } from './store.js';

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
  /**
   * The data-center locations an account-key agent said it serves (`ClaimRequest.locations`); absent or null:
   * every one of LOCATIONS. A private-location agent serves its location and reports none.
   */
  locations?: string[] | null;
};

/**
 * Whether an agent row counts as connected at `nowMs`: seen within {@link AGENT_CONNECTED_WINDOW_MS} and not
 * stopped since (an agent that stops cleanly says so, and shows as disconnected at once).
 */
export function isConnected(
  row: { last_seen_at: number; stopped_at: number | null },
  nowMs: number,
): boolean {
  return row.stopped_at === null && nowMs - Number(row.last_seen_at) <= AGENT_CONNECTED_WINDOW_MS;
}

/** An agent as `GET /v1/agents` and `GET /v1/agents/{id}` answer it (`AgentResponseSchema`). */
export type AgentView = Static<typeof AgentResponseSchema>;

/** One error report of an agent as `GET /v1/agents/{id}/error-reports` answers it (`AgentErrorReportSchema`). */
export type AgentErrorReport = Static<typeof AgentErrorReportSchema>;

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
  claim: Pick<ClaimRequest, 'freeSlots' | 'checkTypes' | 'runtimes' | 'locations'>,
  handedOut: readonly CheckType[],
  nowMs: number,
): Promise<void> {
  // One transaction: an agent's two class pollers may answer at once; neither report is lost.
  await db.transaction().execute(async (tx) => {
    const agents = new AgentQueries(tx);
    const row = await agents.get(accountId, agentId);
    if (!row) return;
    const before = row.claim_report ? readDoc(row.claim_report) : {};
    const report: ClaimReport = {
      classes: { ...(before.classes ?? {}) },
      runtimes: claim.runtimes,
      locations: row.location_id === null ? (claim.locations ?? null) : null,
    };
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
    await agents.recordClaim(accountId, agentId, writeDoc(report));
  });
}

/**
 * Reads the agents of an account: what they serve, when they were seen, their free slots and
 * running jobs, and their error reports (`POST /v1/agent/events`). Every query is scoped by
 * account: another account's agent is a 404.
 */
export class Agents {
  readonly #rows: AgentQueries;
  readonly #locations: LocationQueries;
  constructor(db: Kysely<Database>) {
    this.#rows = new AgentQueries(db);
    this.#locations = new LocationQueries(db);
  }

  /** Every agent of the account, the most recently seen first. `nowMs` decides `connected`. */
  async list(accountId: string, nowMs: number): Promise<AgentView[]> {
    return this.#present(accountId, await this.#rows.list(accountId), nowMs);
  }

  /** One agent of the account. @throws HttpError 404 when the account has no agent `agentId`. */
  async get(accountId: string, agentId: string, nowMs: number): Promise<AgentView> {
    const row = await this.#rows.get(accountId, agentId);
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
  ): Promise<AgentErrorReport[]> {
    const rows = await this.#rows.events(accountId, agentId, query.limit, offsetOf(query));
    if (rows.length === 0) {
      // An empty page of a known agent is an empty list; an unknown agent a 404.
      const known = await this.#rows.get(accountId, agentId);
      if (!known) throw notFound('agent', agentId);
    }
    return rows.map((r) => {
      // Partial: a field a stored report lacks is answered as '' (`stack` as null).
      const doc: Partial<AgentEvent> = readDoc(r.doc);
      return {
        id: Number(r.id),
        agentId: r.agent_id,
        created_at: iso(r.created_at),
        message: doc.message ?? '',
        stack: doc.stack ?? null,
        agentVersion: doc.agentVersion ?? '',
        platform: doc.platform ?? '',
        runtimeVersion: doc.runtimeVersion ?? '',
      };
    });
  }

  async #present(accountId: string, rows: AgentRow[], nowMs: number): Promise<AgentView[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const locationIds = [
      ...new Set(rows.map((r) => r.location_id).filter((id): id is string => id !== null)),
    ];
    const locations = new Map(
      (await this.#locations.byIds(accountId, locationIds)).map((l) => [
        l.id,
        { id: l.id, slugName: l.slug, name: String(readDoc(l.doc).name ?? l.slug) },
      ]),
    );
    const jobs = await this.#rows.leasedJobs(accountId, ids);
    const reports = await this.#rows.eventCounts(accountId, ids);
    return rows.map((row) => {
      const report = row.claim_report ? readDoc(row.claim_report) : null;
      const classes = report?.classes ?? {};
      const location = row.location_id === null ? null : (locations.get(row.location_id) ?? null);
      const errors = reports.find((r) => r.agent_id === row.id);
      return {
        id: row.id,
        version: row.version,
        scope: row.location_id === null ? 'ACCOUNT' : 'PRIVATE_LOCATION',
        privateLocation: location,
        locations:
          row.location_id === null ? (report?.locations ?? null) : location ? [location.slugName] : [],
        hostName: row.host_name ?? null,
        firstSeenAt: iso(row.first_seen_at ?? row.last_seen_at),
        lastSeenAt: iso(row.last_seen_at),
        stoppedAt: iso(row.stopped_at),
        connected: isConnected(row, nowMs),
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
          lastReportedAt: iso(errors?.last),
        },
      };
    });
  }
}

declare module '../../platform/store/schema.js' {
  /** The documents of this module's tables (see StoredDocuments). */
  interface StoredDocuments {
    'agents.claim_report': ClaimReport;
  }
}
