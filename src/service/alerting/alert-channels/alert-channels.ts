import type { Kysely } from 'kysely';
import { validateBodyPart } from '../../platform/http/validation.js';
import { badField, notFound } from '../../platform/http/errors.js';
import type { OutboundPolicy } from '../../platform/http/outbound-policy.js';
import { iso } from '../../platform/http/pagination.js';
import {
  type AlertChannel,
  type AlertChannelType,
  CHANNEL_CONFIG_SCHEMAS,
  type CreateAlertChannel,
  SECRET_CONFIG_FIELDS,
} from './schema.js';
import {
  type CredentialView,
  keepMaskedSecrets,
  maskSecrets,
  openSecrets,
  type SecretLayout,
  sealSecrets,
} from '../../platform/store/secret-fields.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc, type StoredJson, writeDoc } from '../../platform/store/schema.js';
import { secretBoxOf } from '../../platform/store/secret-box.js';
import { GroupQueries } from '../../resources/index.js';
import { CheckQueries } from '../../checks/index.js';
import { type ChannelRow, ChannelQueries } from './store.js';

/**
 * Secret fields of a channel document of `type`: its integration secrets (SECRET_CONFIG_FIELDS) and, for
 * webhooks, the values of credential-named headers and query parameters (Authorization, x-api-key,
 * access_token, …; see isCredentialHeader).
 */
export function channelSecrets(type: string): SecretLayout {
  return {
    strings: (SECRET_CONFIG_FIELDS[type as AlertChannelType] ?? []).map((f) => `config.${f}`),
    headers: type === 'WEBHOOK' ? ['config.headers', 'config.queryParameters'] : [],
  };
}

/**
 * A stored channel document with its secrets in clear, for updates and the alerting engine.
 * @throws OutpostError OUTPOST_ERR_ENCRYPTION_KEY when a sealed value does not open with the store's key.
 */
export function openChannelDoc(db: Kysely<Database>, row: ChannelRow): ChannelDoc {
  const doc = readDoc(row.doc);
  return openSecrets(secretBoxOf(db), doc, channelSecrets(doc.type), 'alert_channels', Number(row.id));
}

function sealChannelDoc(db: Kysely<Database>, id: number, doc: ChannelDoc): StoredJson<ChannelDoc> {
  return writeDoc(sealSecrets(secretBoxOf(db), doc, channelSecrets(doc.type), 'alert_channels', id));
}

/** A subscription of a check or a check group to a channel. */
export type Subscription = { checkId?: string; groupId?: number; activated: boolean };

/** The stored document of a channel: every field, defaults applied, secrets in clear. */
export type ChannelDoc = Omit<AlertChannel, 'id' | 'created_at' | 'updated_at' | 'config'> & {
  config: Record<string, unknown>;
};

/**
 * Validates `config` against the schema of `type` (defaults applied) and
 * resolves masked secrets: a secret field or webhook credential header sent back
 * as the mask keeps the value stored for the same channel type.
 * @param stored the channel's current type and config on update; undefined on create.
 * @returns the config to store.
 * @throws HttpError 400 naming `config.<field>`; the mask with nothing of that type stored is refused.
 */
export function validateConfig(
  type: AlertChannelType,
  config: Record<string, unknown>,
  stored?: { type: string; config: Record<string, unknown> },
): Record<string, unknown> {
  const copy: Record<string, unknown> = validateBodyPart(CHANNEL_CONFIG_SCHEMAS[type], config, 'config');
  // Masks keep the stored value of the same place (secrets by field, webhook headers by name).
  const kept = keepMaskedSecrets(
    { config: copy },
    stored?.type === type ? { config: stored.config } : null,
    channelSecrets(type),
  );
  return kept.config;
}

/** Channel types whose config holds a user-given `url` the service connects to. */
const URL_CHANNEL_TYPES: ReadonlySet<string> = new Set(['WEBHOOK', 'SLACK']);

/**
 * Checks the `url` of a WEBHOOK or SLACK config against the outbound policy as far as it can be without
 * DNS (docs/alerting.md, "Where alerts may go"): an IP address in any spelling (`http://127.0.0.1/`,
 * `http://[::1]/`, `http://2130706433/`, `http://0177.0.0.1/`) and `localhost` are judged now; other host
 * names when a notification is sent. Other types pass.
 * @throws HttpError 400 OUTPOST_ERR_VALIDATION naming `config.url` (rule `outbound`) with the reason.
 */
export function assertOutboundUrl(
  type: string,
  config: Record<string, unknown>,
  policy: OutboundPolicy,
): void {
  if (!URL_CHANNEL_TYPES.has(type) || typeof config.url !== 'string') return;
  const refused = policy.refusalOfUrl(config.url);
  if (refused !== null) throw badField('config.url', `is ${refused}`, 'outbound');
}

/**
 * Checks `subscriptions`: each names exactly one of `checkId` and `groupId`,
 * of this account, at most once.
 * @throws HttpError 400 naming `subscriptions[i]` or `subscriptions[i].checkId|groupId`.
 */
