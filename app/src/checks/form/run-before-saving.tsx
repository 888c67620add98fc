/**
 * "Run before saving" in the check form: the form's content run once as a test run (nothing is saved), its
 * progress, then its full result as the result page shows it.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { awaitSession, getSession, testRunCheck } from '../../api/check-sessions.js';
import { ApiError } from '../../api/client.js';
import type { CheckSession, CheckType } from '../../api/schemas.js';
import { ResultView } from '../../results/view.js';
import { formatMs } from '../../ui/format.js';
import { RunStatusBadge } from '../../ui/status.js';
import { type CreatableType, TYPE_INFO } from './model/types.js';
import type { Json } from './model/paths.js';

/** The types whose form offers "Run before saving": API, browser and multi-step checks. */
export const TESTABLE_TYPES: ReadonlySet<CheckType> = new Set<CheckType>(['API', 'BROWSER', 'MULTI_STEP']);

/** Where a test run is. */
export type TestRunState =
  | { phase: 'idle' }
  | { phase: 'starting' }
  | { phase: 'running'; session: CheckSession }
  | { phase: 'done'; session: CheckSession }
  | { phase: 'error'; error: Error };

/** Seconds one completion request waits before it answers 408 (then it is asked again). */
const WAIT_SECONDS = 10;

/**
 * Starts test runs of the form's content and follows each: `POST /v1/check-sessions/test/{path}`, then
 * `GET /v1/check-sessions/{id}/completion?maxWaitSeconds=10` while it answers 408 (as "Run now" does,
 * checks/detail/run-now.tsx). Leaving the form, or a new run, stops following the previous one.
 * @param onRefused called with the error of a body the service refused (a 400 is placed at its field).
 */
export function useTestRun(type: CheckType, checkId: string | undefined, onRefused: (err: unknown) => void) {
  const [state, setState] = useState<TestRunState>({ phase: 'idle' });
  const controllerRef = useRef<AbortController | null>(null);
  const refusedRef = useRef(onRefused);
  refusedRef.current = onRefused;

  useEffect(() => () => controllerRef.current?.abort(), []);

  const start = useCallback(
    async (body: Json) => {
      controllerRef.current?.abort();
      const controller = new AbortController();
      controllerRef.current = controller;
      const { signal } = controller;
      setState({ phase: 'starting' });
      let session: CheckSession;
      try {
        session = await testRunCheck(TYPE_INFO[type as CreatableType].path, body, checkId);
      } catch (err) {
        if (signal.aborted) return;
        setState({ phase: 'idle' });
        refusedRef.current(err);
        return;
      }
      try {
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
      } catch (err) {
        if (signal.aborted) return;
        setState({ phase: 'error', error: err instanceof Error ? err : new Error(String(err)) });
      }
    },
    [type, checkId],
  );

  const busy = state.phase === 'starting' || state.phase === 'running';
  return { state, start, busy };
}

/** One sentence on where the test run is, for the live region. */
function sentenceOf(state: TestRunState): string {
  switch (state.phase) {
    case 'idle':
      return '';
    case 'starting':
      return 'Starting a test run…';
    case 'running':
      return `Running in ${state.session.runLocations.join(', ')}… waiting for the agent's result.`;
    case 'error':
      return `The test run could not be followed: ${state.error.message}`;
    case 'done': {
      const { session } = state;
      const took = session.timeElapsed ? ` (session duration ${formatMs(session.timeElapsed)})` : '';
      switch (session.status) {
        case 'PASSED':
          return `The test run passed${took}. Nothing was saved.`;
        case 'DEGRADED':
          return `The test run passed but degraded${took}. Nothing was saved.`;
        case 'FAILED':
          return `The test run failed${took}. Nothing was saved.`;
        case 'TIMED_OUT':
          return `No agent took the test run in time (location ${session.runLocations.join(', ')}).`;
        default:
          return `The test run ended: ${session.status}.`;
      }
    }
  }
}

/**
 * The test run's panel under the form's buttons: a sentence in a polite live region (always in the page, so
 * the first change is announced), then the run's status and, once it ended, its full result (ResultView, as
 * the result page shows it: assertions, the request and response, timings, logs, artifacts).
 */
export function TestRunPanel({ state }: { state: TestRunState }) {
  const session = state.phase === 'running' || state.phase === 'done' ? state.session : null;
  const result = state.phase === 'done' ? state.session.results[0] : undefined;
  return (
    <section
      class={state.phase === 'idle' ? 'test-run test-run-idle' : 'test-run card'}
      aria-label="Test run"
    >
      <p class="test-run-sentence" aria-live="polite" aria-atomic="true">
        {sentenceOf(state)}
      </p>
      {session ? (
        <p class="test-run-status">
          <RunStatusBadge status={session.status} />{' '}
          <span class="muted">
            A test run of the form as it is now, kept for an hour; it is in no check's results.
          </span>
        </p>
      ) : null}
      {session && result ? (
        <>
          <h2 class="test-run-heading">Result in {result.runLocation}</h2>
          <ResultView
            result={result as Parameters<typeof ResultView>[0]['result']}
            checkId={session.checkId}
            resultId={result.id}
            level={3}
          />
        </>
      ) : null}
    </section>
  );
}
