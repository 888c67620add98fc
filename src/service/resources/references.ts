import type { Kysely } from 'kysely';
import { badField } from '../platform/http/errors.js';
import type { Database } from '../platform/store/database.js';
import { ChannelQueries } from '../alerting/index.js';
import { GroupQueries } from './check-groups/store.js';
import { LocationQueries } from './private-locations/store.js';
import { SnippetQueries } from './snippets/store.js';

/**
 * Existence checks for ids one resource's body names in another (a check's
 * `groupId`, a group's `setupSnippetId`, a channel's `subscriptions[].checkId`…).
 * Each is scoped to one account, so an id of another account is reported
 * exactly like an unknown one: 400 naming the field, rule `exists`.
 */

/**
 * Asserts that `groupId` is a check group of the account; null or undefined pass.
 * Call it from check create and update with the body's `groupId`.
 * @param field dotted path reported in the error; default `groupId`.
 * @throws HttpError 400 `{ field, in: 'body', rule: 'exists' }`.
 */
export async function assertGroupExists(
  db: Kysely<Database>,
  accountId: string,
  groupId: number | null | undefined,
  field = 'groupId',
): Promise<void> {
  if (groupId === null || groupId === undefined) return;
  if (!(await new GroupQueries(db).get(accountId, groupId)))
    throw badField(field, `must be the id of a check group of this account; ${groupId} is not`, 'exists');
}

/**
 * Asserts that `snippetId` is a snippet of the account; null or undefined pass.
 * @param field dotted path reported in the error, e.g. `setupSnippetId`.
 * @throws HttpError 400 naming `field`, rule `exists`.
 */
export async function assertSnippetExists(
  db: Kysely<Database>,
  accountId: string,
  snippetId: number | null | undefined,
  field: string,
): Promise<void> {
  if (snippetId === null || snippetId === undefined) return;
  if (!(await new SnippetQueries(db).get(accountId, snippetId)))
    throw badField(field, `must be the id of a snippet of this account; ${snippetId} is not`, 'exists');
}

/**
 * Asserts that every `alertChannelId` of `subscriptions` is an alert channel of the account.
 * @param field path of the array, e.g. `alertChannelSubscriptions`; the error names
 *   `<field>[i].alertChannelId`.
 * @throws HttpError 400, rule `exists`.
 */
export async function assertAlertChannelsExist(
  db: Kysely<Database>,
  accountId: string,
  subscriptions: readonly { alertChannelId: number }[] | null | undefined,
  field = 'alertChannelSubscriptions',
): Promise<void> {
  if (!subscriptions || subscriptions.length === 0) return;
  const known = new Set((await new ChannelQueries(db).list(accountId)).map((r) => Number(r.id)));
  subscriptions.forEach((s, i) => {
    if (!known.has(s.alertChannelId)) {
      throw badField(
        `${field}[${i}].alertChannelId`,
        `must be the id of an alert channel of this account; ${s.alertChannelId} is not`,
        'exists',
      );
    }
  });
}

/**
 * Asserts that every slug of `slugs` is a private location of the account.
 * @param field path of the array, e.g. `privateLocations`; the error names `<field>[i]`.
 * @throws HttpError 400, rule `exists`.
 */
export async function assertPrivateLocationsExist(
  db: Kysely<Database>,
  accountId: string,
  slugs: readonly string[] | null | undefined,
  field = 'privateLocations',
): Promise<void> {
  if (!slugs || slugs.length === 0) return;
  const known = new Set(await new LocationQueries(db).slugs(accountId));
  slugs.forEach((slug, i) => {
    if (!known.has(slug)) {
      throw badField(
        `${field}[${i}]`,
        `must be the slugName of a private location of this account; ${slug} is not`,
        'exists',
      );
    }
  });
}
