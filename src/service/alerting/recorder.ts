import type { Kysely, Transaction } from 'kysely';
import type { CheckResult } from '../../protocol/index.js';
import type { ResultRecorder, StoredResultRef } from '../runs/index.js';
import type { GroupDoc } from '../resources/index.js';
import type { CheckDoc } from '../checks/index.js';
import type { Database } from '../platform/store/database.js';
import { type AlertState, evaluate } from './engine.js';
import { incidentForAlert } from '../status-pages/index.js';
import { MaintenanceLookup } from '../maintenance-windows/index.js';
import { type AlertSettingsDoc, resolveAlertSettings } from './settings.js';
import { AlertQueries } from './store.js';
import { channelWants } from './channel-filter.js';
import { certificatesOf, sslMilestone } from './ssl-milestones.js';
import { stableId } from './stable-id.js';
import { alertTitle } from './titles.js';
import type { AlertRun, AlertType, EngineAlert, LocationOutcome, NotificationDoc } from './types.js';

type Tx = Kysely<Database> | Transaction<Database>;

/** Options of the alert recorder. */
export type AlertRecorderOptions = {
  /** Base of RESULT_LINK (the web app), e.g. http://localhost:3000. */
  appUrl: string;
  /** Called after the transaction that queued notifications committed (the delivery worker's wake-up). */
  onQueued?: () => void;
};

/**
 * The result recorder of alerting (ServiceModule.recorders, module.ts): runs in the transaction that
 * stores each result, so the alert state, the alerts and one notification per subscribed channel
 * commit with the result or not at all (docs/alerting.md, "Exactly once"). ATTEMPT results are
 * skipped; a FINAL result is judged once its run is complete (every location of a parallel round
 * has its FINAL result), and only when no later-started run of the check has been recorded.
 * Certificates the result carries are recorded for SSL expiry alerts. A check's results are judged one at a
 * time (AlertQueries.lockCheckAlerting), whichever replica stores them.
 */
export function alertRecorder(options: AlertRecorderOptions): ResultRecorder {
  return async (tx, stored) => {
    const queued = await recordResult(tx, stored, options);
    if (queued > 0) options.onQueued?.();
  };
}

/**
 * Everything alerting writes for one stored result (see alertRecorder).
 * @returns how many notifications were queued.
 */
export async function recordResult(
  tx: Tx,
  stored: StoredResultRef,
  options: AlertRecorderOptions,
): Promise<number> {
  if (stored.result.resultType !== 'FINAL') return 0;
  const store = new AlertQueries(tx);
  await store.lockCheckAlerting(stored.checkId);
  // The state read here is the one this result is judged against: nothing below writes it before the engine
  // runs, and the lock above keeps every other result of the check out until this transaction ends.
  const found = await store.checkWithState<AlertState>(stored.accountId, stored.checkId);
  if (!found) return 0;
  const { check, state: previous } = found;
  const group = check.groupId === null ? null : await store.group(stored.accountId, check.groupId);
  // A maintenance window that silences the check holds its notifications back as muting does: the state
  // and the alerts are still recorded (docs/alerting.md, "Maintenance windows").
  const reads = accountReadsOf(tx, stored.nowMs);
  const silenced = await reads.maintenance.silences(stored.accountId, {
    ...check,
    groupTags: group?.tags ?? null,
  });
  const context: AlertContext = { tx, store, check, group, stored, options, silenced };
  let queued = await recordCertificates(context);

  const run = await runOf(store, stored, check);
  if (!run) return queued;
  // Runs are judged in the order they ran, not the order their results arrived: a run that started
  // before one already judged (its result delayed by a crash, a partition, a retried post) is
  // recorded, not alerted on (docs/alerting.md, "Runs are judged in the order they ran").
  if (await store.hasNewerRun(check.id, run.startedAtMs, stored.roundId)) return queued;
  // The account's settings are read only for checks that use them.
  const owner = group ?? check;
  const accountSettings =
    owner.useGlobalAlertSettings === false ? null : await reads.alertSettings(stored.accountId, store);
  const resolved = resolveAlertSettings(accountSettings, group, check);
  const settings = context.silenced ? { ...resolved, muted: true } : resolved;
  const { state, alerts } = evaluate(previous, run, settings, stored.nowMs);
  // A passing run of a passing check changes nothing: no write (most results are these).
  const unchanged =
    previous === null ? state.episode === null : JSON.stringify(state) === JSON.stringify(previous);
  if (!unchanged) await store.saveAlertState(stored.accountId, stored.checkId, state, stored.nowMs);
  for (const alert of alerts) queued += await recordAlert(context, alert);
  return queued;
}

