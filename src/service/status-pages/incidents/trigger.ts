import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { IncidentDoc, UpdateDoc } from './incident-views.js';
import type { Impact } from './schema.js';
import { IncidentQueries } from './store.js';
import { ServiceQueries } from '../admin/store.js';
import { queueUpdateMails } from '../admin/subscribers.js';
import type { CheckDoc } from '../../checks/index.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc, writeDoc } from '../../platform/store/schema.js';
import { AlertQueries } from '../../alerting/index.js';
import type { EngineAlert } from '../../alerting/index.js';

type Tx = Kysely<Database> | Transaction<Database>;

/** A check's `triggerIncident` (docs/api.md, "Incident trigger"). */
type TriggerIncident = {
  serviceId: string;
  severity: 'MINOR' | 'MEDIUM' | 'MAJOR' | 'CRITICAL';
  name: string;
  description: string;
  notifySubscribers: boolean;
};

/** Incident impact of a trigger's severity: CRITICAL and MAJOR are major outages, MEDIUM and MINOR partial. */
export function impactOf(severity: TriggerIncident['severity']): Impact {
  return severity === 'CRITICAL' || severity === 'MAJOR' ? 'MAJOR' : 'MINOR';
}

/**
 * The incident side of an alert of a check with `triggerIncident` (docs/alerting.md, "Incident
 * trigger"), in the result's transaction:
 * - the first notified failure of an episode (ALERT_FAILURE, or ALERT_DEGRADED_FAILURE when the
 *   episode opened degraded) opens an incident on the named status-page service, with the
 *   trigger's name, impact and description as its first (INVESTIGATING) update;
 * - the episode's ALERT_RECOVERY posts a RESOLVED update on that incident and stops it.
 * Once per episode: the incident's id is kept in the opening alert's document (`INCIDENT_ID`), and
 * an episode that has one opens no other. `notifySubscribers` is carried on both updates; with it,
 * each update queues a mail to the confirmed subscribers of the status pages showing the service, in
 * the same transaction (status-pages/subscribers.ts; the delivery worker's poll, or the kick after the
 * result's commit, sends them). A trigger naming a service that no longer exists opens nothing.
 * @returns the id of the incident opened or resolved, or null.
 */
export async function incidentForAlert(
  tx: Tx,
  input: { accountId: string; check: CheckDoc; alert: EngineAlert; nowMs: number },
): Promise<string | null> {
  const trigger = input.check.triggerIncident as TriggerIncident | null | undefined;
  const { alert } = input;
  if (!trigger || !alert.notify) return null;
  const opening = alert.alertType === 'ALERT_FAILURE' || alert.alertType === 'ALERT_DEGRADED_FAILURE';
  if (!opening && alert.alertType !== 'ALERT_RECOVERY') return null;
  const existing = await openedIncident(tx, input.check.id, alert.episodeId);
  const incidents = new IncidentQueries(tx as Kysely<Database>);
  const iso = new Date(input.nowMs).toISOString();

  if (opening) {
    if (existing) return null;
    const service = await new ServiceQueries(tx as Kysely<Database>).get(input.accountId, trigger.serviceId);
    if (!service) return null;
    const doc: IncidentDoc = {
      id: randomUUID(),
      name: trigger.name,
      impact: impactOf(trigger.severity),
      startedAt: iso,
      stoppedAt: null,
    };
    await incidents.insert(input.accountId, doc, input.nowMs);
    await incidents.link(input.accountId, doc.id, [service.id]);
    const opened = update('INVESTIGATING', trigger.description, trigger, iso);
    await incidents.insertUpdate(input.accountId, doc.id, opened, input.nowMs);
    await queueUpdateMails(tx, {
      accountId: input.accountId,
      incident: doc,
      serviceIds: [service.id],
      update: opened,
      nowMs: input.nowMs,
    });
    return doc.id;
  }

  if (!existing) return null;
  const row = await incidents.get(input.accountId, existing);
  if (!row) return null;
  const doc = readDoc(row.doc);
  if (doc.stoppedAt !== null) return null;
  const description = `${input.check.name} has recovered.`;
  const resolved = update('RESOLVED', description, trigger, iso);
  await incidents.insertUpdate(input.accountId, doc.id, resolved, input.nowMs);
  doc.stoppedAt = iso;
  await incidents.setDoc(input.accountId, doc.id, writeDoc(doc), input.nowMs);
  await queueUpdateMails(tx, {
    accountId: input.accountId,
    incident: doc,
    serviceIds: await incidents.linkedServiceIds(input.accountId, doc.id),
    update: resolved,
    nowMs: input.nowMs,
  });
  return doc.id;
}

function update(
  status: UpdateDoc['status'],
  description: string,
  trigger: TriggerIncident,
  iso: string,
): UpdateDoc {
  return {
    id: randomUUID(),
    status,
    description,
    notifySubscribers: trigger.notifySubscribers,
    publicIncidentUpdateDate: iso,
  };
}

/** The incident an episode of a check opened, from its alerts' documents. */
async function openedIncident(tx: Tx, checkId: string, episodeId: string): Promise<string | null> {
  for (const alert of await new AlertQueries(tx).episodeAlerts(checkId, episodeId)) {
    const id = (JSON.parse(alert.doc) as { INCIDENT_ID?: unknown }).INCIDENT_ID;
    if (typeof id === 'string') return id;
  }
  return null;
}
