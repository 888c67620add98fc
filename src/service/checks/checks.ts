import { randomUUID } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { CheckType, Location } from '../../protocol/index.js';
import { validateBodyPart } from '../platform/http/validation.js';
import { badField } from '../platform/http/errors.js';
import { CHECK_TYPE_REGISTRY, checkTypeEntry } from './types/registry.js';
import type { SharedCheckFields } from './types/common.js';
import type { UpdateAnyCheckBody } from './types/update.js';
import { type AlertSettingsDoc, ChannelQueries, completeAlertSettings } from '../alerting/index.js';
import { GroupQueries } from '../resources/index.js';
import { DEFAULT_RUNTIME_ID } from '../resources/index.js';
import { readDoc } from '../platform/store/schema.js';
import type { CheckResponse } from './responses.js';
import type { Database } from '../platform/store/database.js';
import {
  assertAlertChannelsExist,
  assertGroupExists,
  assertPrivateLocationsExist,
  assertSnippetExists,
} from '../resources/index.js';
import {
  CHECK_SECRETS,
  type CredentialView,
  keepMaskedSecrets,
  maskSecrets,
  openSecrets,
} from '../platform/store/secret-fields.js';
import { REDACTED } from '../../common/redaction.js';
import { isCredentialHeader } from '../../common/credential-headers.js';
import { secretBoxOf } from '../platform/store/secret-box.js';

/**
 * The fields every check has, always present (CheckResponseSchema; defaults filled at creation by
 * newCheckDoc).
 */
type CheckCore = {
  id: string;
  checkType: CheckType;
  name: string;
  activated: boolean;
  muted: boolean;
  doubleCheck: boolean;
  shouldFail: boolean;
  groupId: number | null;
  groupOrder: number | null;
  runtimeId: string | null;
  description: string | null;
  frequency: number;
  frequencyOffset: number | null;
  locations: Location[] | null;
  privateLocations: string[] | null;
  runParallel: boolean;
  tags: string[];
  alertChannelSubscriptions: { alertChannelId: number; activated: boolean }[];
  request: Record<string, unknown>;
  environmentVariables: { key: string; value: string; locked?: boolean; secret?: boolean }[] | null;
  created_at: string;
  updated_at: string | null;
};

/**
 * The other fields a check may hold, each optional (a type has only its own: thresholds, `script`,
 * `timeoutSeconds`, …), typed as `PUT /v1/checks/{id}` validates them (UpdateAnyCheckBody). A create body
 * is stricter per type; a stored value always passed one or the other.
 */
type CheckFields = Partial<Omit<Static<typeof UpdateAnyCheckBody>, keyof CheckCore | IgnoredCheckField>>;

/**
 * A check as stored and as the API shows it (minus masking and the `alertChannels` view): the
 * fields every type has (CheckCore), the fields of the types by name (CheckFields), and any other
 * field as `unknown`.
 */
export type CheckDoc = Record<string, unknown> & CheckFields & CheckCore;

/**
 * Fields of check bodies that are accepted and ignored (types/common.ts, `checkEchoFields`): the body validator
 * drops them (platform/http/validation.ts), so no handler sees them.
 */
type IgnoredCheckField =
  | 'id'
  | 'created_at'
  | 'createdAt'
  | 'updated_at'
  | 'updatedAt'
  | 'unservedLocations'
  | 'alertChannels'
  | 'sslCheck'
  | 'aiAutoRepairEnabled';

/** A validated body of `PUT /v1/checks/{id}` (UpdateAnyCheckBody), without its ignored fields. */
export type CheckUpdateBody = Omit<Static<typeof UpdateAnyCheckBody>, IgnoredCheckField>;

/** The ids a check body names in other resources (assertCheckReferences), each optional. */
export type CheckReferences = Pick<
  SharedCheckFields,
  'groupId' | 'setupSnippetId' | 'tearDownSnippetId' | 'alertChannelSubscriptions' | 'privateLocations'
>;