/**
 * What the results of one transaction read of their accounts, read once per transaction: the maintenance windows
 * on at the instant and the account's alert settings. A batch of results (`POST /v1/agent/results`) stores
 * them all in one transaction, which writes neither, so its results share one read of each instead of one per
 * result. Kept per transaction object (a new transaction reads again) and per instant `atMs`.
 */
type AccountReads = {
  atMs: number;
  maintenance: MaintenanceLookup;
  alertSettings(accountId: string, store: AlertQueries): Promise<AlertSettingsDoc | null>;
};
const accountReads = new WeakMap<Tx, AccountReads>();

/** The account reads of `tx` at `atMs` (see AccountReads). */
function accountReadsOf(tx: Tx, atMs: number): AccountReads {
  const known = accountReads.get(tx);
  if (known && known.atMs === atMs) return known;
  const settings = new Map<string, Promise<AlertSettingsDoc | null>>();
  const reads: AccountReads = {
    atMs,
    maintenance: new MaintenanceLookup(tx, atMs),
    alertSettings(accountId, store) {
      let found = settings.get(accountId);
      if (!found) {
        found = store.accountAlertSettings(accountId);
        settings.set(accountId, found);
      }
      return found;
    },
  };
  // The store itself (no transaction) is shared by every caller: read anew each time.
  if (tx.isTransaction) accountReads.set(tx, reads);
  return reads;
}

type AlertContext = {
  tx: Tx;
  store: AlertQueries;
  check: CheckDoc;
  group: GroupDoc | null;
  stored: StoredResultRef;
  options: AlertRecorderOptions;
  /** Whether a maintenance window silences the check's alerts now. */
  silenced: boolean;
};

/**
 * The run the stored result completes, or null while other locations of its round are still
 * running. A round's locations are its FINAL results; a location whose job expired without a
 * result is not in it.
 */
async function runOf(
  store: AlertQueries,
  stored: StoredResultRef,
  check: CheckDoc,
): Promise<AlertRun | null> {
  let results: CheckResult[] = [stored.result];
  // A round of one location (a check that does not run in parallel) is complete with its result.
  if (stored.roundId !== null && check.runParallel === true) {
    if (await store.roundHasJobs(stored.roundId)) return null;
    const round = await store.roundResults(stored.roundId);
    if (round.length > 0) results = round;
  }
  const locations: LocationOutcome[] = results.map((r) => ({
    location: r.runLocation,
    failed: r.hasFailures || r.hasErrors,
    degraded: r.isDegraded,
  }));
  const started = results.map((r) => Date.parse(r.startedAt)).filter(Number.isFinite);
  return {
    resultId: stored.resultId,
    resultType: 'FINAL',
    parallel: check.runParallel === true && results.length > 0,
    locations,
    startedAtMs: started.length > 0 ? Math.min(...started) : stored.nowMs,
  };
}

