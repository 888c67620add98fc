import { Type } from '@sinclair/typebox';
import type { CheckDoc, CheckTypeHooks } from '../checks/index.js';
import { HttpError, notFound } from '../platform/http/errors.js';
import { IdParams, ResourceId, strict } from '../platform/http/schema-helpers.js';
import { decideRepair, deciderOf, repairView } from './repairs.js';
import { RepairSchema } from './schemas.js';
import { AgenticQueries } from './store.js';

/** The stored script of a check document: null when none (an empty one counts as none). */
function scriptOf(doc: CheckDoc): string | null {
  return typeof doc.script === 'string' && doc.script !== '' ? doc.script : null;
}

/** The version of a check document's script: 0 without one. */
function versionOf(doc: CheckDoc): number {
  return scriptOf(doc) === null ? 0 : Number(doc.scriptVersion ?? 1);
}

/** Query of `GET /v1/checks/{id}/agentic-repairs`: `limit` 1–100 (default 100), newest first. */
const RepairListQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100 })) },
  strict,
);

/** Path of the apply and reject routes: the check and the repair. */
const RepairParams = Type.Object({ id: ResourceId, repairId: ResourceId }, strict);

/**
 * The AGENTIC check type's lifecycle (docs/checks.md, "Agentic"; docs/api.md, "Agentic checks"), wired into
 * its registry entry:
 * - an update that changes `script` is a person's edit: the version counts up (back to 0 when the script is
 *   cleared, so the next run writes one); the update is refused (409 OUTPOST_ERR_SCRIPT_MOVED) when a run
 *   or a repair changed the script since the update read the check, so an edit never silently undoes one;
 *   PENDING repairs over another version become STALE;
 * - the check's repairs are deleted with it (the account's usage figures keep its runs);
 * - `GET /v1/checks/{id}/agentic-repairs`, `POST …/agentic-repairs/{repairId}/apply` and `…/reject`.
 */
export const AGENTIC_CHECK_HOOKS: CheckTypeHooks = {
  onUpdate(_ctx, accountId, before, check) {
    const beforeScript = scriptOf(before);
    const beforeVersion = versionOf(before);
    const script = scriptOf(check);
    const edited = script !== beforeScript;
    check.script = script;
    check.scriptVersion = !edited ? beforeVersion : script === null ? 0 : beforeVersion + 1;
    return {
      async guard(tx) {
        const state = await new AgenticQueries(tx).lockScript(accountId, before.id);
        if (state && (state.scriptVersion !== beforeVersion || state.script !== beforeScript)) {
          throw new HttpError(
            'OUTPOST_ERR_SCRIPT_MOVED',
            `check ${before.id}: its script changed to version ${state.scriptVersion} while this update was made; read the check and update it again`,
            { id: before.id, scriptVersion: state.scriptVersion },
          );
        }
      },
      async write(tx) {
        if (edited) {
          await new AgenticQueries(tx).staleOthers(
            accountId,
            before.id,
            check.scriptVersion as number,
            Date.now(),
          );
        }
      },
      afterCommit() {},
    };
  },

  onDelete: (tx, accountId, checkId) => new AgenticQueries(tx).deleteRepairs(accountId, checkId),

  async routes(app, ctx, checks) {
    const agenticCheck = async (accountId: string, id: string) => {
      const doc = await checks(accountId, id);
      if (doc.checkType !== 'AGENTIC') throw notFound('AGENTIC check', id);
      return doc;
    };
    app.get(
      '/v1/checks/:id/agentic-repairs',
      {
        config: { permission: 'read' },
        schema: {
          tags: ['checks'],
          summary: "An AGENTIC check's script changes (generated, repaired), newest first",
          params: IdParams,
          querystring: RepairListQuery,
          response: { 200: Type.Array(RepairSchema) },
        },
      },
      async (request) => {
        const doc = await agenticCheck(request.accountId, request.params.id);
        const rows = await new AgenticQueries(ctx.db).listRepairs(
          request.accountId,
          doc.id,
          request.query.limit ?? 100,
        );
        return rows.map(repairView);
      },
    );
    for (const decision of ['apply', 'reject'] as const) {
      app.post(
        `/v1/checks/:id/agentic-repairs/:repairId/${decision}`,
        {
          config: { permission: 'write' },
          schema: {
            tags: ['checks'],
            summary:
              decision === 'apply'
                ? "Apply a PENDING repair: its script becomes the check's next version"
                : 'Reject a PENDING repair',
            params: RepairParams,
            response: { 200: RepairSchema },
          },
        },
        async (request) => {
          const doc = await agenticCheck(request.accountId, request.params.id);
          return decideRepair(ctx.db, {
            accountId: request.accountId,
            checkId: doc.id,
            repairId: request.params.repairId,
            decision,
            by: deciderOf(request.principal),
            nowMs: Date.now(),
          });
        },
      );
    }
  },
};
