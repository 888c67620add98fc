import { randomUUID } from 'node:crypto';
import type { CheckType } from '../../../protocol/index.js';
import {
  assertCheckReferences,
  assertRuntimeFits,
  type CheckDoc,
  CheckQueries,
  newCheckDoc,
  runLocationsOf,
} from '../../checks/index.js';
import type { ServiceContext } from '../../context.js';
import { badField } from '../../platform/http/errors.js';
import type { CheckSession } from '../../platform/http/responses.js';
import { writeDoc } from '../../platform/store/schema.js';
import { CHECK_SECRETS, keepMaskedSecrets } from '../../platform/store/secret-fields.js';
import { defaultRunLocation, servedLocations } from '../../resources/index.js';
import { JobBuilder } from '../queue/jobs.js';
import { insertQueuedJob } from '../queue/payload.js';
import { JobQueries } from '../queue/store.js';
import { SessionQueries } from '../sessions/store.js';
import { TestRunQueries } from './store.js';

/** The trigger source of a test run: the hosted API's name for a run whose result is not recorded. */
export const TEST_RUN_SOURCE = 'TEST_NO_RECORD';

/** What a test run needs besides its body: the account, and the stored check whose masked secrets it may keep. */
export type TestRunRequest = {
  accountId: string;
  checkType: CheckType;
  /** A body as `POST /v1/checks/{type}` takes it, validated by the type's create schema. */
  body: Record<string, unknown>;
  /**
   * A stored check of the account whose form the body comes from: a secret sent back as `*****` (as the API
   * masks it) runs with that check's value, as `PUT /v1/checks/{id}` keeps it. Undefined: none.
   */
  fromCheckId?: string | undefined;
  /** Names of the runtimes whose runtime.json says `multiStepSupport: true` (checks/routes.ts reads them too). */
  multiStepRuntimes: ReadonlySet<string>;
};

/**
 * Starts a test run ("Run before saving", docs/api.md, "Check sessions"): the body becomes a check document as
 * `POST /v1/checks/{type}` makes it (references, cross-field rules, the runtime, `local` when it names no
 * location), but no check is stored. It runs once, in the first of its locations a connected agent serves
 * (servedLocations), with trigger source TEST_NO_RECORD and no retries, as the job of a check session whose
 * `checkId` is the test run's own id (a `test_runs` row, never a `checks` row). Variables, the group's
 * defaults and scripts, snippets and client certificates resolve as for a scheduled run (JobBuilder).
 *
 * Nothing else sees it: its result is stored for the session only (no alert, check status, analytics row of a
 * check, error group or other result hook; runs/results/ingest.ts), and retention deletes the run, its session,
 * result and artifact files an hour later (retention.ts). The body's secrets are never stored in clear: the
 * job's payload is sealed like every job's, and no answer or log holds the body.
 * @returns the session as `GET /v1/check-sessions/{id}` answers it (PROGRESS).
 * @throws HttpError 400 naming the field (as the create route: schema rules, references, runtime); 400 naming
 *   `locations` when no connected agent serves any of the check's locations; 404 when `fromCheckId` is not a
 *   check of the account.
 */
export async function startTestRun(ctx: ServiceContext, run: TestRunRequest): Promise<CheckSession> {
  const { accountId, checkType, multiStepRuntimes } = run;
  const now = new Date();
  const nowMs = now.getTime();
  let body = run.body;
  if (run.fromCheckId !== undefined) {
    const stored = await new CheckQueries(ctx.db).get(accountId, run.fromCheckId);
    body = keepMaskedSecrets(body, stored, CHECK_SECRETS);
  }
  await assertCheckReferences(ctx.db, accountId, body);
  const placed =
    ((body.locations as unknown[] | undefined)?.length ?? 0) +
      ((body.privateLocations as unknown[] | undefined)?.length ?? 0) >
    0;
  // A test run alerts nobody: the body's subscriptions are checked above and then left out.
  const doc: CheckDoc = newCheckDoc(
    checkType,
    {
      ...(placed ? {} : await defaultRunLocation(ctx.db, accountId)),
      ...body,
      alertChannelSubscriptions: [],
    },
    now,
  );
  await assertRuntimeFits(ctx.db, accountId, doc, multiStepRuntimes);
  const served = await servedLocations(ctx.db, accountId, nowMs);
  const locations = runLocationsOf(doc);
  const location = locations.find((l) => served.has(l));
  if (location === undefined) {
    throw badField(
      'locations',
      `has no location a connected agent serves (${locations.join(', ')}): start an agent there, or choose a location one serves`,
      'served',
    );
  }
  const sessionId = randomUUID();
  const jobId = randomUUID();
  await ctx.db.transaction().execute(async (tx) => {
    await new TestRunQueries(tx).insert({
      id: doc.id,
      account_id: accountId,
      check_session_id: sessionId,
      check_type: checkType,
      created_at: nowMs,
    });
    await new SessionQueries(tx).insert({
      id: sessionId,
      account_id: accountId,
      check_id: doc.id,
      check_type: checkType,
      name: doc.name,
      trigger_source: TEST_RUN_SOURCE,
      status: 'PROGRESS',
      run_locations: writeDoc([location]),
      started_at: nowMs,
      stopped_at: null,
    });
    const built = await new JobBuilder(tx, accountId).build(
      { check: doc, location, runSource: TEST_RUN_SOURCE, checkSessionId: sessionId },
      { jobId, nowMs, leaseMs: ctx.queue.leaseMs },
    );
    // A test run is run once: no retry strategy (the check's, its group's or doubleCheck's) applies.
    await insertQueuedJob(new JobQueries(tx), {
      job: { ...built, retryStrategy: null },
      checkType,
      readyAtMs: nowMs,
      queueExpiryMs: ctx.queue.queueExpiryMs,
      roundId: jobId,
    });
  });
  ctx.queue.notify(accountId);
  ctx.log.info({ accountId, checkType, checkSessionId: sessionId, location }, 'test run started');
  return ctx.sessions.get(accountId, sessionId);
}