/** Records one alert, its notifications (when it notifies) and the incident it opens or resolves. */
async function recordAlert(context: AlertContext, alert: EngineAlert): Promise<number> {
  const { store, check, stored } = context;
  const alertId = stableId(check.id, alert.episodeId, alert.alertType, String(alert.sequence));
  const variables = notificationVariables(context, alert.alertType, {
    episodeId: alert.episodeId,
    isReminder: alert.isReminder,
    reminderSequence: alert.reminderSequence,
  });
  // The channels it goes to, known before the alert is stored: `notified` says someone was told, so an alert
  // no subscribed channel wants (or a check with no channel) is recorded as not notified.
  const channels = alert.notify
    ? (await subscribedChannels(context)).filter((c) => channelWants(c.doc, alert.alertType))
    : [];
  const inserted = await store.insertAlert({
    id: alertId,
    account_id: stored.accountId,
    check_id: check.id,
    alert_type: alert.alertType,
    episode_id: alert.episodeId,
    sequence: alert.sequence,
    notified: channels.length > 0 ? 1 : 0,
    result_id: alert.resultId,
    doc: JSON.stringify(variables),
    created_at: stored.nowMs,
  });
  if (!inserted) return 0;
  const incident = await incidentForAlert(context.tx, {
    accountId: stored.accountId,
    check,
    alert,
    nowMs: stored.nowMs,
  });
  if (incident) await store.setAlertDoc(alertId, JSON.stringify({ ...variables, INCIDENT_ID: incident }));
  if (channels.length === 0) return 0;
  return queueNotifications(
    context,
    alertId,
    alert.alertType,
    variables,
    (channelId) => [check.id, alert.episodeId, alert.alertType, alert.sequence, channelId].join(':'),
    channels,
  );
}

/** Queues one notification per channel of `channels`; keys already queued are skipped. */
async function queueNotifications(
  context: AlertContext,
  alertId: string,
  type: AlertType,
  variables: NotificationDoc,
  keyFor: (channelId: number) => string,
  channels: readonly { id: number }[],
): Promise<number> {
  const { store, check, stored } = context;
  let queued = 0;
  for (const channel of channels) {
    const inserted = await store.insertNotification({
      account_id: stored.accountId,
      alert_id: alertId,
      channel_id: channel.id,
      check_id: check.id,
      alert_type: type,
      idempotency_key: keyFor(channel.id),
      order_key: `${channel.id}:${check.id}`,
      state: 'PENDING',
      next_attempt_at: stored.nowMs,
      doc: JSON.stringify(variables),
      created_at: stored.nowMs,
    });
    if (inserted) queued += 1;
  }
  return queued;
}

/** The channels subscribed to the check (its own, its group's; docs/alerting.md, "Who is told"). */
async function subscribedChannels(context: AlertContext) {
  return context.store.subscribedChannels(context.stored.accountId, context.check);
}

/** The variables of a notification about `check` and the stored result (docs/alerting.md, "Webhook variables"). */
function notificationVariables(
  context: AlertContext,
  type: AlertType,
  extra: {
    episodeId: string;
    isReminder: boolean;
    reminderSequence: number;
    ssl?: { domain: string; daysRemaining: number };
  },
): NotificationDoc {
  const { check, group, stored, options } = context;
  const result = stored.result;
  const http = result.httpCheckResult;
  return {
    ALERT_TITLE: alertTitle(check.name, type, extra.ssl?.daysRemaining),
    ALERT_TYPE: type,
    CHECK_NAME: check.name,
    CHECK_ID: check.id,
    CHECK_TYPE: check.checkType,
    CHECK_DESCRIPTION: check.description ?? null,
    CHECK_RESULT_ID: stored.resultId,
    CHECK_ERROR_MESSAGE: result.errorMessage ?? firstFailedAssertion(result),
    RESPONSE_TIME: Number.isFinite(result.responseTime) ? result.responseTime : null,
    API_CHECK_RESPONSE_STATUS_CODE: http?.response?.statusCode ?? null,
    API_CHECK_RESPONSE_STATUS_TEXT: http?.response?.statusText ?? null,
    RUN_LOCATION: result.runLocation,
    REGION: result.runLocation,
    RESULT_LINK: `${options.appUrl.replace(/\/+$/, '')}/checks/${check.id}/results/${stored.resultId}`,
    STARTED_AT: result.startedAt,
    TAGS: [...check.tags],
    GROUP_NAME: group ? String((group as { name?: unknown }).name ?? '') || null : null,
    SSL_DAYS_REMAINING: extra.ssl?.daysRemaining ?? null,
    SSL_CHECK_DOMAIN: extra.ssl?.domain ?? null,
    IS_REMINDER: extra.isReminder,
    REMINDER_SEQUENCE: extra.reminderSequence,
    EPISODE_ID: extra.episodeId,
  };
}