/** Location used when a check names neither `locations` nor `privateLocations`. */
export const DEFAULT_LOCATION: Location = 'us-east-1';

const EMPTY_ALERT_CHANNELS = { email: [], webhook: [], slack: [], sms: [] };

/**
 * Rules JSON Schema cannot express (docs/api.md, "Check" and "Limits"), with the limits of the
 * check's type from its registry entry (types/registry.ts):
 * - `frequency` in the set of the check's type;
 * - `frequencyOffset`: frequency 0 → 10, 20 or 30 (required); 1–60 → 1..floor(frequency×10);
 *   above 60 → 1..ceil(frequency/60);
 * - `maxPacketLossThreshold` at least `degradedPacketLossThreshold`;
 * - `degradedResponseTime` and `maxResponseTime` at most the type's cap, if any (API: 30 000 ms, its run limit);
 * - `timeoutSeconds` only on types that have it, at most their runTimeoutMs / 1000;
 * - no field another type owns (CheckTypeEntry.ownFields: an AGENTIC check's `prompt`, …);
 * - the type's own rules (CheckTypeEntry.rules), e.g. a Playwright check suite's project.
 * @throws HttpError 400 naming the field.
 */
export function checkCrossFieldRules(doc: CheckDoc, checkType: CheckType): void {
  const entry = checkTypeEntry(checkType);
  for (const other of CHECK_TYPE_REGISTRY) {
    if (other === entry) continue;
    for (const field of other.ownFields ?? []) {
      if (doc[field] !== undefined) {
        throw badField(field, `is not a field of ${checkType} checks`, 'additionalProperties');
      }
    }
  }
  const { frequencies: allowed, responseTimeLimitMs: limit } = entry;
  const { frequency, frequencyOffset: offset } = doc;
  if (!allowed.includes(frequency)) {
    throw badField('frequency', `must be one of ${allowed.join(', ')} for ${checkType} checks`, 'enum');
  }
  if (frequency === 0) {
    if (offset !== 10 && offset !== 20 && offset !== 30) {
      throw badField('frequencyOffset', 'must be 10, 20 or 30 when frequency is 0', 'frequencyOffset');
    }
  } else if (offset != null) {
    const max = frequency <= 60 ? Math.floor(frequency * 10) : Math.ceil(frequency / 60);
    if (offset > max) {
      throw badField(
        'frequencyOffset',
        `must be between 1 and ${max} when frequency is ${frequency}`,
        'frequencyOffset',
      );
    }
  }
  const { degradedPacketLossThreshold: degradedLoss, maxPacketLossThreshold: maxLoss } = doc;
  if (degradedLoss != null && maxLoss != null && maxLoss < degradedLoss) {
    throw badField('maxPacketLossThreshold', 'must be at least degradedPacketLossThreshold', 'packetLoss');
  }
  if (limit !== null) {
    for (const field of ['degradedResponseTime', 'maxResponseTime'] as const) {
      const value = doc[field];
      if (value != null && value > limit) {
        throw badField(field, `must be <= ${limit} for ${checkType} checks`, 'maximum');
      }
    }
  }
  const { timeoutSeconds } = doc;
  if (timeoutSeconds != null) {
    if (!entry.timeoutSeconds) {
      throw badField('timeoutSeconds', `is not a field of ${checkType} checks`, 'additionalProperties');
    }
    const max = entry.runTimeoutMs / 1000;
    if (timeoutSeconds > max) {
      throw badField('timeoutSeconds', `must be <= ${max} for ${checkType} checks`, 'maximum');
    }
  }
  entry.rules?.(doc);
}

/**
 * A multi-step check's runtime must support multi-step scripts (docs/checks.md, "Browser,
 * multi-step and Playwright check suites"): the check's `runtimeId`, else its group's, else
 * DEFAULT_RUNTIME_ID must be among `multiStepRuntimes` (runtimes whose runtime.json says
 * `multiStepSupport: true`). Other types pass.
 * @throws HttpError 400 naming `runtimeId`.
 */
