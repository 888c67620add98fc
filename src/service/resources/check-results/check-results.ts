import { createHash } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { CheckResult, CheckType, HttpCheckResult } from '../../../protocol/index.js';
import { parseInstant } from '../../analytics/index.js';
import { badField, notFound } from '../../platform/http/errors.js';
import { offsetOf } from '../../platform/http/pagination.js';
import type { CheckResultResponseSchema, RESULT_TYPE_FILTERS } from './schema.js';
import type { Database } from '../../platform/store/database.js';
import { readDoc } from '../../platform/store/schema.js';
import { ResultQueries, type ResultRow } from './store.js';
import { CheckQueries } from '../../checks/index.js';

/** Query of a check's results list, as validated by `CheckResultsQuery` (defaults applied). */
export type CheckResultsQuery = {
  from?: string;
  to?: string;
  limit: number;
  page: number;
  resultType: (typeof RESULT_TYPE_FILTERS)[number];
  hasFailures?: boolean;
  location?: string;
};

/** A result as `GET /v1/check-results/…` answers it (`CheckResultResponseSchema`). */
export type CheckResultView = Static<typeof CheckResultResponseSchema>;

/**
 * A stored result as the view reads it. Partial: results stored by older agents may lack fields
 * the protocol has since added. The result schema lets an agent post fields it does not declare,
 * which are stored with the result; the view answers these: the run's ids, and the parts of
 * check types the protocol has none for, as posted.
 */
type StoredResult = Partial<CheckResult> & {
  agent?: unknown;
  checkRunId?: unknown;
  sequenceId?: unknown;
  browserCheckResult?: Record<string, unknown> | null;
  multiStepCheckResult?: Record<string, unknown> | null;
};

/** The agent a stored result records (ingest.ts), or null when it records none in that shape. */
function agentOf(stored: unknown): CheckResultView['agent'] {
  if (typeof stored !== 'object' || stored === null) return null;
  const { id, version, hostName } = stored as Record<string, unknown>;
  if (typeof id !== 'string' || typeof version !== 'string') return null;
  return { id, version, hostName: typeof hostName === 'string' ? hostName : null };
}

/** Path of the artifact download route for one artifact of a result. */
export function artifactDownloadPath(checkId: string, resultId: string, name: string): string {
  return `/v1/check-results/${encodeURIComponent(checkId)}/${encodeURIComponent(resultId)}/artifacts/${encodeURIComponent(name)}`;
}

/** A copy of an HTTP request or response without its `body`. */
function withoutBody<T extends { body?: unknown }>(message: T): Omit<T, 'body'> {
  const { body: _body, ...rest } = message;
  return rest;
}

/**
 * A copy of an HTTP part without its request and response bodies (list items stay small). A
 * stored part missing its request (a document the schema of its day did not check) is listed as
 * it is rather than failing the whole page.
 */
function withoutBodies(part: HttpCheckResult): HttpCheckResult {
  return {
    ...part,
    request: part.request && withoutBody(part.request),
    response: part.response && withoutBody(part.response),
  };
}

/**
 * The number a run is answered as in `checkRunId` (the hosted API's field is a number): the first 52 bits of
 * the SHA-256 of the run's id, so every location and attempt of one run has the same one. `sequenceId` holds
 * the run's id itself.
 */
export function checkRunNumber(runId: string): number {
  return Number.parseInt(createHash('sha256').update(runId).digest('hex').slice(0, 13), 16);
}

/**
 * The API view of a stored result row. `full` false (list items) leaves out `logs` and HTTP
 * bodies. Artifacts carry their download path; once artifact retention deleted a result's files
 * (`has_artifacts` 0) none are listed. `sequenceId` is the run's id (its first job id when the stored
 * result names it, else the result's own job id); `checkRunId` the number of it (checkRunNumber).
 */
