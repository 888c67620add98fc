import type { ServiceContext } from '../context.js';
import type { CredentialView } from '../platform/store/secret-fields.js';
import {
  alertChannelsView,
  type CheckDoc,
  presentCheck,
  readAlertChannelViews,
  runLocationsOf,
} from './checks.js';
import { servedLocations, unservedOf } from '../resources/index.js';
import type { CheckResponse } from './responses.js';
import { CheckQueries } from './store.js';
import type { CheckTypeWrite } from './types/hooks.js';
import { checkTypeEntry } from './types/registry.js';

/**
 * Writes a check's own row (`store`) and what its type writes beside it in one transaction (the type's guard
 * first, when it has one), then runs the
 * type's after-commit step; a type that writes nothing beside it has its row written alone, as one
 * statement.
 */
async function storeWithType(
  ctx: ServiceContext,
  typeWrite: CheckTypeWrite | undefined,
  store: (checks: CheckQueries) => Promise<void>,
): Promise<void> {
  if (!typeWrite) {
    await store(new CheckQueries(ctx.db));
    return;
  }
  await ctx.db.transaction().execute(async (tx) => {
    await typeWrite.guard?.(tx);
    await store(new CheckQueries(tx));
    await typeWrite.write(tx);
  });
  typeWrite.afterCommit();
}

/**
 * Stores a new, validated check: its type's `onCreate` completes `doc` in place first (CheckTypeHooks), then
 * the check's row and the type's rows commit in one transaction.
 * @param nowMs the creation time, epoch ms (the row's `created_at` and first run).
 * @throws HttpError 400 naming the field when the type's onCreate refuses the check (nothing stored).
 */
export async function createCheck(
  ctx: ServiceContext,
  accountId: string,
  doc: CheckDoc,
  nowMs: number,
): Promise<void> {
  const typeWrite = checkTypeEntry(doc.checkType).onCreate?.(ctx, accountId, doc);
  await storeWithType(ctx, typeWrite, (checks) => checks.insert(accountId, doc, nowMs));
}

/**
 * Stores a merged, validated update of a check: its type's `onUpdate` completes `doc` in place first, then
 * the check's row and the type's rows commit in one transaction.
 * @param before the stored check (secrets in clear), as CheckQueries.update takes it.
 * @param nowMs the update time, epoch ms.
 * @throws HttpError 400 naming the field when the type's onUpdate refuses the check (nothing stored).
 */
export async function updateCheck(
  ctx: ServiceContext,
  accountId: string,
  before: CheckDoc,
  doc: CheckDoc,
  nowMs: number,
): Promise<void> {
  const typeWrite = checkTypeEntry(doc.checkType).onUpdate?.(ctx, accountId, before, doc);
  await storeWithType(ctx, typeWrite, (checks) => checks.update(accountId, before, doc, nowMs));
}

/**
 * The API view of checks of one account, in order: each masked with its `alertChannels` view
 * (presentCheck), then the fields its type's `view` hook adds (a HEARTBEAT check's `pingUrl` and
 * `heartbeatState`), one `view` call per type present, and its `unservedLocations` (servedLocations, read
 * once). The account's alert channels are read once for all of `docs` (readAlertChannelViews). `view`: how credentials show (docs/security.md, "Credentials in answers"; default masked).
 */
export async function presentChecks(
  ctx: ServiceContext,
  accountId: string,
  docs: readonly CheckDoc[],
  view: CredentialView = 'masked',
): Promise<CheckResponse[]> {
  const added = new Map<CheckDoc, Record<string, unknown>>();
  for (const checkType of new Set(docs.map((d) => d.checkType))) {
    const view = checkTypeEntry(checkType).view;
    if (!view) continue;
    const ofType = docs.filter((d) => d.checkType === checkType);
    const fields = await view(ctx, accountId, ofType);
    for (const [i, doc] of ofType.entries()) added.set(doc, fields[i] ?? {});
  }
  const served = await servedLocations(ctx.db, accountId, Date.now());
  const channels = await readAlertChannelViews(ctx.db, accountId, docs);
  return docs.map((doc) => ({
    ...presentCheck(doc, alertChannelsView(channels, doc.alertChannelSubscriptions), view),
    ...added.get(doc),
    unservedLocations: unservedOf(runLocationsOf(doc), served),
  }));
}