export async function assertRuntimeFits(
  db: Kysely<Database>,
  accountId: string,
  doc: CheckDoc,
  multiStepRuntimes: ReadonlySet<string>,
): Promise<void> {
  if (!checkTypeEntry(doc.checkType).needsMultiStepRuntime) return;
  const group = doc.groupId == null ? undefined : await new GroupQueries(db).get(accountId, doc.groupId);
  const groupRuntime = group ? readDoc(group.doc).runtimeId : null;
  const runtimeId = doc.runtimeId ?? groupRuntime ?? DEFAULT_RUNTIME_ID;
  if (!multiStepRuntimes.has(runtimeId)) {
    const whose = doc.runtimeId ? '' : groupRuntime ? " (the group's)" : ' (the default)';
    throw badField(
      'runtimeId',
      `runtime ${runtimeId}${whose} has no multiStepSupport: ${doc.checkType} checks need one that has`,
      'multiStepSupport',
    );
  }
}

/** Builds the stored document of a new check from a validated create body. */
export function newCheckDoc(checkType: CheckType, body: Record<string, unknown>, now: Date): CheckDoc {
  const doc = {
    alertChannelSubscriptions: [],
    tags: [],
    locations: null,
    privateLocations: null,
    groupId: null,
    groupOrder: null,
    runtimeId: null,
    retryStrategy: null,
    triggerIncident: null,
    description: null,
    frequencyOffset: null,
    scriptPath: null,
    sslCheckDomain: null,
    environmentVariables: null,
    setupSnippetId: null,
    tearDownSnippetId: null,
    localSetupScript: null,
    localTearDownScript: null,
    frequency: 10,
    ...body,
    alertSettings: completeAlertSettings(body.alertSettings as AlertSettingsDoc | undefined),
    id: randomUUID(),
    checkType,
    created_at: now.toISOString(),
    updated_at: null,
  } as unknown as CheckDoc;
  if (
    (!doc.locations || doc.locations.length === 0) &&
    (!doc.privateLocations || doc.privateLocations.length === 0)
  ) {
    doc.locations = [DEFAULT_LOCATION];
  }
  checkCrossFieldRules(doc, checkType);
  return doc;
}

/**
 * Applies a validated update body to a stored check: provided fields replace
 * stored ones, `request` is validated against the check's type. Secrets sent back
 * masked (`*****`) keep their stored values (see keepMaskedSecrets: credential headers
 * by name, the basic-auth password, secret variables by key).
 * @param stored the stored check with its secrets in clear (CheckQueries.get).
 * @throws HttpError 400 when `checkType` differs, a merged rule breaks, or a mask
 *   stands for a secret that is not stored.
 */
export function mergeCheckUpdate(stored: CheckDoc, incoming: CheckUpdateBody, now: Date): CheckDoc {
  if (incoming.checkType !== undefined && incoming.checkType !== stored.checkType) {
    throw badField('checkType', `must be ${stored.checkType}: a check cannot change type`, 'const');
  }
  const body = keepMaskedSecrets(incoming, stored, CHECK_SECRETS);
  const merged = {
    ...stored,
    ...body,
    id: stored.id,
    checkType: stored.checkType,
    updated_at: now.toISOString(),
  };
  if (body.alertSettings !== undefined) merged.alertSettings = completeAlertSettings(body.alertSettings);
  if (body.request !== undefined) {
    const schema = checkTypeEntry(stored.checkType).updateRequest;
    merged.request = (
      schema ? validateBodyPart(schema, body.request, 'request') : structuredClone(body.request)
    ) as Record<string, unknown>;
  }
  if (body.frequency === undefined) merged.frequency = stored.frequency;
  checkCrossFieldRules(merged, stored.checkType);
  return merged;
}

