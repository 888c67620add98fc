import { createHash, randomBytes } from 'node:crypto';
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { storeRateLimiter } from '../platform/store/rate-limits.js';
import type { ServiceContext } from '../context.js';
import { CheckQueries } from '../checks/index.js';
import { notFound } from '../platform/http/errors.js';
import { iso } from '../platform/http/pagination.js';
import { secretBoxOf } from '../platform/store/secret-box.js';
import { GroupQueries } from '../resources/index.js';
import { TriggerQueries, type TriggerKind, type TriggerRow } from './store.js';

/** Runs a trigger may start per check or group in {@link TRIGGER_WINDOW_SECONDS}: one. */
export const TRIGGER_RUNS_PER_WINDOW = 1;
/** The window of the rate limit, seconds: a trigger starts runs at most once every 10 s. */
export const TRIGGER_WINDOW_SECONDS = 10;

/** A trigger as `/v1/triggers/…` answers it, before the target's id is added. */
export type TriggerView = {
  id: number;
  token: string;
  url: string;
  called_at: string | null;
  created_at: string;
  updated_at: string | null;
};

/** What a call of a trigger URL came to: the sessions started, or over the rate limit. */
export type TriggerCall =
  | { outcome: 'STARTED'; checkSessionIds: string[] }
  | { outcome: 'RATE_LIMITED'; retryAfterMs: number };

/** A new trigger token: 192 random bits, base64url (32 characters). */
function newToken(): string {
  return randomBytes(24).toString('base64url');
}

/** The SHA-256 of a token, hex: what a call is looked up by. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The associated data a trigger's token is sealed with: its account and target. */
const aadOf = (accountId: string, kind: TriggerKind, targetId: string) =>
  `triggers:${accountId}:${kind}:${targetId}`;

/** The path of a trigger's URL under the service's address (the hosted API's). */
function pathOf(kind: TriggerKind, targetId: string, token: string): string {
  return kind === 'CHECK'
    ? `/checks/${targetId}/trigger/${token}`
    : `/check-groups/${targetId}/trigger/${token}`;
}

/**
 * Trigger URLs of checks and check groups (docs/api.md, "Triggers"): a secret token per check or group,
 * and a URL anyone holding it may call, without a key, to run the check (or every activated check of the
 * group) now, as the web app's "Run now" does (a check session each, source `TRIGGER_API`). The token is
 * stored twice: its SHA-256 to look a call up by, and sealed with the store's key so that `GET` answers it
 * as the hosted API does. A call is limited to {@link TRIGGER_RUNS_PER_WINDOW} per
 * {@link TRIGGER_WINDOW_SECONDS} s per check or group.
 */
export class Triggers {
  readonly #ctx: ServiceContext;
  readonly #rows: TriggerQueries;
  /** Shared by the replicas of a PostgreSQL store (see storeRateLimiter). */
  readonly #limiter: RateLimiterAbstract;

  constructor(ctx: ServiceContext) {
    this.#ctx = ctx;
    this.#rows = new TriggerQueries(ctx.db);
    this.#limiter = storeRateLimiter(ctx.db, {
      keyPrefix: 'trigger',
      points: TRIGGER_RUNS_PER_WINDOW,
      duration: TRIGGER_WINDOW_SECONDS,
    });
  }

  /**
   * The target's trigger, made now when it has none.
   * @returns the trigger and whether it was made by this call.
   * @throws HttpError 404 when the account has no such check or group.
   */
  async create(
    accountId: string,
    kind: TriggerKind,
    targetId: string,
    nowMs: number,
  ): Promise<{ view: TriggerView; created: boolean }> {
    await this.#assertTarget(accountId, kind, targetId);
    const existing = await this.#rows.ofTarget(accountId, kind, targetId);
    if (existing) return { view: this.#present(existing), created: false };
    const token = newToken();
    const row: Omit<TriggerRow, 'id'> = {
      account_id: accountId,
      target_kind: kind,
      target_id: targetId,
      token_hash: tokenHash(token),
      token_sealed: secretBoxOf(this.#ctx.db).seal(token, aadOf(accountId, kind, targetId)),
      called_at: null,
      created_at: nowMs,
      updated_at: null,
    };
    const id = await this.#rows.insert(row);
    return { view: this.#present({ ...row, id }), created: true };
  }

  /** @throws HttpError 404 when the target or its trigger is not in the account. */
  async get(accountId: string, kind: TriggerKind, targetId: string): Promise<TriggerView> {
    await this.#assertTarget(accountId, kind, targetId);
    const row = await this.#rows.ofTarget(accountId, kind, targetId);
    if (!row) throw notFound('trigger', targetId);
    return this.#present(row);
  }

  /** Deletes the target's trigger: its URL answers 404 from now on. @throws HttpError 404 when it has none. */
  async delete(accountId: string, kind: TriggerKind, targetId: string): Promise<void> {
    if (!(await this.#rows.delete(accountId, kind, targetId))) throw notFound('trigger', targetId);
  }

  /**
   * A call of the URL `/checks/{targetId}/trigger/{token}` (or the group's): starts the runs when `token` is
   * the target's and the rate limit allows.
   * @returns undefined when the token is not the target's, or the target is gone: the caller answers the
   *   same 404 as for an unknown target.
   */
  async call(
    kind: TriggerKind,
    targetId: string,
    token: string,
    nowMs: number,
  ): Promise<TriggerCall | undefined> {
    if (token.length === 0 || token.length > 128) return undefined;
    const row = await this.#rows.byTokenHash(tokenHash(token));
    if (!row || row.target_kind !== kind || row.target_id !== targetId) return undefined;
    if (!(await this.#targetExists(row.account_id, kind, targetId))) return undefined;
    try {
      await this.#limiter.consume(`${row.account_id}:${kind}:${targetId}`);
    } catch (err) {
      if (err instanceof RateLimiterRes) return { outcome: 'RATE_LIMITED', retryAfterMs: err.msBeforeNext };
      throw err;
    }
    const target = kind === 'CHECK' ? { checkId: [targetId] } : { groupId: [Number(targetId)] };
    const sessions = await this.#ctx.sessions.start(row.account_id, target, 'TRIGGER_API');
    await this.#rows.called(row.id, nowMs);
    return { outcome: 'STARTED', checkSessionIds: sessions.map((s) => s.checkSessionId) };
  }

  #present(row: TriggerRow): TriggerView {
    const token = secretBoxOf(this.#ctx.db).open(
      row.token_sealed,
      aadOf(row.account_id, row.target_kind, row.target_id),
    );
    return {
      id: row.id,
      token,
      url: `${this.#ctx.appUrl}${pathOf(row.target_kind, row.target_id, token)}`,
      called_at: iso(row.called_at),
      created_at: iso(row.created_at)!,
      updated_at: iso(row.updated_at),
    };
  }

  async #targetExists(accountId: string, kind: TriggerKind, targetId: string): Promise<boolean> {
    if (kind === 'CHECK') return new CheckQueries(this.#ctx.db).exists(accountId, targetId);
    return (await new GroupQueries(this.#ctx.db).get(accountId, Number(targetId))) !== undefined;
  }

  /** @throws HttpError 404 naming the check or check group when the account has none such. */
  async #assertTarget(accountId: string, kind: TriggerKind, targetId: string): Promise<void> {
    if (!(await this.#targetExists(accountId, kind, targetId))) {
      throw notFound(kind === 'CHECK' ? 'check' : 'check group', targetId);
    }
  }
}
