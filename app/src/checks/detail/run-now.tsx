/** "Run now" on the check page: start a check session, follow it live, show its results. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { awaitSession, getSession, triggerCheck } from '../../api/check-sessions.js';
import { ApiError } from '../../api/client.js';
import { formatDateTime, formatMs } from '../../ui/format.js';
import type { CheckSession } from '../../api/schemas.js';
import { RunStatusBadge } from '../../ui/status.js';

/** Where a run started from the page is. */
type RunState =
  | { phase: 'idle' }
  | { phase: 'starting' }
  | { phase: 'running'; session: CheckSession }
  | { phase: 'done'; session: CheckSession }
  /** The service started no session (a type agents cannot run yet). */
  | { phase: 'none' }
  | { phase: 'error'; error: Error };

/** Seconds one completion request waits before it answers 408 (then it is asked again). */
const WAIT_SECONDS = 10;

/**
 * Starts a check session for one check (`POST /v1/check-sessions/trigger` with `{ target: { checkId: [id]
 * } }`) and follows it: `GET /v1/check-sessions/{id}/completion?maxWaitSeconds=10` again and again while it
 * answers 408 (between two waits, `GET /v1/check-sessions/{id}` shows the locations already done), until the
 * session is final. Leaving the page stops following.
 * @param onFinished called once the session is final (to read the check's results again).
 */
export function useRunNow(checkId: string, onFinished: () => void) {
  const [state, setState] = useState<RunState>({ phase: 'idle' });
  const controllerRef = useRef<AbortController | null>(null);
  const finishedRef = useRef(onFinished);
  finishedRef.current = onFinished;

  useEffect(() => () => controllerRef.current?.abort(), []);

  const start = useCallback(async () => {
    controllerRef.current?.abort();
    const controller = new AbortController();
    controllerRef.current = controller;
    const { signal } = controller;
    setState({ phase: 'starting' });
    try {
      const { sessions } = await triggerCheck(checkId);
      if (signal.aborted) return;
      let session = sessions[0];
      if (!session) {
        setState({ phase: 'none' });
        return;
      }
      const sessionId = session.checkSessionId;
      while (session.status === 'PROGRESS') {
        setState({ phase: 'running', session });
        try {
          session = await awaitSession(sessionId, WAIT_SECONDS, signal);
        } catch (err) {
          if (!(err instanceof ApiError && err.status === 408)) throw err;
          session = await getSession(sessionId, signal);
        }
        if (signal.aborted) return;
      }
      setState({ phase: 'done', session });
      finishedRef.current();
    } catch (err) {
      if (signal.aborted) return;
      setState({ phase: 'error', error: err instanceof Error ? err : new Error(String(err)) });
    }
  }, [checkId]);

  const busy = state.phase === 'starting' || state.phase === 'running';
  return { state, start, busy };
}

/** The path of a session's page in this app, from its `checkSessionLink` (a link under the app's URL). */
export function sessionPath(link: string): string {
  try {
    return new URL(link, window.location.origin).pathname;
  } catch {
    return link;
  }
}

/** One sentence on where the run is, for the live region. */
function sentenceOf(state: RunState): string {
  switch (state.phase) {
    case 'idle':
      return '';
    case 'starting':
      return 'Starting a run…';
    case 'running': {
      const { session } = state;
      const done = session.results.length;
      const all = session.runLocations.length;
      return `Running… ${done} of ${all} location${all === 1 ? '' : 's'} done.`;
    }
    case 'none':
      return 'No run was started: agents cannot run this type of check yet.';
    case 'error':
      return `The run could not be followed: ${state.error.message}`;
    case 'done': {
      const { session } = state;
      // The session's own duration (waiting for an agent, retries and reporting included), not a response
      // time: said as such, so it is not read against the response times in the table below.
      const took = session.timeElapsed ? ` (session duration ${formatMs(session.timeElapsed)})` : '';
      switch (session.status) {
        case 'PASSED':
          return `The run passed${took}.`;
        case 'DEGRADED':
          return `The run passed but degraded${took}.`;
        case 'FAILED':
          return `The run failed${took}.`;
        case 'TIMED_OUT':
          return `No agent took the run in time (locations: ${session.runLocations.join(', ')}). Is an agent serving them running?`;
        case 'CANCELLED':
          return 'The run was cancelled.';
        default:
          return `The run ended: ${session.status}.`;
      }
    }
  }
}

/**
 * What "Run now" started: a sentence in a polite live region (announced as it changes: starting, running,
 * its end), then the session's status, each location's result with a link to the result page, and a link
 * to the session page. The live region is always in the page, so the first change is announced too.
 */
export function RunNowPanel({ checkId, state }: { checkId: string; state: RunState }) {
  const session = state.phase === 'running' || state.phase === 'done' ? state.session : null;
  const sentence = sentenceOf(state);
  return (
    <div class={state.phase === 'idle' ? 'run-now run-now-idle' : 'run-now card'}>
      <p class="run-now-sentence" aria-live="polite" aria-atomic="true">
        {sentence}
      </p>
      {session ? (
        <>
          <p class="run-now-session">
            <RunStatusBadge status={session.status} />{' '}
            <span class="muted">started {formatDateTime(session.startedAt)}</span>{' '}
            <a href={sessionPath(session.checkSessionLink)}>Open the check session</a>
          </p>
          {session.results.length > 0 ? (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Results of this run, one per location</caption>
                <thead>
                  <tr>
                    <th scope="col">Location</th>
                    <th scope="col">Status</th>
                    <th scope="col" class="num">
                      Response time of the run
                    </th>
                    <th scope="col">Error</th>
                  </tr>
                </thead>
                <tbody>
                  {session.results.map((r) => (
                    <tr key={r.id}>
                      <th scope="row">
                        <a
                          href={`/checks/${encodeURIComponent(checkId)}/results/${encodeURIComponent(r.id)}`}
                          aria-label={`Result in ${r.runLocation}`}
                        >
                          {r.runLocation}
                        </a>
                      </th>
                      <td>
                        <RunStatusBadge status={r.status} />
                      </td>
                      <td class="num">{formatMs(r.responseTime)}</td>
                      <td class="run-now-error">{r.errorMessage ?? <span class="muted">—</span>}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
          {state.phase === 'running' ? (
            <p class="muted">
              Waiting for{' '}
              {session.runLocations
                .filter((l) => !session.results.some((r) => r.runLocation === l))
                .join(', ') || 'the results'}
              …
            </p>
          ) : null}
        </>
      ) : null}
    </div>
  );
}
