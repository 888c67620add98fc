import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AgenticScriptChange } from '../../protocol/index.js';
import { HttpError, notFound } from '../platform/http/errors.js';
import type { Principal } from '../platform/http/permissions.js';
import type { Database } from '../platform/store/database.js';
import { AgenticQueries, type RepairRow, type ScriptState, type Tx } from './store.js';

/** What became of a script change (docs/checks.md, "Agentic"; the `status` of a repair). */
export type RepairStatus = 'APPLIED' | 'PENDING' | 'REJECTED' | 'STALE';

/** Who decided a repair: the person or key that applied or rejected it; null when the service did by the rules. */
export type RepairDecider = { kind: string; id: string; name: string | null };

/** A repair as `GET /v1/checks/{id}/agentic-repairs` answers it (RepairSchema); times ISO. */
export type RepairView = {
  id: string;
  checkId: string;
  kind: 'GENERATED' | 'REPAIRED';
  status: RepairStatus;
  baseVersion: number;
  newVersion: number | null;
  reason: string;
  diff: string;
  script: string;
  resultId: string | null;
  agentId: string | null;
  createdAt: string;
  decidedAt: string | null;
  decidedBy: RepairDecider | null;
};

/** How many times a conditional script update is tried before the ingest gives up (rows that keep moving). */
const SCRIPT_UPDATE_TRIES = 5;

/** A repair row as the API shows it. */
export function repairView(row: RepairRow): RepairView {
  return {
    id: row.id,
    checkId: row.check_id,
    kind: row.kind === 'GENERATED' ? 'GENERATED' : 'REPAIRED',
    status: row.status as RepairStatus,
    baseVersion: Number(row.base_version),
    newVersion: row.new_version === null ? null : Number(row.new_version),
    reason: row.reason,
    diff: row.diff,
    script: row.script,
    resultId: row.result_id,
    agentId: row.agent_id,
    createdAt: new Date(Number(row.created_at)).toISOString(),
    decidedAt: row.decided_at === null ? null : new Date(Number(row.decided_at)).toISOString(),
    decidedBy: row.decided_by === null ? null : (JSON.parse(row.decided_by) as RepairDecider),
  };
}

/**
 * Stores `script` as the next version over `state` (a conditional update of the check's row, tried again
 * on a row another writer changed meanwhile while its script stays the same), and marks STALE the check's
 * PENDING repairs made over any other version.
 * @returns the new version, or null when the script moved from under it (another version is stored now).
 * @throws Error when the row keeps changing past SCRIPT_UPDATE_TRIES (the transaction rolls back).
 */
async function storeNextVersion(
  store: AgenticQueries,
  accountId: string,
  checkId: string,
  state: ScriptState,
  script: string,
  nowMs: number,
): Promise<number | null> {
  let current: ScriptState | undefined = state;
  const baseVersion = state.scriptVersion;
  for (let i = 0; i < SCRIPT_UPDATE_TRIES; i++) {
    if (!current || current.scriptVersion !== baseVersion) return null;
    const version = baseVersion + 1;
    if (await store.setScript(accountId, checkId, current, script, version, nowMs)) {
      await store.staleOthers(accountId, checkId, version, nowMs);
      return version;
    }
    current = await store.lockScript(accountId, checkId);
  }
  throw new Error(`check ${checkId}: its row kept changing while its script was stored`);
}

/**
 * Applies the script change an AGENTIC run reported, in the transaction that stores its result
 * (docs/checks.md, "Agentic"), and keeps it in `agentic_repairs`:
 * - unverified: nothing (it stays in the result only);
 * - made over another version than the check's current one (a person edited the script, or another run's
 *   change was applied first): kept STALE;
 * - GENERATED over the current version: stored as the next version (APPLIED), whatever the repair mode;
 * - REPAIRED over the current version: AUTO → stored (APPLIED); REVIEW → kept PENDING for a person.
 * A result for a check of another type, or one no longer there, changes nothing. On PostgreSQL the check's
 * row is locked and the update is conditional on the document read, so two replicas ingesting two changes
 * over the same version apply one and keep the other STALE.
 * @param by.agentId the agent that ran it, as the service knows it (null when unknown).
 */