/**
 * A check of a group with the group's settings applied, as the hosted API's group routes answer it (docs/api.md,
 * "Check groups"): the group's locations and private locations when it has any, its runtime when
 * the check names none, its alert settings (a check in a group alerts by its group's: alerting/settings.ts), its
 * retry strategy when it sets one, and its variables below the check's own (a check's variable of the same key
 * wins). Pure.
 */
export function withGroupSettings(check: CheckDoc, group: Record<string, unknown>): CheckDoc {
  const groupLocations = (group.locations as string[] | undefined) ?? [];
  const groupPrivate = (group.privateLocations as string[] | null | undefined) ?? [];
  const placed = groupLocations.length + groupPrivate.length > 0;
  const own = check.environmentVariables ?? [];
  const lent = ((group.environmentVariables as CheckDoc['environmentVariables']) ?? []).filter(
    (v) => !own.some((o) => o.key === v.key),
  );
  return {
    ...check,
    ...(placed ? { locations: groupLocations as CheckDoc['locations'], privateLocations: groupPrivate } : {}),
    runtimeId: check.runtimeId ?? (group.runtimeId as string | null | undefined) ?? null,
    alertSettings: completeAlertSettings(group.alertSettings as NonNullable<CheckDoc['alertSettings']>),
    useGlobalAlertSettings: group.useGlobalAlertSettings !== false,
    ...(group.retryStrategy && typeof group.retryStrategy === 'object'
      ? { retryStrategy: group.retryStrategy as NonNullable<CheckDoc['retryStrategy']> }
      : {}),
    environmentVariables: [...lent, ...own],
  };
}

/** The response-only `alertChannels` view: subscribed, activated channels grouped by kind (docs/api.md, "Check"). */
export type AlertChannelsView = {
  email: { address: string }[];
  webhook: { url: string; name: string; method: string; headers: unknown[]; queryParameters: unknown[] }[];
  slack: { url: string }[];
  sms: { number: string; name: string }[];
};

/**
 * The API view of a check: values of `secret` variables (once set, never readable again: docs/api.md,
 * "Environment variable"), the basic-auth password and credential header values (Authorization,
 * Cookie, x-api-key, … see isCredentialHeader) become `*****`; a header value or password that is
 * only a `{{VARIABLE}}` reference stays visible; in the `clear` view (docs/security.md, "Credentials in
 * answers") only `secret` variables are masked. Adds the `alertChannels` view.
 */
export function presentCheck(
  doc: CheckDoc,
  alertChannels: AlertChannelsView = EMPTY_ALERT_CHANNELS,
  view: CredentialView = 'masked',
): CheckResponse {
  return { ...maskSecrets(doc, CHECK_SECRETS, view), alertChannels };
}

/**
 * The account's alert channels as the `alertChannels` views of its checks show them, read once for any number
 * of checks (one query): each channel's view entry by its id, with its kind and its place in the account's
 * list (by id), the order the views keep. Build it with {@link readAlertChannelViews}.
 */
export type AlertChannelViews = ReadonlyMap<
  number,
  { kind: keyof AlertChannelsView; entry: AlertChannelsView[keyof AlertChannelsView][number] }
>;

/** No channels: the views of checks that subscribe to none. */
const NO_CHANNEL_VIEWS: AlertChannelViews = new Map();

/**
 * Reads the account's alert channels once for the `alertChannels` views of `docs` (one query; none when no
 * check of `docs` has an activated subscription). Webhook credential headers and query parameters are
 * redacted here, as the view shows them.
 */
