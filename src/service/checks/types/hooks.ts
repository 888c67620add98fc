import type { Transaction } from 'kysely';
import type { ServiceContext } from '../../context.js';
import type { ServiceApp } from '../../platform/http/service-app.js';
import type { Database } from '../../platform/store/database.js';
import type { CheckDoc } from '../checks.js';

/**
 * What a check type writes beside a check's own row on create or update ({@link CheckTypeHooks.onCreate},
 * {@link CheckTypeHooks.onUpdate}): `write` runs in the transaction that stores the check's document,
 * after it, so both commit or neither; `afterCommit` runs once that transaction has committed (e.g. to
 * wake a worker for what was written), never when it rolled back.
 */
export type CheckTypeWrite = {
  /**
   * Runs first in the transaction, before the check's row is written: checks (and on PostgreSQL locks) what
   * the write relies on, e.g. that an AGENTIC check's script did not move since the update read it. Its error
   * rolls the transaction back and answers as thrown. Absent: nothing to check.
   */
  guard?(tx: Transaction<Database>): Promise<void>;
  /** Writes the type's own rows in `tx`. Its error rolls the check's write back and answers as thrown. */
  write(tx: Transaction<Database>): Promise<void>;
  /** Runs after the commit; must not throw. */
  afterCommit(): void;
};

/**
 * The account's check of that id, secrets in clear (the checks store's `get`): handed to a type's routes so
 * the type's module needs not import the checks store (which imports the registry that imports the type).
 * @throws HttpError 404 `check {id} not found` when the check is not in the account.
 */
export type CheckLookup = (accountId: string, id: string) => Promise<CheckDoc>;

/**
 * A check type's lifecycle hooks: what the type does beyond its document in the `checks` table, so the
 * checks module's routes and store name no type (the registry is the one place that knows the types; a
 * rule taken from Grafana's synthetic-monitoring agent). Every hook is optional: a type without hooks is a
 * document and nothing else (every agent-run type today). The checks module calls them in this order on
 * create: the type's create schema and rules → `onCreate` (before any write) → one transaction (the check's
 * row, then the returned `write`) → `afterCommit` → `view` for the answer; on update the same with
 * `onUpdate`; on delete `onDelete` inside the delete's transaction.
 */
export type CheckTypeHooks = {
  /**
   * A new check of the type, validated and about to be stored: completes `check` in place with what the
   * service makes (HEARTBEAT: its normalised `heartbeat` and new ping token), outside any transaction, and
   * returns what to write beside it.
   * @throws HttpError 400 naming the field when the check breaks a rule of the type.
   */
  onCreate?(ctx: ServiceContext, accountId: string, check: CheckDoc): CheckTypeWrite;
  /**
   * An update of a check of the type, merged and validated (`check`; `before` is the stored one, secrets in
   * clear): completes `check` in place (HEARTBEAT keeps its ping token) and returns what to write beside it.
   * @throws HttpError 400 naming the field when the merged check breaks a rule of the type.
   */
  onUpdate?(ctx: ServiceContext, accountId: string, before: CheckDoc, check: CheckDoc): CheckTypeWrite;
  /**
   * Deletes the type's own rows of a check, in `tx`: the transaction that deletes the check's row (the
   * checks store runs it, so it gets no context).
   */
  onDelete?(tx: Transaction<Database>, accountId: string, checkId: string): Promise<void>;
  /**
   * The fields the type adds to the API view of its checks (HEARTBEAT: `pingUrl`, `heartbeatState`): one
   * object per check of `checks` (all of this type and of the account), in the same order; `{}` adds
   * nothing. Read-only; called after any write has committed.
   */
  view?(
    ctx: ServiceContext,
    accountId: string,
    checks: readonly CheckDoc[],
  ): Promise<Record<string, unknown>[]>;
  /**
   * Registers the type's own routes under `/v1` (HEARTBEAT: `GET /v1/checks/{id}/heartbeat-pings`), in the
   * checks module's scope, after its list route and before `GET /v1/checks/{id}`.
   */
  routes?(app: ServiceApp, ctx: ServiceContext, checks: CheckLookup): Promise<void>;
};
