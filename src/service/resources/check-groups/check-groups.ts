import type { Kysely } from 'kysely';
import type { CheckDoc } from '../../checks/index.js';
import { CheckQueries } from '../../checks/index.js';
import { completeAlertSettings } from '../../alerting/index.js';
import { HttpError, notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/pagination.js';
import { assertAlertChannelsExist, assertPrivateLocationsExist, assertSnippetExists } from '../references.js';
import type { CheckGroup, CreateCheckGroup, UpdateCheckGroup } from './schema.js';
import {
  type CredentialView,
  GROUP_SECRETS,
  keepMaskedSecrets,
  maskSecrets,
  openSecrets,
  sealSecrets,
} from '../../platform/store/secret-fields.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc, type StoredJson, writeDoc } from '../../platform/store/schema.js';
import { secretBoxOf } from '../../platform/store/secret-box.js';
import { type GroupRow, GroupQueries } from './store.js';

/** Re-exported for check create/update: asserts a `groupId` names a group of the account (see references.ts). */
export { assertGroupExists } from '../references.js';

/** The stored document of a group: every writable field, defaults applied (no id or timestamps). */
export type GroupDoc = Omit<CheckGroup, 'id' | 'created_at' | 'updated_at'>;

/** Builds the stored document of a new group from a validated create body (schema defaults already applied). */
export function newGroupDoc(body: CreateCheckGroup): GroupDoc {
  return { ...body, alertSettings: completeAlertSettings(body.alertSettings) } as GroupDoc;
}

/**
 * Applies a validated update body: given fields replace stored ones whole
 * (nested objects included). A secret sent back as the mask `*****` keeps its stored
 * value (a secret variable by key, an `apiCheckDefaults` credential header by name, its
 * basic-auth password); a variable once secret cannot be made readable again
 * (docs/api.md, "Environment variable": "once set, the value cannot be unlocked").
 * @param stored the stored document with its secrets in clear (see openGroupSecrets).
 * @throws HttpError 400 naming `environmentVariables[i].value` or `.secret`, or the
 *   `apiCheckDefaults` field whose mask stands for nothing stored.
 */
export function mergeGroupUpdate(stored: GroupDoc, body: UpdateCheckGroup): GroupDoc {
  const kept = keepMaskedSecrets(body as Record<string, unknown>, stored, GROUP_SECRETS);
  const merged = { ...stored, ...kept } as GroupDoc;
  if (body.alertSettings !== undefined) merged.alertSettings = completeAlertSettings(body.alertSettings);
  return merged;
}

/**
 * A stored group document with its secrets opened (values stored before sealing pass through).
 * @throws OutpostError OUTPOST_ERR_ENCRYPTION_KEY when a sealed value does not open with the store's key.
 */
export function openGroupSecrets(db: Kysely<Database>, id: number, stored: GroupDoc): GroupDoc {
  return openSecrets(
    secretBoxOf(db),
    stored as Record<string, unknown>,
    GROUP_SECRETS,
    'check_groups',
    Number(id),
  ) as GroupDoc;
}

function sealGroupDoc(db: Kysely<Database>, id: number, doc: GroupDoc): StoredJson<GroupDoc> {
  return writeDoc(
    sealSecrets(
      secretBoxOf(db),
      doc as Record<string, unknown>,
      GROUP_SECRETS,
      'check_groups',
      Number(id),
    ) as GroupDoc,
  );
}

/**
 * Asserts that the ids and slugs a group body names exist in the account:
 * `setupSnippetId`, `tearDownSnippetId`, `alertChannelSubscriptions[].alertChannelId`, `privateLocations[]`.
 * @throws HttpError 400 naming the field, rule `exists`.
 */
export async function assertGroupReferences(
  db: Kysely<Database>,
  accountId: string,
  body: UpdateCheckGroup,
): Promise<void> {
  await assertSnippetExists(db, accountId, body.setupSnippetId, 'setupSnippetId');
  await assertSnippetExists(db, accountId, body.tearDownSnippetId, 'tearDownSnippetId');
  await assertAlertChannelsExist(db, accountId, body.alertChannelSubscriptions);
  await assertPrivateLocationsExist(db, accountId, body.privateLocations);
}

/**
 * A row as the API shows it: id, the document, ISO timestamps; secret variable values, the
 * `apiCheckDefaults` basic-auth password and credential header values masked (see maskSecrets), or in the
 * `clear` view (docs/security.md, "Credentials in answers") opened with `db`'s key and answered, secret
 * variables still masked.
 */
export function presentGroup(
  row: GroupRow,
  view: CredentialView = 'masked',
  db?: Kysely<Database>,
): CheckGroup {
  const stored = readDoc(row.doc) as GroupDoc;
  const opened = view === 'clear' && db ? openGroupSecrets(db, Number(row.id), stored) : stored;
  const doc = maskSecrets(opened as Record<string, unknown>, GROUP_SECRETS, view) as GroupDoc;
  return {
    id: Number(row.id),
    ...doc,
    environmentVariables: doc.environmentVariables ?? null,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at),
  };
}