export async function readAlertChannelViews(
  db: Kysely<Database>,
  accountId: string,
  docs: readonly Pick<CheckDoc, 'alertChannelSubscriptions'>[],
): Promise<AlertChannelViews> {
  if (!docs.some((d) => (d.alertChannelSubscriptions ?? []).some((s) => s.activated)))
    return NO_CHANNEL_VIEWS;
  const views = new Map<
    number,
    { kind: keyof AlertChannelsView; entry: AlertChannelsView[keyof AlertChannelsView][number] }
  >();
  for (const row of await new ChannelQueries(db).list(accountId)) {
    const { config } = readDoc(row.doc);
    if (row.type === 'EMAIL')
      views.set(row.id, { kind: 'email', entry: { address: String(config.address) } });
    else if (row.type === 'SLACK') views.set(row.id, { kind: 'slack', entry: { url: String(config.url) } });
    else if (row.type === 'SMS') {
      views.set(row.id, { kind: 'sms', entry: { number: String(config.number), name: String(config.name) } });
    } else if (row.type === 'WEBHOOK') {
      views.set(row.id, {
        kind: 'webhook',
        entry: {
          url: String(config.url),
          name: String(config.name),
          method: String(config.method ?? 'POST'),
          headers: ((config.headers as { key: string; value: string }[] | undefined) ?? []).map((h) =>
            isCredentialHeader(h.key) ? { ...h, value: REDACTED } : h,
          ),
          queryParameters: (
            (config.queryParameters as { key: string; value: string }[] | undefined) ?? []
          ).map((q) => (isCredentialHeader(q.key) ? { ...q, value: REDACTED } : q)),
        },
      });
    }
  }
  return views;
}

/**
 * Builds the `alertChannels` view of a check from its activated subscriptions and the account's channels
 * (readAlertChannelViews), in the account's order of channels (by id). Channels deleted since, and kinds the
 * view has no list for, are left out. Pure: no query.
 */
export function alertChannelsView(
  channels: AlertChannelViews,
  subscriptions: readonly { alertChannelId: number; activated: boolean }[] | undefined,
): AlertChannelsView {
  const view: AlertChannelsView = { email: [], webhook: [], slack: [], sms: [] };
  const ids = [...new Set((subscriptions ?? []).filter((s) => s.activated).map((s) => s.alertChannelId))];
  // Channel ids ascending: the order of the account's list, which the view kept when it filtered that list.
  for (const id of ids.sort((a, b) => a - b)) {
    const channel = channels.get(id);
    if (channel) (view[channel.kind] as unknown[]).push(channel.entry);
  }
  return view;
}

/**
 * Checks that everything a check body refers to exists in the account: its
 * group, setup and teardown snippets, alert channels and private locations.
 * @throws HttpError 400 naming the field (rule `exists`).
 */
export async function assertCheckReferences(
  db: Kysely<Database>,
  accountId: string,
  body: CheckReferences,
): Promise<void> {
  await assertGroupExists(db, accountId, body.groupId);
  await assertSnippetExists(db, accountId, body.setupSnippetId, 'setupSnippetId');
  await assertSnippetExists(db, accountId, body.tearDownSnippetId, 'tearDownSnippetId');
  await assertAlertChannelsExist(db, accountId, body.alertChannelSubscriptions);
  await assertPrivateLocationsExist(db, accountId, body.privateLocations);
}

/**
 * A stored check document with its secrets opened (values stored before sealing pass through).
 * @throws OutpostError OUTPOST_ERR_ENCRYPTION_KEY when a sealed value does not open with the store's key.
 */
export function openCheckSecrets(db: Kysely<Database>, stored: CheckDoc): CheckDoc {
  // A document opened already (CheckQueries hands out opened ones) is not opened twice: a clear value that
  // happens to start with `v1:` must not be taken for a sealed one.
  if (openedChecks.has(stored)) return stored;
  const opened = openSecrets(secretBoxOf(db), stored, CHECK_SECRETS, 'checks', stored.id);
  openedChecks.add(opened);
  return opened;
}

/** Check documents whose secrets are in clear (see openCheckSecrets). */
const openedChecks = new WeakSet<object>();

/** Every location a check runs in: public `locations` then `privateLocations`. */
export function runLocationsOf(doc: CheckDoc): string[] {
  return [...(doc.locations ?? []), ...(doc.privateLocations ?? [])];
}

declare module '../platform/store/schema.js' {
  /** The documents of this module's tables (see StoredDocuments). */
  interface StoredDocuments {
    checks: CheckDoc;
  }
}
