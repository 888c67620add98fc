import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../context.js';
import type { RoutePlugin } from '../module.js';
import { notFound } from '../platform/http/errors.js';
import { iso, offsetOf, PageQuery } from '../platform/http/pagination.js';
import {
  Defaulted,
  IntegerIdParams,
  ResourceId,
  StringEnum,
  strict,
} from '../platform/http/schema-helpers.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import {
  type AttemptRow,
  DeliveryQueries,
  NOTIFICATION_STATES,
  type NotificationRow,
} from './delivery/store.js';
import { type AlertNotification, AlertNotificationSchema } from './schema.js';
import type { NotificationDoc } from './types.js';

const tags = ['alert notifications'];

/** How long `POST /v1/alert-channels/{id}/test` waits for the first attempt, ms. */
export const TEST_WAIT_MS = 10_000;

/** `maxWaitSeconds` of the channel test: 1–30 s, default TEST_WAIT_MS (as the session completion wait). */
const TestQuery = Type.Object(
  {
    maxWaitSeconds: Defaulted(Type.Integer({ minimum: 1, maximum: 30, default: TEST_WAIT_MS / 1000 })),
  },
  strict,
);
/** How often the test endpoint looks at the store while it waits for an attempt another process makes, ms. */
const TEST_POLL_MS = 200;

/** Query of `GET /v1/alert-notifications`: filters, `limit` (1–100, default 10) and `page`. */
const NotificationsQuery = Type.Object(
  {
    checkId: Type.Optional(ResourceId),
    alertChannelId: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
    state: Type.Optional(StringEnum(NOTIFICATION_STATES)),
    ...PageQuery(10).properties,
  },
  strict,
);

/** The forms an attempt's `answer` is stored in: an HTTP status text or an SMTP reply line. */
const SHORT_ANSWER = /^(?:HTTP|SMTP) \d{3}(?: [^\r\n]{0,200})?$/;

/**
 * A stored answer as the API shows it: the short status text it is now stored as, or null for anything
 * else (an attempt recorded by an older version, which kept up to 2 000 characters of the answer's body).
 */
function shortAnswer(answer: string | null): string | null {
  return answer !== null && SHORT_ANSWER.test(answer) ? answer : null;
}

/** The hosted API's status of a notification in each state (docs/api.md, "Alerts and notifications"). */
const HOSTED_STATUS: Record<AlertNotification['state'], AlertNotification['status']> = {
  PENDING: 'IN_PROGRESS',
  SENDING: 'IN_PROGRESS',
  DELIVERED: 'SUCCESS',
  FAILED: 'FAILURE',
};

/** A notification row and its attempts in the API's shape; `id` as text, as the hosted API answers it. */
function present(row: NotificationRow, attempts: AttemptRow[]): AlertNotification {
  const state = row.state as AlertNotification['state'];
  return {
    id: String(row.id),
    alertChannelId: Number(row.channel_id),
    checkId: row.check_id,
    alertId: row.alert_id,
    alertType: row.alert_type,
    state,
    idempotencyKey: row.idempotency_key,
    attempts: attempts.map((a) => ({
      startedAt: iso(a.started_at),
      latencyMs: Number(a.latency_ms),
      outcome: a.outcome as AlertNotification['attempts'][number]['outcome'],
      statusCode: a.status_code === null ? null : Number(a.status_code),
      answer: shortAnswer(a.answer),
      error: a.error,
    })),
    createdAt: iso(row.created_at),
    deliveredAt: iso(row.delivered_at),
    lastError: row.last_error,
    nextAttemptAt: row.state === 'PENDING' ? iso(row.next_attempt_at) : null,
    status: HOSTED_STATUS[state],
    timestamp: iso(row.created_at)!,
    checkAlertId: row.alert_id,
  };
}

/** The variables of a channel test: a failure-like alert saying it is a test. */
export function testNotificationDoc(episodeId: string, nowMs: number): NotificationDoc {
  return {
    ALERT_TITLE: 'Test notification from Outpost',
    ALERT_TYPE: 'ALERT_TEST',
    CHECK_NAME: 'Test check',
    CHECK_ID: 'test',
    CHECK_TYPE: 'API',
    CHECK_DESCRIPTION: 'A test of this alert channel; no check is failing.',
    CHECK_RESULT_ID: null,
    CHECK_ERROR_MESSAGE: 'This is a test notification',
    RESPONSE_TIME: null,
    API_CHECK_RESPONSE_STATUS_CODE: null,
    API_CHECK_RESPONSE_STATUS_TEXT: null,
    RUN_LOCATION: null,
    REGION: null,
    RESULT_LINK: null,
    STARTED_AT: new Date(nowMs).toISOString(),
    TAGS: [],
    GROUP_NAME: null,
    SSL_DAYS_REMAINING: null,
    SSL_CHECK_DOMAIN: null,
    IS_REMINDER: false,
    REMINDER_SEQUENCE: 0,
    EPISODE_ID: episodeId,
  };
}