export async function applyScriptChange(
  tx: Tx,
  input: {
    accountId: string;
    checkId: string;
    resultId: string;
    agentId: string | null;
    change: AgenticScriptChange;
    nowMs: number;
  },
): Promise<RepairStatus | null> {
  const { accountId, checkId, change, nowMs } = input;
  if (!change.verified) return null;
  const store = new AgenticQueries(tx);
  const state = await store.lockScript(accountId, checkId);
  if (state?.checkType !== 'AGENTIC') return null;
  let status: RepairStatus;
  let newVersion: number | null = null;
  if (change.baseVersion !== state.scriptVersion) status = 'STALE';
  else if (change.kind === 'REPAIRED' && state.repairMode === 'REVIEW') status = 'PENDING';
  else {
    newVersion = await storeNextVersion(store, accountId, checkId, state, change.script, nowMs);
    status = newVersion === null ? 'STALE' : 'APPLIED';
  }
  await store.insertRepair({
    id: randomUUID(),
    account_id: accountId,
    check_id: checkId,
    result_id: input.resultId,
    agent_id: input.agentId,
    kind: change.kind,
    base_version: change.baseVersion,
    new_version: newVersion,
    status,
    reason: change.reason,
    diff: change.diff,
    script: change.script,
    created_at: nowMs,
    decided_at: status === 'PENDING' ? null : nowMs,
    decided_by: null,
  });
  return status;
}

/** The decider of a request's principal, as a repair keeps it (never a secret). */
export function deciderOf(principal: Principal | undefined): RepairDecider | null {
  if (!principal) return null;
  return { kind: principal.kind, id: principal.id, name: principal.name ?? null };
}

/**
 * A person's decision on a PENDING repair, in one transaction: `apply` stores its script as the check's next
 * version (only over the version it was made from) and marks it APPLIED; `reject` marks it REJECTED.
 * @returns the repair as decided.
 * @throws HttpError 404 when the check or the repair is not in the account; 409 OUTPOST_ERR_REPAIR_NOT_PENDING
 *   when the repair is not PENDING; 409 OUTPOST_ERR_SCRIPT_MOVED when applying one made over a version that is
 *   no longer the check's.
 */
export async function decideRepair(
  db: Kysely<Database>,
  input: {
    accountId: string;
    checkId: string;
    repairId: string;
    decision: 'apply' | 'reject';
    by: RepairDecider | null;
    nowMs: number;
  },
): Promise<RepairView> {
  const { accountId, checkId, repairId, nowMs } = input;
  return db.transaction().execute(async (tx) => {
    const store = new AgenticQueries(tx);
    const state = await store.lockScript(accountId, checkId);
    if (!state) throw notFound('check', checkId);
    const repair = await store.lockRepair(accountId, checkId, repairId);
    if (!repair) throw notFound('agentic repair', repairId);
    if (repair.status !== 'PENDING') {
      throw new HttpError(
        'OUTPOST_ERR_REPAIR_NOT_PENDING',
        `agentic repair ${repairId} is ${repair.status}`,
        {
          id: repairId,
          status: repair.status,
        },
      );
    }
    const decidedBy = input.by === null ? null : JSON.stringify(input.by);
    if (input.decision === 'reject') {
      await store.decide(repairId, { status: 'REJECTED', newVersion: null, decidedAt: nowMs, decidedBy });
    } else {
      const moved = () =>
        new HttpError(
          'OUTPOST_ERR_SCRIPT_MOVED',
          `agentic repair ${repairId} was made over script version ${repair.base_version}; the check is at version ${state.scriptVersion}`,
          { id: repairId, scriptVersion: state.scriptVersion },
        );
      if (Number(repair.base_version) !== state.scriptVersion) throw moved();
      const version = await storeNextVersion(store, accountId, checkId, state, repair.script, nowMs);
      if (version === null) throw moved();
      await store.decide(repairId, { status: 'APPLIED', newVersion: version, decidedAt: nowMs, decidedBy });
    }
    const decided = await store.lockRepair(accountId, checkId, repairId);
    return repairView(decided!);
  });
}
