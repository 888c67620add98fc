import type { Kysely, Selectable } from 'kysely';
import type { AgentEvent } from '../../../protocol/messages.js';
import type { ClaimReport } from './agents.js';
import type { Database } from '../../platform/store/database.js';
import type { StoredJson } from '../../platform/store/schema.js';
import { Statement } from '../../platform/store/statement.js';

/** An agent row as stored (see AgentTable). */
export type AgentRow = Selectable<Database['agents']>;

// The statements of every claim and every result an agent posts, built once (platform/store/statement.ts).
const AGENT = new Statement((db: Kysely<Database>, v: { accountId: string; agentId: string }) =>
  db.selectFrom('agents').selectAll().where('account_id', '=', v.accountId).where('id', '=', v.agentId),
);
const SEEN_SINCE = new Statement((db: Kysely<Database>, v: { accountId: string; sinceMs: number }) =>
  db
    .selectFrom('agents')
    .select(['id', 'location_id', 'claim_report', 'last_seen_at', 'stopped_at'])
    .where('account_id', '=', v.accountId)
    .where('last_seen_at', '>=', v.sinceMs)
    .where('stopped_at', 'is', null),
);
type SeenValues = {
  agentId: string;
  accountId: string;
  locationId: string | null;
  version: string;
  nowMs: number;
  /** Written only by the statement `withHost` makes; the other keeps the host name stored. */
  hostName?: string;
};
/** An agent's row written on a request, with its host name (`withHost`: it sent one) or keeping the stored one. */
function recordSeen(withHost: boolean) {
  return new Statement((db: Kysely<Database>, v: SeenValues) => {
    const seen = {
      version: v.version,
      last_seen_at: v.nowMs,
      stopped_at: null,
      ...(withHost ? { host_name: v.hostName } : {}),
    };
    return db
      .insertInto('agents')
      .values({ id: v.agentId, account_id: v.accountId, location_id: v.locationId, ...seen })
      .onConflict((oc) => oc.columns(['account_id', 'id']).doUpdateSet(seen));
  });
}
const RECORD_SEEN = { withHost: recordSeen(true), withoutHost: recordSeen(false) };
const RECORD_CLAIM = new Statement(
  (db: Kysely<Database>, v: { accountId: string; agentId: string; report: string }) =>
    db
      .updateTable('agents')
      .set((eb) => ({
        claim_report: v.report,
        first_seen_at: eb.fn.coalesce('first_seen_at', 'last_seen_at'),
      }))
      .where('account_id', '=', v.accountId)
      .where('id', '=', v.agentId),
);

/**
 * The `agents` and `agent_events` tables' queries, every one scoped to one account (but those a
 * private location makes of the agents that used its keys), plus the leased jobs agents hold.
 */
export class AgentQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** The agent's row; undefined when the account has no agent `agentId`. */
  get(accountId: string, agentId: string): Promise<AgentRow | undefined> {
    return AGENT.first(this.#db, { accountId, agentId });
  }

  /** Every agent of the account, the most recently seen first. */
  list(accountId: string): Promise<AgentRow[]> {
    return this.#db
      .selectFrom('agents')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('last_seen_at', 'desc')
      .orderBy('id')
      .execute();
  }

  /**
   * Records that agent `agentId` of the account, at `version`, was seen at `nowMs` (epoch ms)
   * through a key of `locationId` (null: an account key): creates its row on its first request,
   * else updates its version and last-seen time (its location stays the one it registered with).
   */
  async recordSeen(
    accountId: string,
    agentId: string,
    version: string,
    locationId: string | null,
    nowMs: number,
    hostName?: string,
  ): Promise<void> {
    // A claim after a stop is a restart: the agent is connected again.
    const values = { agentId, accountId, locationId, version, nowMs };
    if (hostName) await RECORD_SEEN.withHost.run(this.#db, { ...values, hostName });
    else await RECORD_SEEN.withoutHost.run(this.#db, values);
  }

  /** Records that agent `agentId` said it stopped at `nowMs` (epoch ms); an unknown agent is left alone. */
  async recordStopped(accountId: string, agentId: string, nowMs: number): Promise<void> {
    await this.#db
      .updateTable('agents')
      .set({ stopped_at: nowMs })
      .where('account_id', '=', accountId)
      .where('id', '=', agentId)
      .execute();
  }

  /**
   * The agents of the account seen since `sinceMs` (epoch ms) and not stopped since: where each serves
   * (`location_id`, the regions of its `claim_report`). Index `agents_location_seen` does not cover the
   * account; an account has few agents.
   */
  seenSince(accountId: string, sinceMs: number) {
    return SEEN_SINCE.rows(this.#db, { accountId, sinceMs });
  }

  /** Stores an error report (an AgentEvent as JSON text) agent `agentId` sent at `nowMs` (epoch ms). */
  async recordEvent(
    accountId: string,
    agentId: string,
    event: StoredJson<AgentEvent>,
    nowMs: number,
  ): Promise<void> {
    await this.#db
      .insertInto('agent_events')
      .values({ account_id: accountId, agent_id: agentId, doc: event, created_at: nowMs })
      .execute();
  }

  /**
   * Writes the agent's claim report, and its first-seen time unless it has one: the start of this
   * claim (the claim wrote `last_seen_at` when it began).
   */
  async recordClaim(accountId: string, agentId: string, report: StoredJson<ClaimReport>): Promise<void> {
    await RECORD_CLAIM.run(this.#db, { accountId, agentId, report });
  }

  /** Last-seen times (epoch ms) of the agents that last used a key of the private location, and whether each said it stopped. */
  async lastSeenAtLocation(locationId: string): Promise<{ lastSeenAt: number; stopped: boolean }[]> {
    const rows = await this.#db
      .selectFrom('agents')
      .select(['last_seen_at', 'stopped_at'])
      .where('location_id', '=', locationId)
      .execute();
    return rows.map((a) => ({ lastSeenAt: Number(a.last_seen_at), stopped: a.stopped_at !== null }));
  }

  /** Forgets the private location of the agents that used its keys (the location is deleted). */
  async detachLocation(locationId: string): Promise<void> {
    await this.#db
      .updateTable('agents')
      .set({ location_id: null })
      .where('location_id', '=', locationId)
      .execute();
  }

  /** One page of an agent's error reports, newest first (index agent_events_agent). */
  events(accountId: string, agentId: string, limit: number, offset: number) {
    return this.#db
      .selectFrom('agent_events')
      .select(['id', 'agent_id', 'doc', 'created_at'])
      .where('account_id', '=', accountId)
      .where('agent_id', '=', agentId)
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
  }

  /** Per agent of `agentIds`, how many error reports it sent and when the last (epoch ms). */
  eventCounts(accountId: string, agentIds: readonly string[]) {
    return this.#db
      .selectFrom('agent_events')
      .select((eb) => ['agent_id', eb.fn.countAll<number>().as('count'), eb.fn.max('created_at').as('last')])
      .where('account_id', '=', accountId)
      .where('agent_id', 'in', agentIds)
      .groupBy('agent_id')
      .execute();
  }

  /** The jobs the agents of `agentIds` hold leases on, the soonest-expiring lease first. */
  leasedJobs(accountId: string, agentIds: readonly string[]) {
    return this.#db
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
      .where('agent_id', 'in', agentIds)
      .orderBy('lease_expires_at')
      .execute();
  }
}