export async function assertSubscriptions(
  db: Kysely<Database>,
  accountId: string,
  subscriptions: Subscription[],
): Promise<void> {
  if (subscriptions.length === 0) return;
  const { checkIds, groupIds } = await targetsOf(db, accountId);
  const seen = new Set<string>();
  subscriptions.forEach((s, i) => {
    const field = `subscriptions[${i}]`;
    if ((s.checkId === undefined) === (s.groupId === undefined)) {
      throw badField(field, 'must have exactly one of checkId and groupId', 'oneOf');
    }
    if (s.checkId !== undefined && !checkIds.has(s.checkId)) {
      throw badField(
        `${field}.checkId`,
        `must be the id of a check of this account; ${s.checkId} is not`,
        'exists',
      );
    }
    if (s.groupId !== undefined && !groupIds.has(s.groupId)) {
      throw badField(
        `${field}.groupId`,
        `must be the id of a check group of this account; ${s.groupId} is not`,
        'exists',
      );
    }
    const key = s.checkId !== undefined ? `c:${s.checkId}` : `g:${s.groupId}`;
    if (seen.has(key)) throw badField(field, 'repeats an earlier subscription', 'uniqueItems');
    seen.add(key);
  });
}

/** Ids of the account's checks and check groups, the targets a subscription may name. */
async function targetsOf(db: Kysely<Database>, accountId: string): Promise<ChannelTargets> {
  const checks = await new CheckQueries(db).channelSubscriptions(accountId);
  const groups = await new GroupQueries(db).list(accountId);
  const byChannel = new Map<number, Subscription[]>();
  const add = (channelId: number, subscription: Subscription) => {
    const list = byChannel.get(channelId) ?? [];
    list.push(subscription);
    byChannel.set(channelId, list);
  };
  for (const check of checks) {
    for (const s of check.subscriptions) add(s.alertChannelId, { checkId: check.id, activated: s.activated });
  }
  for (const group of groups) {
    const own = readDoc(group.doc).alertChannelSubscriptions ?? [];
    for (const s of own) add(s.alertChannelId, { groupId: Number(group.id), activated: s.activated });
  }
  return {
    checkIds: new Set(checks.map((c) => c.id)),
    groupIds: new Set(groups.map((g) => Number(g.id))),
    subscribers: byChannel,
  };
}

/**
 * What an alert channel's answer needs of the account: its check and group ids (a subscription to one deleted
 * since is left out) and, by channel id, the subscriptions the checks and groups hold themselves (their
 * `alertChannelSubscriptions`), which alert as much as the channel's own.
 */
export type ChannelTargets = {
  checkIds: Set<string>;
  groupIds: Set<number>;
  subscribers: Map<number, Subscription[]>;
};

/** Builds the stored document of a new channel from a validated create body. */
export function newChannelDoc(body: CreateAlertChannel, config: Record<string, unknown>): ChannelDoc {
  return { ...body, config, subscriptions: body.subscriptions ?? [] } as ChannelDoc;
}

/**
 * A row as the API shows it: secrets in `config` (integration secrets, webhook credential header
 * values) masked; `subscriptions` are the channel's own and those the checks and groups hold themselves
 * (a check subscribed by its `alertChannelSubscriptions` is listed too: it alerts through the channel), one per
 * check or group, the channel's own first; subscriptions to checks or groups deleted since are left out. In the
 * `clear` view (docs/security.md, "Credentials in answers") the secrets are opened with `db`'s key and answered.
 */
export function presentChannel(
  row: ChannelRow,
  targets: ChannelTargets,
  view: CredentialView = 'masked',
  db?: Kysely<Database>,
): AlertChannel {
  const stored = view === 'clear' && db ? openChannelDoc(db, row) : readDoc(row.doc);
  const doc = maskSecrets(stored, channelSecrets(stored.type), view);
  const config = doc.config;
  return {
    id: Number(row.id),
    ...doc,
    config: config as AlertChannel['config'],
    subscriptions: subscriptionsOf(doc.subscriptions, targets.subscribers.get(Number(row.id)) ?? []).filter(
      (s) => (s.checkId !== undefined ? targets.checkIds.has(s.checkId) : targets.groupIds.has(s.groupId!)),
    ),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at),
  };
}

/** `own` then those of `held` whose check or group `own` does not name. */
function subscriptionsOf(own: readonly Subscription[], held: readonly Subscription[]): Subscription[] {
  const key = (s: Subscription) => (s.checkId !== undefined ? `c:${s.checkId}` : `g:${s.groupId}`);
  const named = new Set(own.map(key));
  return [...own, ...held.filter((s) => !named.has(key(s)))];
}

