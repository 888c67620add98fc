import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, fetchSession } from '../api.js';
import { ErrorNotice, Loading, PageHeader } from '../components/page.js';
import { ResultView, checkTypeText, resultTypeText } from '../components/result-view.js';
import { Breadcrumbs, Facts, ScrollRegion } from '../components/result-text.js';
import { RunStatusBadge } from '../components/status.js';
import { formatDateTime, formatMs } from '../format.js';
import { useTitle } from '../hooks.js';
import type { CheckSession, SessionResult } from '../types.js';
import './check-session.css';

/** How long one completion request waits on the service before it answers 408 (still running), seconds. */
export const COMPLETION_WAIT_SECONDS = 10;

/** Trigger sources in words (docs/api.md, "Check session"). */
const TRIGGER_WORDS: Record<string, string> = {
  CLI_DEPLOY: 'CLI deploy',
  DEPLOYMENT: 'Deployment',
  DEPLOYMENT_CACHE_WARMER: 'Deployment cache warmer',
  EDITOR: 'Editor',
  GROUP_RUN_ALL: 'Run of the whole check group',
  LEGACY_TRIGGER: 'Legacy trigger',
  SCHEDULER: 'Scheduler',
  SCHEDULE_NOW: 'Run now',
  TEST_NO_RECORD: 'Test session, not recorded',
  TEST_RECORD: 'Test session, recorded',
  TRIGGER_NO_RECORD: 'Trigger, not recorded',
  TRIGGER_RECORD: 'Trigger, recorded',
  TRIGGER_API: 'Trigger API',
};

/** A session's results by run location: the final result, and the attempts before it (oldest first). */
export type LocationResults = { location: string; final: SessionResult | null; attempts: SessionResult[] };

/**
 * The session's results grouped by run location, in the order of `runLocations` (then any location a
 * result names that the list lacks). A location's final result is its `FINAL` one; `ATTEMPT` results are
 * the retried attempts before it.
 */
export function resultsByLocation(
  session: Pick<CheckSession, 'runLocations' | 'results'>,
): LocationResults[] {
  const locations = [...session.runLocations];
  for (const r of session.results) if (!locations.includes(r.runLocation)) locations.push(r.runLocation);
  return locations.map((location) => {
    const mine = session.results.filter((r) => r.runLocation === location);
    return {
      location,
      final: mine.find((r) => r.resultType === 'FINAL') ?? null,
      attempts: mine.filter((r) => r.resultType === 'ATTEMPT'),
    };
  });
}

/** What the live region says: how many locations reported while running, the outcome once final. */
export function progressText(session: CheckSession): string {
  const groups = resultsByLocation(session);
  const done = groups.filter((g) => g.final !== null).length;
  if (session.status === 'PROGRESS') {
    return `Running: ${done} of ${groups.length} run ${groups.length === 1 ? 'location has' : 'locations have'} reported.`;
  }
  const words: Record<string, string> = {
    PASSED: 'passed',
    FAILED: 'failed',
    DEGRADED: 'is degraded',
    TIMED_OUT: 'timed out: no agent took the job in time',
    CANCELLED: 'was cancelled',
  };
  return `Finished: the check session ${words[session.status] ?? session.status.toLowerCase()}.`;
}

