/**
 * A check session as the page follows it: read, waited on until done, and grouped by location.
 */
import { useEffect, useState } from 'preact/hooks';
import { awaitSession, getSession } from '../../api/check-sessions.js';
import { ApiError } from '../../api/client.js';
import { fetchSession } from '../../api/session.js';
import { formatMs } from '../../ui/format.js';
import type { CheckSession, SessionResult } from '../../api/schemas.js';

/** How long one completion request waits on the service before it answers 408 (still running), seconds. */
const COMPLETION_WAIT_SECONDS = 10;

/** Trigger sources in words (docs/api.md, "Check session"). */
export const TRIGGER_WORDS: Record<string, string> = {
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
export function pause(ms: number, signal: AbortSignal): Promise<void> {
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
export function useSession(sessionId: string): {
  seen: Seen | null;
  error: Error | null;
  waitError: Error | null;
} {
  const [seen, setSeen] = useState<Seen | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [waitError, setWaitError] = useState<Error | null>(null);

  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    const show = (session: CheckSession) => {
      if (!signal.aborted) setSeen({ session, readAtMs: Date.now() });
    };
    setSeen(null);
    setError(null);
    setWaitError(null);

    (async () => {
      let current: CheckSession;
      try {
        current = await getSession(sessionId, signal);
      } catch (err) {
        if (!signal.aborted) setError(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      show(current);
      let failures = 0;
      while (current.status === 'PROGRESS' && !signal.aborted) {
        try {
          current = await awaitSession(sessionId, COMPLETION_WAIT_SECONDS, signal);
          show(current);
          failures = 0;
          setWaitError(null);
        } catch (err) {
          if (signal.aborted) return;
          if (err instanceof ApiError && err.status === 408) {
            // Still running: show the results that arrived meanwhile, then wait again.
            failures = 0;
            setWaitError(null);
            current = await getSession(sessionId, signal).catch(() => current);
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
export function useOtherAccount(accountId: string, error: Error | null): string | null {
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
export function useElapsed(seen: Seen | null): number | null {
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