/** Data access for alert channels, always scoped to one account. */
export class AlertChannels {
  readonly #db: Kysely<Database>;
  readonly #rows: ChannelQueries;
  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.#rows = new ChannelQueries(db);
  }

  /** What `presentChannel` needs of the account (ChannelTargets). */
  targets(accountId: string): Promise<ChannelTargets> {
    return targetsOf(this.#db, accountId);
  }

  /**
   * Inserts a channel (plaintext document); returns its row, secrets sealed for the generated id
   * (inserted first, its document written in the same transaction).
   */
  async insert(accountId: string, doc: ChannelDoc, nowMs: number): Promise<ChannelRow> {
    return this.#db.transaction().execute(async (tx) => {
      const rows = new ChannelQueries(tx);
      const id = await rows.insert(accountId, doc.type, nowMs);
      const text = sealChannelDoc(tx, id, doc);
      await rows.setDoc(id, text);
      return { id, type: doc.type, doc: text, created_at: nowMs, updated_at: null };
    });
  }

  /** The row's document with its secrets in clear. */
  open(row: ChannelRow): ChannelDoc {
    return openChannelDoc(this.#db, row);
  }

  /** @throws HttpError 404 when the channel is not in the account. */
  async get(accountId: string, id: number): Promise<ChannelRow> {
    const row = await this.#rows.get(accountId, id);
    if (!row) throw notFound('alert channel', id);
    return row;
  }

  /** One page of the account's channels, oldest first; every channel when `limit` is undefined. */
  async list(accountId: string, limit?: number, offset = 0): Promise<ChannelRow[]> {
    return this.#rows.list(accountId, limit, offset);
  }

  /** Replaces the document (plaintext; its secrets are sealed); returns the new row. */
  async update(accountId: string, before: ChannelRow, doc: ChannelDoc, nowMs: number): Promise<ChannelRow> {
    const text = sealChannelDoc(this.#db, Number(before.id), doc);
    await this.#rows.update(accountId, before.id, doc.type, text, nowMs);
    return { ...before, type: doc.type, doc: text, updated_at: nowMs };
  }

  /**
   * Deletes a channel and takes it out of the account's check groups'
   * `alertChannelSubscriptions`, in one transaction.
   * @throws HttpError 404 when the channel is not in the account.
   */
  async delete(accountId: string, id: number): Promise<void> {
    await this.#db.transaction().execute(async (tx) => {
      if (!(await new ChannelQueries(tx).delete(accountId, id))) throw notFound('alert channel', id);
      const groups = new GroupQueries(tx);
      for (const group of await groups.list(accountId)) {
        const doc = readDoc(group.doc);
        const kept = (doc.alertChannelSubscriptions ?? []).filter((s) => s.alertChannelId !== id);
        if (kept.length === (doc.alertChannelSubscriptions ?? []).length) continue;
        await groups.setDoc(group.id, writeDoc({ ...doc, alertChannelSubscriptions: kept }));
      }
    });
  }
}

/**
 * The `alertChannelSubscriptions` a newly created check gets (docs/api.md, "Checks":
 * `autoAssignAlerts`, default true, "subscribe the new check to all existing
 * alert channels"; "Alert channel": `autoSubscribe`, "subscribe newly created
 * checks automatically"): every channel of the account when `autoAssignAlerts`
 * is true, else only the channels with `autoSubscribe`. All activated, by id.
 */
export async function alertChannelsForNewCheck(
  db: Kysely<Database>,
  accountId: string,
  autoAssignAlerts: boolean,
): Promise<{ alertChannelId: number; activated: boolean }[]> {
  const rows = await new AlertChannels(db).list(accountId);
  return rows
    .filter((r) => autoAssignAlerts || readDoc(r.doc).autoSubscribe)
    .map((r) => ({ alertChannelId: Number(r.id), activated: true }));
}

/** What decides whether a channel alerts for a check (see subscribesTo). */
export type SubscriberCheck = {
  id: string;
  groupId?: number | null;
  alertChannelSubscriptions?: { alertChannelId: number; activated: boolean }[];
};

/**
 * Whether channel `channelId` (document `doc`) alerts for `check` (docs/api.md, "Events" 1): it is
 * in the check's own `alertChannelSubscriptions` with `activated` true, or its `subscriptions` name
 * the check or its group with `activated` true.
 */
export function subscribesTo(
  channelId: number,
  doc: Pick<ChannelDoc, 'subscriptions'>,
  check: SubscriberCheck,
): boolean {
  if ((check.alertChannelSubscriptions ?? []).some((s) => s.activated && s.alertChannelId === channelId))
    return true;
  return doc.subscriptions.some(
    (s) =>
      s.activated && (s.checkId === check.id || (s.groupId !== undefined && s.groupId === check.groupId)),
  );
}

/** Ids of the channels that alert for a check (see subscribesTo), by id. */
export async function channelIdsForCheck(
  db: Kysely<Database>,
  accountId: string,
  check: SubscriberCheck,
): Promise<number[]> {
  const ids: number[] = [];
  for (const row of await new AlertChannels(db).list(accountId)) {
    if (subscribesTo(Number(row.id), readDoc(row.doc), check)) ids.push(Number(row.id));
  }
  return ids;
}

declare module '../../platform/store/schema.js' {
  /** The documents of this module's tables (see StoredDocuments). */
  interface StoredDocuments {
    alert_channels: ChannelDoc;
  }
}
