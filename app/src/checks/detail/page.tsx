import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { listCheckAlerts, listErrorGroups, listRecentResults } from '../../api/check-results.js';
import { getCheckGroup } from '../../api/check-groups.js';
import { getCheck, getCheckStatus } from '../../api/checks.js';
import { CheckPerformance, WINDOWS, type WindowKey, windowOf } from './performance.js';
import { RunNowPanel, useRunNow } from './run-now.js';
import { CHECK_TYPE_LABELS, frequencyText, relativeTime } from '../labels.js';
import { ErrorNotice, Loading, PageHeader } from '../../ui/page.js';
import { displayStatusOf, StatusBadge } from '../../ui/status.js';
import { type Loaded, useLoad, useTitle } from '../../ui/hooks.js';
import type { Check, CheckStatus } from '../../api/schemas.js';
import './detail.css';
import { AlertHistory, ErrorGroups, RecentResults } from './history.js';
import { CheckToggles, DeleteCheck } from './actions.js';
import { RECENT } from './history.js';
import { HeartbeatPingPanel, HeartbeatPings, useHeartbeatPings } from './heartbeat.js';
import { UnservedLocations } from './locations.js';
import { AgenticRepairs, AgenticScriptPanel } from './agentic.js';
import { useCan } from '../../ui/permissions.js';

/** What the check page loads: the check, its live status, recent results, error groups, alerts and group. */
function useCheckPageData(checkId: string, reloadKey: number) {
  const check = useLoad((signal) => getCheck(checkId, signal), [checkId]);
  const status = useLoad((signal) => getCheckStatus(checkId, signal), [checkId, reloadKey], 10_000);
  const results = useLoad(
    (signal) => listRecentResults(checkId, RECENT, signal),
    [checkId, reloadKey],
    30_000,
  );
  const errorGroups = useLoad((signal) => listErrorGroups(checkId, RECENT, signal), [checkId, reloadKey]);
  const alerts = useLoad((signal) => listCheckAlerts(checkId, RECENT, signal), [checkId, reloadKey]);
  const group = useLoad(
    (signal) => (check.data?.groupId ? getCheckGroup(check.data.groupId, signal) : Promise.resolve(null)),
    [check.data?.groupId],
  );
  return { check, status, results, errorGroups, alerts, group };
}

/**
 * The check page (`/checks/:checkId`): what the check is, its live status and actions (run now, pause,
 * mute, edit, delete), its performance over a window kept in the address (`?window=24h`), its recent
 * results, error groups and alert history.
 */
export default function CheckDetail({ checkId }: { checkId: string }) {
  const { query, path, route } = useLocation();
  const windowKey = windowOf(query.window);
  /** The check's id in this app's addresses. */
  const id = encodeURIComponent(checkId);
  const [reloadKey, setReloadKey] = useState(0);
  const { check, status, results, errorGroups, alerts, group } = useCheckPageData(checkId, reloadKey);
  const run = useRunNow(checkId, () => setReloadKey((k) => k + 1));
  const heartbeat = check.data?.checkType === 'HEARTBEAT';
  const pings = useHeartbeatPings(checkId, heartbeat, reloadKey);
  const [notice, setNotice] = useState<{ text: string; error: boolean } | null>(null);
  const canWrite = useCan('write');
  useTitle(check.data?.name ?? 'Check');

  if (!check.data) {
    return (
      <section class="check-page">
        <nav aria-label="Breadcrumb" class="breadcrumbs">
          <a href="/checks">Checks</a>
        </nav>
        {check.error ? (
          <>
            <PageHeader title="Check" />
            <ErrorNotice error={check.error} title="The check could not be loaded" />
          </>
        ) : (
          <Loading what="Loading the check" />
        )}
      </section>
    );
  }

  const c = check.data;
  const setWindow = (key: WindowKey) => route(key === '24h' ? path : `${path}?window=${key}`, true);

  return (
    <section class="check-page">
      <nav aria-label="Breadcrumb" class="breadcrumbs">
        <a href="/checks">Checks</a> <span aria-hidden="true">/</span>{' '}
        <span aria-current="page">{c.name}</span>
      </nav>
      <PageHeader title={c.name}>
        {/* A heartbeat monitor is not run: it waits for pings. A role that may not write sees no action. */}
        {!canWrite ? null : (
          <>
            {c.checkType === 'HEARTBEAT' ? null : (
              <button type="button" onClick={run.start} disabled={run.busy}>
                {run.busy ? 'Running…' : 'Run now'}
              </button>
            )}
            <CheckToggles
              check={c}
              onDone={(text, error) => {
                setNotice({ text, error });
                if (!error) check.reload();
              }}
            />
            <a class="button button-secondary" href={`/checks/${id}/edit`}>
              Edit
            </a>
            <DeleteCheck check={c} onDeleted={() => route('/checks')} />
          </>
        )}
      </PageHeader>
      <p
        class={notice?.error ? 'check-action-message check-action-error' : 'check-action-message'}
        role="status"
      >
        {notice ? `${notice.error ? '✕ ' : ''}${notice.text}` : ''}
      </p>

      <CheckMeta checkId={checkId} check={c} status={status} groupName={group.data?.name} />
      {heartbeat ? null : <UnservedLocations check={c} reloadKey={reloadKey} />}
      {typeof c.description === 'string' && c.description ? (
        <p class="check-description">{c.description}</p>
      ) : null}

      {heartbeat ? <HeartbeatPingPanel check={c} /> : <RunNowPanel checkId={checkId} state={run.state} />}

      {c.checkType === 'AGENTIC' ? (
        <>
          <AgenticScriptPanel check={c} canWrite={canWrite} onSaved={check.reload} />
          <section aria-labelledby="agentic-repairs-heading">
            <h2 id="agentic-repairs-heading">Script changes</h2>
            <AgenticRepairs
              checkId={checkId}
              canWrite={canWrite}
              reloadKey={reloadKey}
              onDecided={check.reload}
            />
          </section>
        </>
      ) : null}

      <section aria-labelledby="check-performance-heading">
        <div class="check-section-header">
          <h2 id="check-performance-heading">Performance</h2>
          <WindowPicker windowKey={windowKey} onPick={setWindow} />
        </div>
        <CheckPerformance check={c} windowKey={windowKey} reloadKey={reloadKey} />
      </section>

      {heartbeat ? (
        <section aria-labelledby="heartbeat-pings-heading">
          <h2 id="heartbeat-pings-heading">Pings</h2>
          <HeartbeatPings check={c} loaded={pings} />
        </section>
      ) : null}

      <section aria-labelledby="check-results-heading">
        <h2 id="check-results-heading">Recent results</h2>
        <RecentResults checkId={checkId} loaded={results} heartbeat={c.checkType === 'HEARTBEAT'} />
      </section>

      <section aria-labelledby="check-errors-heading">
        <h2 id="check-errors-heading">Error groups</h2>
        <ErrorGroups loaded={errorGroups} />
      </section>

      <section aria-labelledby="check-alerts-heading">
        <h2 id="check-alerts-heading">Alert history</h2>
        <AlertHistory checkId={checkId} loaded={alerts} />
      </section>
    </section>
  );
}

