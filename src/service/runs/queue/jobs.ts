import type { Kysely } from 'kysely';
import {
  type Job,
  type JobClientCertificate,
  type JobScript,
  type JobVariable,
  jobClassOf,
  type TriggerSource,
} from '../../../protocol/index.js';
import { interpolate } from '../../../common/interpolate.js';
import { type CheckDoc, openCheckSecrets } from '../../checks/index.js';
import { checkTypeEntry, jobTimeoutMs } from '../../checks/index.js';
import { type GroupDoc, openGroupSecrets } from '../../resources/index.js';
import { GroupQueries } from '../../resources/index.js';
import { SnippetQueries } from '../../resources/index.js';
import { readDoc } from '../../platform/store/schema.js';
import { clientCertificateForHost } from '../../resources/index.js';
import { resolveRetryStrategy } from '../results/retries.js';
import { DEFAULT_RUNTIME_ID } from '../../resources/index.js';
import type { Database } from '../../platform/store/database.js';
import { accountVariables } from '../../resources/index.js';

/** One run to enqueue: a check, where, why, and the check session it belongs to (null: scheduled). */
export type RunRequest = {
  check: CheckDoc;
  location: string;
  runSource: TriggerSource;
  checkSessionId: string | null;
};

type Variable = { key: string; value: string; secret?: boolean | undefined };

/**
 * Merges variable lists, the first list winning on a repeated key (check > group > account,
 * docs/protocol.md). Keys compare exactly (environment variables are case-sensitive); each keeps
 * its own `secret` flag. Order: the winning lists' order, first list first.
 */
export function mergeVariables(...lists: readonly (readonly Variable[] | null | undefined)[]): JobVariable[] {
  const merged = new Map<string, JobVariable>();
  for (const list of lists) {
    for (const v of list ?? []) {
      if (!merged.has(v.key)) merged.set(v.key, { key: v.key, value: v.value, secret: v.secret === true });
    }
  }
  return [...merged.values()];
}

/** Host name of `url` once `{{VAR}}`s are filled from `variables`; null when it is no URL. */
export function hostOfUrl(url: unknown, variables: readonly JobVariable[]): string | null {
  if (typeof url !== 'string') return null;
  const filled = interpolate(url, new Map(variables.map((v) => [v.key, v.value])));
  if (!URL.canParse(filled)) return null;
  const host = new URL(filled).hostname;
  return host === '' ? null : host;
}

type ScriptOwner = {
  localSetupScript?: string | null;
  localTearDownScript?: string | null;
  setupSnippetId?: number | null;
  tearDownSnippetId?: number | null;
};

/**
 * Builds the jobs of runs (see {@link JobBuilder.build}), reading the store and memoising what several
 * runs of one batch share (the account's variables, groups, snippets). Build one per enqueue batch,
 * inside its transaction.
 */
export class JobBuilder {
  readonly #db: Kysely<Database>;
  readonly #accountId: string;
  #accountVariables: Promise<JobVariable[]> | undefined;
  readonly #groups = new Map<number, Promise<GroupDoc | null>>();
  readonly #snippets = new Map<number, Promise<{ name: string; script: string } | null>>();

  constructor(db: Kysely<Database>, accountId: string) {
    this.#db = db;
    this.#accountId = accountId;
  }

