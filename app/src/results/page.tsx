import { getResult } from '../api/check-results.js';
import { fetchSession } from '../api/session.js';
import { ErrorNotice, Loading, PageHeader } from '../ui/page.js';
import { ResultView, checkTypeText } from './view.js';
import { RunStatusBadge } from '../ui/status.js';
import { formatDateTime } from '../ui/format.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import type { CheckResultResponse } from '../api/schemas.js';
import { Breadcrumbs } from './text.js';
import { RunsAround } from './neighbours.js';
import './results.css';

/** The result and, for a run of a check session, the path of that session's page. */
type Loaded = { result: CheckResultResponse; sessionPath: string | null };

/**
 * Reads one result, and when it belongs to a check session the signed-in account's id, which the
 * session page's address holds. The result names its check (`name`, `checkType`), so the check itself
 * is not read.
 * @throws ApiError 404 when the check or the result is not in the account.
 */
async function loadResult(checkId: string, resultId: string, signal: AbortSignal): Promise<Loaded> {
  const result = await getResult(checkId, resultId, signal);
  let sessionPath: string | null = null;
  if (result.checkSessionId) {
    // A link is a nicety: without the account (a failed request), the page shows the result alone.
    const session = await fetchSession().catch(() => null);
    if (session) {
      sessionPath = `/accounts/${encodeURIComponent(session.accountId)}/checks/${encodeURIComponent(
        checkId,
      )}/check-sessions/${encodeURIComponent(result.checkSessionId)}`;
    }
  }
  return { result, sessionPath };
}

/**
 * The result page (`/checks/:checkId/results/:resultId`), where alert notifications link: the result's
 * status, times and location, its error, assertions, the check type's part, logs and artifacts.
 */
export default function ResultDetail({
  checkId = '',
  resultId = '',
}: {
  checkId?: string;
  resultId?: string;
}) {
  const { data, error, loading } = useLoad(
    (signal) => loadResult(checkId, resultId, signal),
    [checkId, resultId],
  );
  // After moving to another result, the previous one stays in `data` until the new one arrives: not shown.
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  const shown =
    data && same(data.result.id, resultId) && same(data.result.checkId, checkId) ? data : undefined;
  const result = shown?.result;
  useTitle(result ? `Result of ${result.name}` : 'Result');

  if (!shown) {
    return (
      <section class="result-page">
        <Crumbs checkId={error ? null : checkId} checkName={null} />
        <PageHeader title="Result" />
        {error ? <ErrorNotice error={error} title="The result could not be loaded" /> : null}
        {loading || !error ? <Loading what="Loading the result" /> : null}
      </section>
    );
  }
  const r = shown.result;
  return (
    <section class="result-page">
      <Crumbs checkId={checkId} checkName={r.name} />
      <PageHeader
        title={
          <>
            <span class="rv-title-name">{r.name}</span>
            <span class="visually-hidden">: </span>
            <span class="rv-title-badge">
              <RunStatusBadge status={r.status} />
            </span>
          </>
        }
      >
        <a class="button button-secondary" href={`/checks/${encodeURIComponent(checkId)}`}>
          View check
        </a>
        {shown.sessionPath ? (
          <a class="button button-secondary" href={shown.sessionPath}>
            View check session
          </a>
        ) : null}
      </PageHeader>
      <p class="rv-subtitle muted">
        Run at <time dateTime={r.startedAt}>{formatDateTime(r.startedAt)}</time> from{' '}
        <span class="rv-mono">{r.runLocation}</span> · {checkTypeText(r.checkType)}
      </p>
      {error ? <ErrorNotice error={error} title="The result could not be refreshed" /> : null}
      <ResultView result={r} checkId={checkId} resultId={r.id} level={2} />
      {/* A heartbeat's results have no response time to chart. */}
      {r.checkType === 'HEARTBEAT' ? null : <RunsAround checkId={checkId} result={r} />}
    </section>
  );
}

/** Checks › check name › Result; without the check when `checkId` is null. */
function Crumbs({ checkId, checkName }: { checkId: string | null; checkName: string | null }) {
  return (
    <Breadcrumbs
      trail={[
        { label: 'Checks', href: '/checks' },
        // A result that could not be read links to no check (it may not exist).
        ...(checkId === null
          ? []
          : [{ label: checkName ?? 'Check', href: `/checks/${encodeURIComponent(checkId)}` }]),
        { label: 'Result' },
      ]}
    />
  );
}