/** An elapsed time in whole seconds and minutes: `42 s`, `3 min 05 s`; sub-second times as formatMs. */
export function formatElapsed(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return formatMs(ms);
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${String(seconds % 60).padStart(2, '0')} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** The session as last read, with when it was read (for the elapsed time of a running session). */
type Seen = { session: CheckSession; readAtMs: number };

/**
 * Reads the session and, while it is PROGRESS, waits for its completion: `…/completion` answers the
 * final session, or 408 after {@link COMPLETION_WAIT_SECONDS} (still running: the session is read again
 * for the results that arrived, and the wait starts over). Another failure is shown and retried after a
 * growing pause (2 s up to 30 s). Everything stops when the page unmounts or the id changes.
 */
function useSession(sessionId: string): { seen: Seen | null; error: Error | null; waitError: Error | null } {
  const [seen, setSeen] = useState<Seen | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [waitError, setWaitError] = useState<Error | null>(null);

  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    const path = `/v1/check-sessions/${encodeURIComponent(sessionId)}`;
    const show = (session: CheckSession) => {
      if (!signal.aborted) setSeen({ session, readAtMs: Date.now() });
    };
    setSeen(null);
    setError(null);
    setWaitError(null);

    (async () => {
      let current: CheckSession;
      try {
        current = await api.get<CheckSession>(path, undefined, signal);
      } catch (err) {
        if (!signal.aborted) setError(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      show(current);
      let failures = 0;
      while (current.status === 'PROGRESS' && !signal.aborted) {
        try {
          current = await api.get<CheckSession>(
            `${path}/completion`,
            { maxWaitSeconds: COMPLETION_WAIT_SECONDS },
            signal,
          );
          show(current);
          failures = 0;
          setWaitError(null);
        } catch (err) {
          if (signal.aborted) return;
          if (err instanceof ApiError && err.status === 408) {
            // Still running: show the results that arrived meanwhile, then wait again.
            failures = 0;
            setWaitError(null);
            current = await api.get<CheckSession>(path, undefined, signal).catch(() => current);
            show(current);
            continue;
          }
          if (err instanceof ApiError && err.status === 404) {
            // Deleted meanwhile (its check was deleted): nothing left to wait for.
            setError(err);
            return;
          }
          failures++;
          setWaitError(err instanceof Error ? err : new Error(String(err)));
          await pause(Math.min(30_000, 1000 * 2 ** failures), signal);
        }
      }
    })();
    return () => controller.abort();
  }, [sessionId]);

  return { seen, error, waitError };
}

/**
 * When the session answered 404 and the address names an account other than the signed-in one (a link
 * made for another account), the signed-in account's name; else null. Only the address is compared: the
 * API never says whether another account holds the session.
 */
function useOtherAccount(accountId: string, error: Error | null): string | null {
  const [other, setOther] = useState<string | null>(null);
  const notFound = error instanceof ApiError && error.status === 404;
  useEffect(() => {
    setOther(null);
    if (!notFound || !accountId) return;
    let live = true;
    fetchSession().then(
      (s) => {
        if (live && s && s.accountId !== accountId) setOther(s.accountName);
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [notFound, accountId]);
  return other;
}

/** The elapsed time of a running session, ticking every second; the service's figure once final. */
function useElapsed(seen: Seen | null): number | null {
  const [now, setNow] = useState(() => Date.now());
  const running = seen?.session.status === 'PROGRESS';
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [running]);
  if (!seen) return null;
  return running ? seen.session.timeElapsed + Math.max(0, now - seen.readAtMs) : seen.session.timeElapsed;
}

/**
 * The check session page (`/accounts/:accountId/checks/:checkId/check-sessions/:sessionId`, where
 * every `checkSessionLink` leads): live progress while the session runs, then its status, trigger,
 * times, run locations and each location's result. A session of another account, or an unknown id, is
 * a 404 from the API and shows as not found.
 */
export default function CheckSessionPage({
  accountId = '',
  checkId = '',
  sessionId = '',
}: {
  accountId?: string;
  checkId?: string;
  sessionId?: string;
}) {
  const { seen, error, waitError } = useSession(sessionId);
  const otherAccount = useOtherAccount(accountId, error);
  const elapsed = useElapsed(seen);
  const session = seen?.session;
  useTitle(session ? `Check session of ${session.name}` : 'Check session');
  const checkPath = `/checks/${encodeURIComponent(session?.checkId ?? checkId)}`;

  const crumbs = (
    <Breadcrumbs
      trail={[
        { label: 'Checks', href: '/checks' },
        // The check is named once the session is read; a session not found links to no check.
        ...(session || !error ? [{ label: session?.name ?? 'Check', href: checkPath }] : []),
        { label: 'Check session' },
      ]}
    />
  );

  if (!session) {
    return (
      <section class="session-page">
        {crumbs}
        <PageHeader title="Check session" />
        {otherAccount ? (
          <div class="notice notice-error" role="alert">
            <strong>This link was made for another account</strong>
            <p>
              No such check session exists in {otherAccount}, the account you are signed in to. To see it,
              sign out and sign in with an API key of the account the link names.
            </p>
          </div>
        ) : error ? (
          <ErrorNotice error={error} title="The check session could not be loaded" />
        ) : (
          <Loading what="Loading the check session" />
        )}
      </section>
    );
  }

  const groups = resultsByLocation(session);
  const done = groups.filter((g) => g.final !== null).length;
  const running = session.status === 'PROGRESS';
  const resultCheckId = session.checkId;

  return (
    <section class="session-page">
      {crumbs}
      <PageHeader
        title={
          <>
            <span>Check session of {session.name}</span>
            <span class="visually-hidden">: </span>
            <span class="rv-title-badge">
              <RunStatusBadge status={session.status} />
            </span>
          </>
        }
      >
        <a class="button button-secondary" href={checkPath}>
          View check
        </a>
      </PageHeader>

      {/* Always rendered, so screen readers hear the progress and the outcome as they change. */}
      <div class="session-progress" aria-live="polite">
        <p id="session-progress-text">{progressText(session)}</p>
        {running ? (
          <progress max={groups.length || 1} value={done} aria-labelledby="session-progress-text" />
        ) : null}
      </div>
      {error ? <ErrorNotice error={error} /> : null}
      {waitError && running ? (
        <div class="notice notice-error" role="alert">
          <strong>Waiting for the session failed; trying again</strong>
          <p>{waitError.message}</p>
        </div>
      ) : null}
      {session.status === 'TIMED_OUT' ? (
        <p class="notice notice-error">
          No agent took the job before it expired. Check that an agent serves each run location of this check.
        </p>
      ) : null}

      <Facts
        facts={[
          { term: 'Status', value: <RunStatusBadge status={session.status} /> },
          { term: 'Check type', value: checkTypeText(session.checkType) },
          {
            term: 'Trigger',
            value: (
              <>
                {TRIGGER_WORDS[session.triggerSource] ?? session.triggerSource}{' '}
                <code class="muted">{session.triggerSource}</code>
              </>
            ),
          },
          {
            term: 'Started',
            value: <time dateTime={session.startedAt}>{formatDateTime(session.startedAt)}</time>,
          },
          {
            term: 'Stopped',
            value: session.stoppedAt ? (
              <time dateTime={session.stoppedAt}>{formatDateTime(session.stoppedAt)}</time>
            ) : (
              'still running'
            ),
          },
          { term: running ? 'Elapsed so far' : 'Elapsed', value: formatElapsed(elapsed) },
          {
            term: 'Run locations',
            value: session.runLocations.length ? (
              <span class="rv-mono">{session.runLocations.join(', ')}</span>
            ) : (
              'none'
            ),
          },
        ]}
      />

      {groups.length === 0 ? (
        <p class="muted">This check session has no run location.</p>
      ) : (
        <>
          {groups.length > 1 ? (
            <LocationsSummary groups={groups} running={running} checkId={resultCheckId} />
          ) : null}
          {groups.map((group, index) => (
            <LocationSection
              key={group.location}
              group={group}
              index={index}
              running={running}
              checkId={resultCheckId}
              // With several locations, the results that passed start folded: the others draw the eye.
              folded={groups.length > 1 && group.final?.status === 'PASSED'}
            />
          ))}
        </>
      )}
    </section>
  );
}

/** The path of a result's page. */
function resultPath(checkId: string, resultId: string): string {
  return `/checks/${encodeURIComponent(checkId)}/results/${encodeURIComponent(resultId)}`;
}

/** A location's status: its final result's, running while the session runs, else "No result". */
function LocationStatus({ group, running }: { group: LocationResults; running: boolean }) {
  if (group.final) return <RunStatusBadge status={group.final.status} />;
  if (running) return <RunStatusBadge status="PROGRESS" />;
  return (
    <span class="badge badge-pending">
      <span aria-hidden="true" class="badge-glyph">
        –
      </span>
      No result
    </span>
  );
}

/** One row per run location: its status, response time and attempts, linking to its section below. */
function LocationsSummary({
  groups,
  running,
  checkId,
}: {
  groups: readonly LocationResults[];
  running: boolean;
  checkId: string;
}) {
  return (
    <>
      <h2>Results by run location</h2>
      <ScrollRegion label="The final result of each run location">
        <table>
          <caption class="visually-hidden">The final result of each run location</caption>
          <thead>
            <tr>
              <th scope="col">Run location</th>
              <th scope="col">Status</th>
              <th scope="col" class="num">
                Response time
              </th>
              <th scope="col" class="num">
                Attempts
              </th>
              <th scope="col">Error</th>
              <th scope="col">
                <span class="visually-hidden">Result page</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {groups.map((g, index) => (
              <tr key={g.location}>
                <th scope="row">
                  <a href={`#location-${index}`} class="rv-mono">
                    {g.location}
                  </a>
                </th>
                <td>
                  <LocationStatus group={g} running={running} />
                </td>
                <td class="num">{g.final ? formatMs(g.final.responseTime) : '—'}</td>
                <td class="num">{g.final ? g.final.attempts : g.attempts.length || '—'}</td>
                <td class="rv-break">{g.final?.errorMessage ?? '—'}</td>
                <td>
                  {g.final ? (
                    <a href={resultPath(checkId, g.final.id)}>
                      Open result<span class="visually-hidden"> of {g.location}</span>
                    </a>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </>
  );
}

/**
 * One run location: its heading and status, its final result (the whole result view, folded in a
 * disclosure when `folded`), and the attempts retried before it.
 */
function LocationSection({
  group,
  index,
  running,
  checkId,
  folded,
}: {
  group: LocationResults;
  index: number;
  running: boolean;
  checkId: string;
  folded: boolean;
}) {
  const headingId = `location-${index}`;
  const final = group.final;
  const view = final ? <ResultView result={final} checkId={checkId} resultId={final.id} level={3} /> : null;
  return (
    <section class="session-location" aria-labelledby={headingId}>
      <h2 id={headingId} class="session-location-title" tabIndex={-1}>
        <span class="rv-mono">{group.location}</span>
        <LocationStatus group={group} running={running} />
      </h2>
      {final ? (
        <>
          <p>
            <a href={resultPath(checkId, final.id)}>Open this result on its own page</a>{' '}
            <span class="muted">(with its assertions)</span>
          </p>
          {folded ? (
            <details class="rv-details">
              <summary>Details of the result from {group.location}</summary>
              {view}
            </details>
          ) : (
            view
          )}
        </>
      ) : (
        <p class="muted">
          {running ? 'Waiting for this location’s result.' : 'This location reported no final result.'}
        </p>
      )}
      {group.attempts.length > 0 ? <AttemptsTable attempts={group.attempts} checkId={checkId} /> : null}
    </section>
  );
}

/** The retried attempts of one location, each linking to its result page. */
function AttemptsTable({ attempts, checkId }: { attempts: readonly SessionResult[]; checkId: string }) {
  return (
    <>
      <h3>Retried attempts</h3>
      <ScrollRegion label="Attempts that failed and were retried">
        <table>
          <caption class="visually-hidden">Attempts that failed and were retried</caption>
          <thead>
            <tr>
              <th scope="col">Attempt</th>
              <th scope="col">Status</th>
              <th scope="col">Started</th>
              <th scope="col" class="num">
                Response time
              </th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {attempts.map((a) => (
              <tr key={a.id}>
                <th scope="row">
                  <a href={resultPath(checkId, a.id)}>Attempt {a.attempts}</a>
                  <span class="visually-hidden">, {resultTypeText(a.resultType, a.attempts)}</span>
                </th>
                <td>
                  <RunStatusBadge status={a.status} />
                </td>
                <td>
                  <time dateTime={a.startedAt}>{formatDateTime(a.startedAt)}</time>
                </td>
                <td class="num">{formatMs(a.responseTime)}</td>
                <td class="rv-break">{a.errorMessage ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </>
  );
}
