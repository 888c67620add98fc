import { Type } from '@sinclair/typebox';
import type { Transaction } from 'kysely';
import type { ServiceContext } from '../context.js';
import { notFound } from '../platform/http/errors.js';
import { IdParams } from '../platform/http/schema-helpers.js';
import type { Database } from '../platform/store/database.js';
import type { CheckDoc } from '../checks/index.js';
import { heartbeatExpectation, storedHeartbeat } from '../checks/index.js';
import type { CheckTypeHooks, CheckTypeWrite } from '../checks/index.js';
import type { Expectation } from './expectation.js';
import { newPingToken } from './monitor.js';
import { HeartbeatQueries, type HeartbeatRow } from './store.js';

/** One kept ping as `GET /v1/checks/{id}/heartbeat-pings` answers it; `receivedAt` an ISO time. */
const HeartbeatPingSchema = Type.Object({
  id: Type.Integer(),
  kind: Type.String(),
  exitCode: Type.Union([Type.Integer(), Type.Null()]),
  method: Type.String(),
  remoteAddress: Type.Union([Type.String(), Type.Null()]),
  userAgent: Type.Union([Type.String(), Type.Null()]),
  body: Type.Union([Type.String(), Type.Null()]),
  bodySizeBytes: Type.Integer(),
  receivedAt: Type.String({ format: 'date-time' }),
});

/** An epoch-ms column as an ISO time; null stays null. */
const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/**
 * What a HEARTBEAT check adds to its API view (docs/heartbeats.md): its `pingUrl` (also in its `heartbeat`,
 * where the hosted API answers it and its CLI reads it) and live `heartbeatState` (`status`, `lastPingAt`,
 * `startedAt`, `dueAt`, ISO times or null); nothing when it has no heartbeat row.
 */
function heartbeatView(
  ctx: ServiceContext,
  check: CheckDoc,
  row: HeartbeatRow | undefined,
): Record<string, unknown> {
  if (!row) return {};
  const pingUrl = ctx.heartbeats.pingUrl(row.token);
  const heartbeat = check.heartbeat && typeof check.heartbeat === 'object' ? check.heartbeat : {};
  return {
    pingUrl,
    heartbeat: { ...heartbeat, pingUrl },
    heartbeatState: {
      status: row.status,
      lastPingAt: iso(row.last_ping_at),
      // A run the heartbeat was marked late for is over, while its FAILED result is still being stored too.
      startedAt: row.late_result_at === null ? iso(row.started_at) : null,
      dueAt: iso(row.due_at),
    },
  };
}

/**
 * The check's `heartbeat` made ready to store, by the monitor's clock: validated, normalised and given
 * `pingToken`; returns the expectation it sets.
 * @throws HttpError 400 naming the field (see heartbeatExpectation).
 */
function prepareHeartbeat(check: CheckDoc, pingToken: string, nowMs: number): Expectation {
  const expectation = heartbeatExpectation(check.heartbeat, nowMs);
  check.heartbeat = storedHeartbeat(check.heartbeat as Record<string, unknown>, expectation, pingToken);
  return expectation;
}

/**
 * A write of the heartbeat row (`apply`, in the check's transaction, answering the new deadline), then the
 * sweeper told of that deadline once committed.
 */
function deadlineWrite(
  ctx: ServiceContext,
  apply: (tx: Transaction<Database>) => Promise<number | null>,
): CheckTypeWrite {
  let due: number | null = null;
  return {
    write: async (tx) => {
      due = await apply(tx);
    },
    afterCommit: () => ctx.heartbeats.deadlineMoved(due),
  };
}

/**
 * The HEARTBEAT check type's lifecycle (docs/heartbeats.md), wired into its registry entry: a heartbeat
 * row created with the check (NEW, or PAUSED when not activated; a new ping token) and reconfigured with
 * each update (the token stays: a value sent back is ignored), in the check's own transaction, then the
 * sweeper woken for the new deadline; the row and the kept pings deleted with the check; `pingUrl` and
 * `heartbeatState` in every answer; and `GET /v1/checks/{id}/heartbeat-pings`.
 */
export const HEARTBEAT_CHECK_HOOKS: CheckTypeHooks = {
  onCreate(ctx, accountId, check) {
    const nowMs = ctx.heartbeats.now();
    const token = newPingToken();
    const expectation = prepareHeartbeat(check, token, nowMs);
    return deadlineWrite(ctx, (tx) =>
      ctx.heartbeats.create(
        tx,
        { accountId, checkId: check.id, token, expectation, activated: check.activated },
        nowMs,
      ),
    );
  },

  onUpdate(ctx, accountId, before, check) {
    const nowMs = ctx.heartbeats.now();
    const token = String(before.heartbeat?.pingToken ?? '');
    const expectation = prepareHeartbeat(check, token, nowMs);
    return deadlineWrite(ctx, (tx) =>
      ctx.heartbeats.reconfigure(
        tx,
        { accountId, checkId: check.id, expectation, activated: check.activated },
        nowMs,
      ),
    );
  },

  onDelete: (tx, accountId, checkId) => new HeartbeatQueries(tx).deleteCheck(accountId, checkId),

  async view(ctx, accountId, checks) {
    const store = new HeartbeatQueries(ctx.db);
    if (checks.length === 1) {
      return [heartbeatView(ctx, checks[0]!, await store.byCheck(accountId, checks[0]!.id))];
    }
    const rows = new Map((await store.ofAccount(accountId)).map((r) => [r.check_id, r]));
    return checks.map((check) => heartbeatView(ctx, check, rows.get(check.id)));
  },

  async routes(app, ctx, checks) {
    app.get(
      '/v1/checks/:id/heartbeat-pings',
      {
        config: { permission: 'read' },
        schema: {
          tags: ['checks'],
          summary: "A heartbeat check's last 100 pings, newest first",
          params: IdParams,
          response: { 200: Type.Array(HeartbeatPingSchema) },
        },
      },
      async (request) => {
        const doc = await checks(request.accountId, request.params.id);
        if (doc.checkType !== 'HEARTBEAT') throw notFound('heartbeat check', request.params.id);
        const rows = await new HeartbeatQueries(ctx.db).pings(request.accountId, doc.id);
        return rows.map((r) => ({
          id: r.id,
          kind: r.kind,
          exitCode: r.exit_code,
          method: r.method,
          remoteAddress: r.remote_address,
          userAgent: r.user_agent,
          body: r.body,
          bodySizeBytes: r.body_size_bytes,
          receivedAt: new Date(Number(r.received_at)).toISOString(),
        }));
      },
    );
  },
};
