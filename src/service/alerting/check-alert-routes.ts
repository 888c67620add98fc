import { type Static, Type } from '@sinclair/typebox';
import type { ServiceContext } from '../context.js';
import { iso, offsetOf } from '../platform/http/pagination.js';
import { CheckIdParams, Defaulted, ResourceId, strict } from '../platform/http/schema-helpers.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import { AlertSettingsSchema } from '../checks/index.js';
import { CheckAlertSchema, type CheckAlertView } from './schema.js';
import { type AlertSettingsDoc, DEFAULT_ALERT_SETTINGS_DOC } from './settings.js';
import { AlertQueries } from './store.js';
import type { NotificationDoc } from './types.js';

const tags = ['alerting'];

const AlertListQuery = Type.Object(
  {
    limit: Defaulted(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
    page: Defaulted(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
    checkId: Type.Optional(ResourceId),
    from: Type.Optional(Type.Integer({ minimum: 0, description: 'Epoch seconds, inclusive' })),
    to: Type.Optional(Type.Integer({ minimum: 0, description: 'Epoch seconds, exclusive' })),
  },
  strict,
);

type AlertSettingsView = Static<typeof AlertSettingsSchema>;

/** The account's alert settings with the field's defaults under them. */
function withDefaults(stored: AlertSettingsDoc | null): AlertSettingsView {
  const defaults = DEFAULT_ALERT_SETTINGS_DOC as AlertSettingsDoc;
  const s = stored ?? {};
  return {
    escalationType: s.escalationType ?? defaults.escalationType,
    runBasedEscalation: { ...defaults.runBasedEscalation, ...s.runBasedEscalation },
    timeBasedEscalation: { ...defaults.timeBasedEscalation, ...s.timeBasedEscalation },
    reminders: { ...defaults.reminders, ...s.reminders },
    parallelRunFailureThreshold: {
      ...defaults.parallelRunFailureThreshold,
      ...s.parallelRunFailureThreshold,
    },
  } as AlertSettingsView;
}

/** The page of the account's alerts `query` asks for, newest first; only `checkId`'s when given. */
async function listAlerts(
  ctx: ServiceContext,
  accountId: string,
  query: Static<typeof AlertListQuery>,
  checkId?: string,
): Promise<CheckAlertView[]> {
  const rows = await new AlertQueries(ctx.db).alertPage(accountId, {
    limit: query.limit,
    offset: offsetOf(query),
    checkId: checkId ?? query.checkId,
    fromMs: query.from === undefined ? undefined : query.from * 1000,
    toMs: query.to === undefined ? undefined : query.to * 1000,
  });
  return rows.map((row): CheckAlertView => {
    const doc = JSON.parse(row.doc) as NotificationDoc & { INCIDENT_ID?: string };
    return {
      id: row.id,
      checkId: row.check_id,
      name: doc.CHECK_NAME,
      checkType: doc.CHECK_TYPE,
      alertType: row.alert_type as CheckAlertView['alertType'],
      title: doc.ALERT_TITLE,
      episodeId: row.episode_id,
      notified: row.notified === 1,
      isReminder: doc.IS_REMINDER,
      reminderSequence: doc.REMINDER_SEQUENCE,
      checkResultId: row.result_id,
      runLocation: doc.RUN_LOCATION,
      responseTime: doc.RESPONSE_TIME,
      // Text, as the hosted API answers it.
      statusCode:
        doc.API_CHECK_RESPONSE_STATUS_CODE === null || doc.API_CHECK_RESPONSE_STATUS_CODE === undefined
          ? null
          : String(doc.API_CHECK_RESPONSE_STATUS_CODE),
      error: doc.CHECK_ERROR_MESSAGE,
      sslDaysRemaining: doc.SSL_DAYS_REMAINING,
      sslCheckDomain: doc.SSL_CHECK_DOMAIN,
      incidentId: doc.INCIDENT_ID ?? null,
      startedAt: doc.STARTED_AT,
      created_at: iso(Number(row.created_at)),
    };
  });
}

/** `GET /v1/check-alerts` and `GET /v1/check-alerts/{checkId}`: alerts, newest first (listAlerts). */
function checkAlertsRoutes(app: ServiceApp, ctx: ServiceContext): void {
  app.get(
    '/v1/check-alerts',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'List alerts, newest first (filter by check and time)',
        querystring: AlertListQuery,
        response: { 200: Type.Array(CheckAlertSchema) },
      },
    },
    async (request) => listAlerts(ctx, request.accountId, request.query),
  );

  app.get(
    '/v1/check-alerts/:checkId',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'List the alerts of one check, newest first',
        params: CheckIdParams,
        querystring: Type.Omit(AlertListQuery, ['checkId']),
        response: { 200: Type.Array(CheckAlertSchema) },
      },
    },
    async (request) => listAlerts(ctx, request.accountId, request.query, request.params.checkId),
  );
}

/**
 * `GET|PUT /v1/alert-settings`: the account's alert settings, defaults under them; a PUT stores them whole,
 * defaults included (a later change of the defaults does not move an account's settings).
 */
function alertSettingsRoutes(app: ServiceApp, ctx: ServiceContext): void {
  app.get(
    '/v1/alert-settings',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Get the account’s alert settings (used by checks with useGlobalAlertSettings)',
        response: { 200: AlertSettingsSchema },
      },
    },
    async (request) => withDefaults(await new AlertQueries(ctx.db).accountAlertSettings(request.accountId)),
  );

  app.put(
    '/v1/alert-settings',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Replace the account’s alert settings; omitted fields take the defaults',
        body: AlertSettingsSchema,
        response: { 200: AlertSettingsSchema },
      },
    },
    async (request) => {
      const settings = withDefaults(request.body as AlertSettingsDoc);
      // Stored whole, defaults included: a later change of the defaults does not move an account's settings.
      await new AlertQueries(ctx.db).setAccountAlertSettings(
        request.accountId,
        settings as AlertSettingsDoc,
        Date.now(),
      );
      return settings;
    },
  );
}

/**
 * Alerts and the account's alert settings (docs/alerting.md): `GET /v1/check-alerts` (every
 * alert raised, newest first, by check and time), `GET /v1/check-alerts/{checkId}`, and
 * `GET|PUT /v1/alert-settings` (what checks with `useGlobalAlertSettings` use).
 */
export async function alertRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  checkAlertsRoutes(app, ctx);
  alertSettingsRoutes(app, ctx);
}
