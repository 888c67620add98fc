import { ErrorNotice, Loading, PageHeader } from '../../ui/page.js';
import { checkTypeText } from '../../results/view.js';
import { Breadcrumbs, Facts } from '../../results/text.js';
import { RunStatusBadge } from '../../ui/status.js';
import { formatDateTime } from '../../ui/format.js';
import { useTitle } from '../../ui/hooks.js';
import './session.css';
import {
  TRIGGER_WORDS,
  formatElapsed,
  progressText,
  resultsByLocation,
  useElapsed,
  useOtherAccount,
  useSession,
} from './state.js';
import type { LocationResults } from './state.js';
import type { CheckSession } from '../../api/schemas.js';
import { LocationSection, LocationsSummary } from './locations.js';

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
        <SessionMissing otherAccount={otherAccount} error={error} />
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
      <SessionFacts session={session} running={running} elapsed={elapsed} />

      <SessionLocations groups={groups} running={running} checkId={resultCheckId} />
    </section>
  );
}

/** Why no session shows: a link of another account, an error, or still loading. */
function SessionMissing({ otherAccount, error }: { otherAccount: string | null; error: Error | null }) {
  return otherAccount ? (
    <div class="notice notice-error" role="alert">
      <strong>This link was made for another account</strong>
      <p>
        No such check session exists in {otherAccount}, the account you are signed in to. To see it, sign out
        and sign in with an API key of the account the link names.
      </p>
    </div>
  ) : error ? (
    <ErrorNotice error={error} title="The check session could not be loaded" />
  ) : (
    <Loading what="Loading the check session" />
  );
}

/** The session's status, check type, trigger, times and run locations. */
function SessionFacts({
  session,
  running,
  elapsed,
}: {
  session: CheckSession;
  running: boolean;
  elapsed: number | null;
}) {
  return (
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
        // The whole session (queueing, every location, retries), not a run's response time.
        {
          term: running ? 'Session duration so far' : 'Session duration',
          value: (
            <>
              {formatElapsed(elapsed)}
              <span class="muted"> (queueing and retries included; response times below)</span>
            </>
          ),
        },
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
  );
}

/** Each run location's results (with a summary first when there are several). */
function SessionLocations({
  groups,
  running,
  checkId: resultCheckId,
}: {
  groups: LocationResults[];
  running: boolean;
  checkId: string;
}) {
  return groups.length === 0 ? (
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
  );
}