export function presentCheckResult(
  row: ResultRow,
  check: { name: string; checkType: CheckType },
  full: boolean,
): CheckResultView {
  const doc: StoredResult = readDoc(row.doc);
  const filesKept = row.has_artifacts !== 0;
  const artifacts = filesKept && Array.isArray(doc.artifacts) ? doc.artifacts : [];
  const stored = doc.httpCheckResult ?? null;
  const http = stored && !full ? withoutBodies(stored) : stored;
  const runId = typeof doc.checkRunId === 'string' ? doc.checkRunId : row.job_id;
  return {
    id: row.id,
    checkId: row.check_id,
    checkType: check.checkType,
    name: check.name,
    status: row.status,
    hasFailures: row.has_failures === 1,
    hasErrors: row.has_errors === 1,
    isDegraded: row.is_degraded === 1,
    overMaxResponseTime: doc.overMaxResponseTime === true,
    runLocation: row.run_location,
    startedAt: new Date(Number(row.started_at)).toISOString(),
    stoppedAt: new Date(Number(row.stopped_at)).toISOString(),
    created_at: new Date(Number(row.created_at)).toISOString(),
    responseTime: row.response_time,
    attempts: Number(row.attempts ?? doc.attempts ?? 1),
    resultType: row.result_type,
    checkRunId: checkRunNumber(runId),
    sequenceId: typeof doc.sequenceId === 'string' ? doc.sequenceId : runId,
    checkSessionId: row.check_session_id,
    agent: agentOf(doc.agent),
    errorMessage: doc.errorMessage ?? null,
    assertions: Array.isArray(doc.assertions) ? doc.assertions : [],
    artifacts: artifacts.map((a) => ({
      name: a.name,
      sizeBytes: a.sizeBytes,
      downloadPath: artifactDownloadPath(row.check_id, row.id, a.name),
    })),
    ...(full ? { logs: Array.isArray(doc.logs) ? doc.logs : [] } : {}),
    ...(doc.truncated ? { truncated: doc.truncated } : {}),
    icmpCheckResult: doc.icmpCheckResult ?? null,
    dnsCheckResult: doc.dnsCheckResult ?? null,
    tcpCheckResult: doc.tcpCheckResult ?? null,
    grpcCheckResult: doc.grpcCheckResult ?? null,
    sslCheckResult: doc.sslCheckResult ?? null,
    tracerouteCheckResult: doc.tracerouteCheckResult ?? null,
    agenticCheckResult: doc.agenticCheckResult ?? null,
    httpCheckResult: http,
    // The field's name for an API check's HTTP exchange.
    apiCheckResult: check.checkType === 'API' ? http : null,
    // Agents post the browser part of browser, multi-step and suite runs as browserCheckResult.
    browserCheckResult:
      check.checkType === 'BROWSER' || check.checkType === 'PLAYWRIGHT' || check.checkType === 'AGENTIC'
        ? (doc.browserCheckResult ?? null)
        : null,
    multiStepCheckResult:
      check.checkType === 'MULTI_STEP' ? (doc.multiStepCheckResult ?? doc.browserCheckResult ?? null) : null,
  };
}

/**
 * Reads the results of checks (scheduled and triggered runs alike) of one account. Every query
 * is scoped by account first: another account's check is a 404, never an empty list.
 */
export class CheckResults {
  readonly #rows: ResultQueries;
  readonly #checks: CheckQueries;
  constructor(db: Kysely<Database>) {
    this.#rows = new ResultQueries(db);
    this.#checks = new CheckQueries(db);
  }

  /** @throws HttpError 404 when the check is not in the account. */
  async #checkOf(accountId: string, checkId: string): Promise<{ name: string; checkType: CheckType }> {
    const check = await this.#checks.summary(accountId, checkId);
    if (!check) throw notFound('check', checkId);
    return check;
  }

  /**
   * One page of a check's results, newest first (`startedAt` descending, then id), filtered by
   * the query. Served by the index on (check_id, started_at).
   * @throws HttpError 404 for a check not in the account; 400 naming `from` or `to` when one is
   *   not a unix timestamp or ISO 8601 date, or `from` is not before `to`.
   */
  async list(accountId: string, checkId: string, query: CheckResultsQuery): Promise<CheckResultView[]> {
    const fromMs = query.from === undefined ? undefined : parseInstant(query.from, 'from');
    const toMs = query.to === undefined ? undefined : parseInstant(query.to, 'to');
    if (fromMs !== undefined && toMs !== undefined && fromMs >= toMs) {
      throw badField('from', 'must be before to', 'range', 'querystring');
    }
    const check = await this.#checkOf(accountId, checkId);
    const rows = await this.#rows.list(
      accountId,
      checkId,
      {
        fromMs,
        toMs,
        resultType: query.resultType === 'ALL' ? undefined : query.resultType,
        hasFailures: query.hasFailures,
        location: query.location,
      },
      { limit: query.limit, offset: offsetOf(query) },
    );
    return rows.map((row) => presentCheckResult(row, check, false));
  }

  /** One result of a check, with its logs and HTTP bodies. @throws HttpError 404 when not in the account. */
  async get(accountId: string, checkId: string, resultId: string): Promise<CheckResultView> {
    const check = await this.#checkOf(accountId, checkId);
    const row = await this.#rows.get(accountId, checkId, resultId);
    if (!row) throw notFound('check result', resultId);
    return presentCheckResult(row, check, true);
  }
}