/** "expected 200 … got 503" of the first failed assertion, when the result has no error message. */
function firstFailedAssertion(result: CheckResult): string | null {
  const failed = result.assertions.find((a) => !(a as { passed?: boolean }).passed);
  if (!failed || !result.hasFailures) return null;
  const a = failed as {
    source?: string;
    property?: string;
    comparison?: string;
    target?: string;
    actual?: unknown;
  };
  const what = [a.source, a.property].filter(Boolean).join(' ');
  return `assertion failed: ${what} ${a.comparison ?? ''} ${a.target ?? ''} (actual ${JSON.stringify(a.actual ?? null)})`
    .replace(/\s+/g, ' ')
    .slice(0, 1000);
}

/**
 * Keeps the latest certificate per (account, domain) and queues ALERT_SSL to each channel with
 * `sslExpiry` subscribed to the check, once per (domain, certificate fingerprint, channel,
 * milestone): the notification's idempotency key is that tuple, so a renewed certificate (a new
 * fingerprint) starts over and a repeat is never queued.
 * @returns how many notifications were queued.
 */
async function recordCertificates(context: AlertContext): Promise<number> {
  const { store, check, stored } = context;
  let queued = 0;
  for (const { domain, certificate } of certificatesOf(stored.result, check)) {
    const validTo = Date.parse(certificate.validTo);
    if (!Number.isFinite(validTo)) continue;
    await store.saveCertificate({
      account_id: stored.accountId,
      domain,
      fingerprint: certificate.fingerprint256,
      valid_to: validTo,
      check_id: check.id,
      result_id: stored.resultId,
      seen_at: stored.nowMs,
    });
    const muted = check.muted === true || context.group?.muted === true || context.silenced;
    const daysRemaining = Math.floor((validTo - stored.nowMs) / 86_400_000);
    const episodeId = `ssl:${domain}:${certificate.fingerprint256}`;
    for (const channel of await subscribedChannels(context)) {
      if (channel.doc.sslExpiry !== true) continue;
      const milestone = sslMilestone(daysRemaining, channel.doc.sslExpiryThreshold ?? 30);
      if (milestone === null) continue;
      const alertId = stableId(stored.accountId, episodeId, 'ALERT_SSL', String(milestone));
      const variables = notificationVariables(context, 'ALERT_SSL', {
        episodeId,
        isReminder: false,
        reminderSequence: 0,
        ssl: { domain, daysRemaining },
      });
      await store.insertAlert({
        id: alertId,
        account_id: stored.accountId,
        check_id: check.id,
        alert_type: 'ALERT_SSL',
        episode_id: episodeId,
        sequence: milestone,
        notified: muted ? 0 : 1,
        result_id: stored.resultId,
        doc: JSON.stringify(variables),
        created_at: stored.nowMs,
      });
      if (muted) continue;
      queued += await queueNotifications(
        context,
        alertId,
        'ALERT_SSL',
        variables,
        (channelId) =>
          `ssl:${stored.accountId}:${domain}:${certificate.fingerprint256}:${channelId}:${milestone}`,
        [channel],
      );
    }
  }
  return queued;
}

export type { AlertSettingsDoc };