  /**
   * The job an agent receives for one run (docs/protocol.md: everything the executor needs,
   * resolved by the service), attempt 1:
   * - `environmentVariables`: check > group > account, each with its `secret` flag; an API check
   *   in a group with a base url also gets `GROUP_BASE_URL` (below the group's own variables); an AGENTIC
   *   check only those its prompt names (the recipe's `variables`);
   * - `check.runtimeId`: the check's, else its group's; for main-class types (API, browser, …)
   *   else the default runtime {@link DEFAULT_RUNTIME_ID}; uptime types keep null;
   * - `timeoutMs`: the check's `timeoutSeconds` where its type has one, else the type's limit (jobTimeoutMs);
   * - the rest by the job recipe of the check's type (check-types.ts): API checks
   *   get the request with the group's `apiCheckDefaults` applied, `setupScript`/`tearDownScript`,
   *   `clientCertificate` for the request's host, `retryStrategy` (see resolveRetryStrategy),
   *   `checkRunId` = `jobId`, `runStartedAt` = `nowMs`; other checks the request as stored, and
   *   `retryStrategy`, `checkRunId` and `runStartedAt` only under a retry strategy set on the check
   *   or its group (not from doubleCheck).
   * @param ids.leaseMs lease written into the payload (the claim sets it again).
   */
  async build(run: RunRequest, ids: { jobId: string; nowMs: number; leaseMs: number }): Promise<Job> {
    // Secrets are sealed at rest; the agent gets them in clear (it scrubs them from what it reports).
    const c = openCheckSecrets(this.#db, run.check);
    const { job: recipe } = checkTypeEntry(c.checkType);
    const group = await this.#group(c.groupId);
    const merged = mergeVariables(
      c.environmentVariables,
      group?.environmentVariables,
      recipe.groupVariables(group),
      await this.#account(),
    );
    const environmentVariables = recipe.variables ? recipe.variables(c, merged) : merged;
    const request = recipe.request(c, group);
    const ownRuntime = c.runtimeId ?? group?.runtimeId ?? null;
    const job: Job = {
      jobId: ids.jobId,
      accountId: this.#accountId,
      check: {
        id: c.id,
        name: c.name,
        checkType: c.checkType,
        request,
        shouldFail: Boolean(c.shouldFail),
        degradedResponseTime: (c.degradedResponseTime as number | null | undefined) ?? null,
        maxResponseTime: (c.maxResponseTime as number | null | undefined) ?? null,
        degradedPacketLossThreshold: (c.degradedPacketLossThreshold as number | null | undefined) ?? null,
        maxPacketLossThreshold: (c.maxPacketLossThreshold as number | null | undefined) ?? null,
        runtimeId: ownRuntime ?? (jobClassOf(c.checkType) === 'main' ? DEFAULT_RUNTIME_ID : null),
      },
      environmentVariables,
      runLocation: run.location,
      runSource: run.runSource,
      checkSessionId: run.checkSessionId,
      attempt: 1,
      timeoutMs: jobTimeoutMs(c),
      leaseMs: ids.leaseMs,
    };
    const retryStrategy = resolveRetryStrategy(c, group, { honourDoubleCheck: recipe.retriesOnDoubleCheck });
    const retryRun =
      retryStrategy === null && !recipe.retriesOnDoubleCheck
        ? {}
        : { retryStrategy, checkRunId: ids.jobId, runStartedAt: new Date(ids.nowMs).toISOString() };
    if (!recipe.scriptsAndCertificate) return { ...job, ...retryRun };
    const owners: ScriptOwner[] = [c as ScriptOwner, ...(group ? [group as ScriptOwner] : [])];
    return {
      ...job,
      setupScript: await this.#script(owners, 'setup'),
      tearDownScript: await this.#script(owners, 'teardown'),
      clientCertificate: await this.#certificate(hostOfUrl(request.url, environmentVariables)),
      ...retryRun,
    };
  }

  /**
   * The setup or teardown script: the check's inline script, else its snippet, else the
   * group's inline script, else the group's snippet; null when none (blank inline scripts count as none).
   */
  async #script(owners: readonly ScriptOwner[], phase: 'setup' | 'teardown'): Promise<JobScript | null> {
    for (const owner of owners) {
      const local = phase === 'setup' ? owner.localSetupScript : owner.localTearDownScript;
      if (typeof local === 'string' && local.trim() !== '') {
        return {
          source: 'LOCAL',
          snippetId: null,
          name: `${phase === 'setup' ? 'setup' : 'teardown'} script`,
          code: local,
        };
      }
      const snippetId = phase === 'setup' ? owner.setupSnippetId : owner.tearDownSnippetId;
      if (snippetId != null) {
        // A snippet in use cannot be deleted (409), so it is there; if not, the next owner's applies.
        const snippet = await this.#snippet(snippetId);
        if (snippet) {
          return {
            source: 'SNIPPET',
            snippetId,
            name: `snippet "${snippet.name}" (${snippetId})`,
            code: snippet.script,
          };
        }
      }
    }
    return null;
  }

  async #certificate(host: string | null): Promise<JobClientCertificate | null> {
    if (host === null) return null;
    const found = await clientCertificateForHost(this.#db, this.#accountId, host);
    if (!found) return null;
    return { host: found.host, cert: found.cert, key: found.key, ca: found.ca, passphrase: found.passphrase };
  }

  #account(): Promise<JobVariable[]> {
    this.#accountVariables ??= accountVariables(this.#db, this.#accountId);
    return this.#accountVariables;
  }

  #group(id: number | null | undefined): Promise<GroupDoc | null> {
    if (id == null) return Promise.resolve(null);
    let group = this.#groups.get(id);
    if (!group) {
      group = new GroupQueries(this.#db)
        .get(this.#accountId, id)
        .then((row) => (row ? openGroupSecrets(this.#db, id, readDoc(row.doc)) : null));
      this.#groups.set(id, group);
    }
    return group;
  }

  #snippet(id: number): Promise<{ name: string; script: string } | null> {
    let snippet = this.#snippets.get(id);
    if (!snippet) {
      snippet = new SnippetQueries(this.#db)
        .get(this.#accountId, id)
        .then((row) => (row ? { name: row.name, script: readDoc(row.doc).script } : null));
      this.#snippets.set(id, snippet);
    }
    return snippet;
  }
}

/**
 * The job of the next attempt of a run (pure): the same payload under a new `jobId`, at
 * `attempt + 1` in `location`, keeping `checkRunId` (the first attempt's job id) and `runStartedAt`.
 */
export function nextAttemptJob(previous: Job, jobId: string, location: string): Job {
  return {
    ...previous,
    jobId,
    attempt: previous.attempt + 1,
    runLocation: location,
    checkRunId: previous.checkRunId ?? previous.jobId,
    ...(previous.runStartedAt === undefined ? {} : { runStartedAt: previous.runStartedAt }),
  };
}