/** The rows with their attempts, in the API's shape (one query for the attempts of all of them). */
async function withAttempts(
  store: DeliveryQueries,
  accountId: string,
  rows: NotificationRow[],
): Promise<AlertNotification[]> {
  const attempts = await store.attempts(
    accountId,
    rows.map((r) => Number(r.id)),
  );
  const byId = new Map<number, AttemptRow[]>();
  for (const a of attempts) {
    const list = byId.get(Number(a.notification_id)) ?? [];
    list.push(a);
    byId.set(Number(a.notification_id), list);
  }
  return rows.map((r) => present(r, byId.get(Number(r.id)) ?? []));
}

/** `GET /v1/alert-notifications`: the account's notifications, newest first, filtered and paged. */
function listNotificationsRoute(app: ServiceApp, store: DeliveryQueries): void {
  app.get(
    '/v1/alert-notifications',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'List alert notifications and their delivery attempts, newest first',
        querystring: NotificationsQuery,
        response: { 200: Type.Array(AlertNotificationSchema) },
      },
    },
    async (request) => {
      const query = request.query;
      const rows = await store.list(request.accountId, {
        checkId: query.checkId,
        alertChannelId: query.alertChannelId,
        state: query.state,
        limit: query.limit,
        offset: offsetOf(query),
      });
      return withAttempts(store, request.accountId, rows);
    },
  );
}

/** `GET /v1/alert-notifications/{id}`. @throws HttpError 404 when it is not the account's. */
function getNotificationRoute(app: ServiceApp, store: DeliveryQueries): void {
  app.get(
    '/v1/alert-notifications/:id',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Retrieve an alert notification with its delivery attempts',
        params: IntegerIdParams,
        response: { 200: AlertNotificationSchema },
      },
    },
    async (request) => {
      const row = await store.get(request.accountId, request.params.id);
      if (!row) throw notFound('alert notification', request.params.id);
      return (await withAttempts(store, request.accountId, [row]))[0]!;
    },
  );
}

/**
 * `POST /v1/alert-channels/{id}/test`: queues a test notification, wakes the delivery worker and waits up
 * to `maxWaitSeconds` for its first attempt: 200 with the notification and its attempt, or 202 while none
 * finished. @throws HttpError 404 when the channel is not the account's.
 */
function testChannelRoute(app: ServiceApp, ctx: ServiceContext, store: DeliveryQueries): void {
  app.post(
    '/v1/alert-channels/:id/test',
    {
      config: { permission: 'write' },
      schema: {
        tags: ['alert channels'],
        summary: 'Send a test notification through an alert channel',
        description:
          'Queues a notification of type ALERT_TEST and waits up to `maxWaitSeconds` (1–30, default 10) for its first delivery attempt: ' +
          '200 with the notification and the attempt (delivered or not), 202 when none finished yet ' +
          '(read it later with GET /v1/alert-notifications/{id}).',
        params: IntegerIdParams,
        querystring: TestQuery,
        response: { 200: AlertNotificationSchema, 202: AlertNotificationSchema },
      },
    },
    async (request, reply) => {
      const channelId = request.params.id;
      const accountId = request.accountId;
      if (!(await store.channel(accountId, channelId))) throw notFound('alert channel', channelId);
      const uuid = randomUUID();
      const nowMs = Date.now();
      const id = await store.queueTest({
        accountId,
        channelId,
        idempotencyKey: `test:${channelId}:${uuid}`,
        doc: JSON.stringify(testNotificationDoc(uuid, nowMs)),
        nowMs,
      });
      ctx.log.info({ alertChannelId: channelId, notificationId: id, accountId }, 'alert channel test queued');
      ctx.delivery.kick();
      // Another process's worker (several service processes on one store) is seen by looking again.
      const worker = ctx.delivery.running ? ctx.delivery : undefined;
      const deadline = nowMs + request.query.maxWaitSeconds * 1000;
      for (;;) {
        const row = await store.get(accountId, id);
        if (!row) throw notFound('alert notification', id);
        const [notification] = await withAttempts(store, accountId, [row]);
        if (notification!.attempts.length > 0) return reply.code(200).send(notification!);
        const left = deadline - Date.now();
        if (left <= 0 || ctx.shutdown.aborted) return reply.code(202).send(notification!);
        // This process's worker says when it recorded an attempt; a worker of another process
        // (several service processes on one store) is seen by looking again.
        await (worker
          ? worker.attempted(id, Math.min(left, TEST_POLL_MS * 5))
          : new Promise((resolve) => setTimeout(resolve, Math.min(left, TEST_POLL_MS))));
      }
    },
  );
}

/**
 * Alert notifications and their delivery attempts (not in the spec):
 * `GET /v1/alert-notifications` (newest first, filtered by check, channel and state; `limit`
 * 1–100, default 10; `page`), `GET /v1/alert-notifications/{id}`, and
 * `POST /v1/alert-channels/{id}/test`, which queues a test notification, wakes the delivery
 * worker and waits up to 10 s for its first attempt: 200 with the notification and its attempt,
 * or 202 while none finished. Everything is scoped to the caller's account.
 */
export const alertingRoutes: RoutePlugin = async (app, ctx: ServiceContext) => {
  const store = new DeliveryQueries(ctx.db);
  listNotificationsRoute(app, store);
  getNotificationRoute(app, store);
  testChannelRoute(app, ctx, store);
};