/** Check groups of one account: documents go in with secrets in clear and are stored sealed (see GroupQueries). */
export class CheckGroups {
  readonly #db: Kysely<Database>;
  readonly #rows: GroupQueries;
  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.#rows = new GroupQueries(db);
  }

  /**
   * Inserts a group (plaintext document); returns its row, secrets sealed. The secrets are sealed for
   * the generated id, so the row is inserted first and its document written in the same transaction.
   */
  async insert(accountId: string, doc: GroupDoc, nowMs: number): Promise<GroupRow> {
    return this.#db.transaction().execute(async (tx) => {
      const rows = new GroupQueries(tx);
      const id = await rows.insert(accountId, doc.name, nowMs);
      const text = sealGroupDoc(tx, id, doc);
      await rows.setDoc(id, text);
      return { id, doc: text, created_at: nowMs, updated_at: null };
    });
  }

  /** The row's document with its secrets in clear, for merging an update. */
  open(row: GroupRow): GroupDoc {
    return openGroupSecrets(this.#db, row.id, readDoc(row.doc));
  }

  /** @throws HttpError 404 when the group is not in the account. */
  async get(accountId: string, id: number): Promise<GroupRow> {
    const row = await this.#rows.get(accountId, id);
    if (!row) throw notFound('check group', id);
    return row;
  }

  /** One page of the account's groups, oldest first. */
  async list(accountId: string, limit: number, offset: number): Promise<GroupRow[]> {
    return this.#rows.list(accountId, limit, offset);
  }

  /** Replaces the document (plaintext; its secrets are sealed); returns the new row. */
  async update(accountId: string, before: GroupRow, doc: GroupDoc, nowMs: number): Promise<GroupRow> {
    const text = sealGroupDoc(this.#db, Number(before.id), doc);
    await this.#rows.update(accountId, before.id, doc.name, text, nowMs);
    return { ...before, doc: text, updated_at: nowMs };
  }

  /**
   * Deletes a group that holds no checks (a check holds a group through its `groupId`).
   * @throws HttpError 404 unknown group; 409 while checks still belong to it.
   */
  async delete(accountId: string, id: number): Promise<void> {
    await this.get(accountId, id);
    const members = (await new CheckQueries(this.#db).list(accountId)).filter(
      (c: CheckDoc) => (c as { groupId?: unknown }).groupId === id,
    );
    if (members.length > 0) {
      throw new HttpError(
        'OUTPOST_ERR_GROUP_NOT_EMPTY',
        `check group ${id} still holds ${members.length} check(s); move or delete them first`,
        {
          id: String(id),
          checkIds: members.map((c) => c.id),
        },
      );
    }
    await this.#rows.delete(accountId, id);
  }
}

declare module '../../platform/store/schema.js' {
  /** The documents of this module's tables (see StoredDocuments). */
  interface StoredDocuments {
    check_groups: GroupDoc;
  }
}