/** The buttons that pick the performance window. */
function WindowPicker({ windowKey, onPick }: { windowKey: WindowKey; onPick: (key: WindowKey) => void }) {
  return (
    <fieldset class="window-picker">
      <legend class="visually-hidden">Time window</legend>
      {(Object.keys(WINDOWS) as WindowKey[]).map((key) => (
        <button
          type="button"
          key={key}
          class="button-secondary"
          aria-pressed={key === windowKey ? 'true' : 'false'}
          onClick={() => onPick(key)}
        >
          <span class="visually-hidden">Last </span>
          {WINDOWS[key].short}
        </button>
      ))}
    </fieldset>
  );
}

/** What the check is: its status and last run, type, frequency, locations, tags and group. */
function CheckMeta({
  checkId,
  check: c,
  status,
  groupName,
}: {
  checkId: string;
  check: Check;
  status: Loaded<CheckStatus>;
  groupName: string | undefined;
}) {
  const id = encodeURIComponent(checkId);
  const display = status.data ? displayStatusOf(c, status.data) : null;
  const locations = [...(c.locations ?? []), ...(c.privateLocations ?? [])];
  return (
    <dl class="check-meta">
      <div>
        <dt>Status</dt>
        <dd>
          {display ? (
            <StatusBadge status={display} />
          ) : status.error ? (
            <span class="muted">unknown</span>
          ) : (
            '…'
          )}
          {status.data?.lastRunAt && status.data.lastResultId ? (
            <>
              {' '}
              <a href={`/checks/${id}/results/${encodeURIComponent(status.data.lastResultId)}`}>
                last run{' '}
                <time dateTime={status.data.lastRunAt}>
                  {relativeTime(Date.parse(status.data.lastRunAt), Date.now())}
                </time>
              </a>
            </>
          ) : null}
        </dd>
      </div>
      <div>
        <dt>Type</dt>
        <dd>{CHECK_TYPE_LABELS[c.checkType] ?? c.checkType}</dd>
      </div>
      <div>
        <dt>Frequency</dt>
        <dd>
          {frequencyText(c)}
          {c.runParallel ? <span class="muted"> · every location at once</span> : null}
        </dd>
      </div>
      <div>
        <dt>Locations</dt>
        <dd>
          {c.checkType === 'HEARTBEAT'
            ? 'none: the monitored job pings it'
            : locations.length
              ? locations.join(', ')
              : 'us-east-1'}
        </dd>
      </div>
      <div>
        <dt>Tags</dt>
        <dd>
          {c.tags.length ? (
            <ul class="check-tags">
              {c.tags.map((t) => (
                <li key={t}>
                  <a class="tag" href={`/checks?tag=${encodeURIComponent(t)}`}>
                    {t}
                  </a>
                </li>
              ))}
            </ul>
          ) : (
            <span class="muted">none</span>
          )}
        </dd>
      </div>
      <div>
        <dt>Group</dt>
        <dd>
          {c.groupId === null ? (
            <span class="muted">none</span>
          ) : (
            <a href={`/check-groups/${c.groupId}`}>{groupName ?? `Group ${c.groupId}`}</a>
          )}
        </dd>
      </div>
    </dl>
  );
}
