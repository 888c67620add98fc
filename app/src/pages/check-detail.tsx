import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api.js';
import {
  CheckPerformance,
  type ResultItem,
  WINDOWS,
  type WindowKey,
  windowOf,
} from '../components/checks-performance.js';
import { RunNowPanel, useRunNow } from '../components/checks-run-now.js';
import {
  CHECK_TYPE_LABELS,
  type CheckGroupSummary,
  frequencyText,
  relativeTime,
} from '../components/checks-shared.js';
import { Empty, ErrorNotice, Loading, PageHeader } from '../components/page.js';
import { displayStatusOf, RunStatusBadge, StatusBadge } from '../components/status.js';
import { formatDateTime, formatMs } from '../format.js';
import { type Loaded, useLoad, useTitle } from '../hooks.js';
import type { Check, CheckStatus } from '../types.js';
import './check-detail.css';

/** An error group as `GET /v1/error-groups/checks/{checkId}` lists it (docs/api.md, "Error group"). */
type ErrorGroup = {
  id: string;
  cleanedErrorMessage: string;
  rawErrorMessage: string | null;
  firstSeen: string;
  lastSeen: string;
  archivedUntilNextEvent: boolean;
  archivedForEver: boolean;
};

/** An alert as `GET /v1/check-alerts/{checkId}` lists it (docs/alerting.md, "Alerts"). */
type CheckAlert = {
  id: string;
  alertType: string;
  title: string;
  notified: boolean;
  isReminder: boolean;
  checkResultId: string | null;
  runLocation: string | null;
  error: string | null;
  sslDaysRemaining: number | null;
  created_at: string;
};

/** Alert types in words (docs/alerting.md: the change of state each one tells). */
const ALERT_TYPE_TEXT: Record<string, string> = {
  ALERT_FAILURE: 'Failing',
  ALERT_FAILURE_REMAIN: 'Still failing (reminder)',
  ALERT_FAILURE_DEGRADED: 'Failing → degraded',
  ALERT_DEGRADED: 'Degraded',
  ALERT_DEGRADED_REMAIN: 'Still degraded (reminder)',
  ALERT_DEGRADED_FAILURE: 'Degraded → failing',
  ALERT_RECOVERY: 'Recovered',
  ALERT_DEGRADED_RECOVERY: 'Recovered from degraded',
  ALERT_SSL: 'SSL certificate expiring',
};

/** How many recent results, error groups and alerts the page lists. */
const RECENT = 20;

/**
 * The check page (`/checks/:checkId`): what the check is, its live status and actions (run now, pause,
 * mute, edit, delete), its performance over a window kept in the address (`?window=24h`), its recent
 * results, error groups and alert history.
 */
export default function CheckDetail({ checkId }: { checkId: string }) {
  const { query, path, route } = useLocation();
  const windowKey = windowOf(query.window);
  const id = encodeURIComponent(checkId);
  const [reloadKey, setReloadKey] = useState(0);

  const check = useLoad((signal) => api.get<Check>(`/v1/checks/${id}`, undefined, signal), [id]);
  const status = useLoad(
    (signal) => api.get<CheckStatus>(`/v1/check-statuses/${id}`, undefined, signal),
    [id, reloadKey],
    10_000,
  );
  const results = useLoad(
    (signal) => api.get<ResultItem[]>(`/v1/check-results/${id}`, { limit: RECENT }, signal),
    [id, reloadKey],
    30_000,
  );
  const errorGroups = useLoad(
    (signal) => api.get<ErrorGroup[]>(`/v1/error-groups/checks/${id}`, { limit: RECENT }, signal),
    [id, reloadKey],
  );
  const alerts = useLoad(
    (signal) => api.get<CheckAlert[]>(`/v1/check-alerts/${id}`, { limit: RECENT }, signal),
    [id, reloadKey],
  );
  const group = useLoad(
    (signal) =>
      check.data?.groupId
        ? api.get<CheckGroupSummary>(`/v1/check-groups/${check.data.groupId}`, undefined, signal)
        : Promise.resolve(null),
    [check.data?.groupId],
  );
  const run = useRunNow(checkId, () => setReloadKey((k) => k + 1));
  const [notice, setNotice] = useState<{ text: string; error: boolean } | null>(null);
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
  const display = status.data ? displayStatusOf(c, status.data) : null;
  const locations = [...(c.locations ?? []), ...(c.privateLocations ?? [])];
  const setWindow = (key: WindowKey) => route(key === '24h' ? path : `${path}?window=${key}`, true);

  return (
    <section class="check-page">
      <nav aria-label="Breadcrumb" class="breadcrumbs">
        <a href="/checks">Checks</a> <span aria-hidden="true">/</span>{' '}
        <span aria-current="page">{c.name}</span>
      </nav>
      <PageHeader title={c.name}>
        {/* A heartbeat monitor is not run: it waits for pings. */}
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
      </PageHeader>
      <p
        class={notice?.error ? 'check-action-message check-action-error' : 'check-action-message'}
        role="status"
      >
        {notice ? `${notice.error ? '✕ ' : ''}${notice.text}` : ''}
      </p>

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
              <a href={`/check-groups/${c.groupId}`}>{group.data?.name ?? `Group ${c.groupId}`}</a>
            )}
          </dd>
        </div>
      </dl>
      {typeof c.description === 'string' && c.description ? (
        <p class="check-description">{c.description}</p>
      ) : null}

      <RunNowPanel checkId={checkId} state={run.state} />

      <section aria-labelledby="check-performance-heading">
        <div class="check-section-header">
          <h2 id="check-performance-heading">Performance</h2>
          <fieldset class="window-picker">
            <legend class="visually-hidden">Time window</legend>
            {(Object.keys(WINDOWS) as WindowKey[]).map((key) => (
              <button
                type="button"
                key={key}
                class="button-secondary"
                aria-pressed={key === windowKey ? 'true' : 'false'}
                onClick={() => setWindow(key)}
              >
                <span class="visually-hidden">Last </span>
                {WINDOWS[key].short}
              </button>
            ))}
          </fieldset>
        </div>
        <CheckPerformance check={c} windowKey={windowKey} reloadKey={reloadKey} />
      </section>

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

/**
 * Pause / resume and mute / unmute: `PUT /v1/checks/{id}` with the one field changed. The fields sent
 * replace the stored ones and the others are kept, but `heartbeat` and `script` are required in every
 * update body, so they are sent back as they are (docs/api.md, "Checks").
 */
function CheckToggles({
  check,
  onDone,
}: {
  check: Check;
  /** Told what happened, in a sentence for the status line, and whether it was an error. */
  onDone: (text: string, error: boolean) => void;
}) {
  const [busy, setBusy] = useState(false);

  async function toggle(field: 'activated' | 'muted') {
    setBusy(true);
    const value = !check[field];
    try {
      await api.put(`/v1/checks/${encodeURIComponent(check.id)}`, {
        heartbeat: (check.heartbeat as Record<string, unknown> | undefined) ?? {},
        script: typeof check.script === 'string' ? check.script : null,
        [field]: value,
      });
      onDone(
        field === 'activated'
          ? value
            ? 'The check is scheduled again.'
            : 'The check is paused: it is not scheduled (Run now still runs it).'
          : value
            ? 'The check is muted: its alerts are recorded and nobody is notified.'
            : 'The check is unmuted: its alerts are sent again.',
        false,
      );
    } catch (err) {
      const what = field === 'activated' ? (value ? 'resumed' : 'paused') : value ? 'muted' : 'unmuted';
      onDone(`The check could not be ${what}: ${err instanceof Error ? err.message : String(err)}`, true);
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <button type="button" class="button-secondary" disabled={busy} onClick={() => toggle('activated')}>
        {check.activated ? 'Pause' : 'Resume'}
      </button>
      <button type="button" class="button-secondary" disabled={busy} onClick={() => toggle('muted')}>
        {check.muted ? 'Unmute' : 'Mute'}
      </button>
    </>
  );
}

/** Delete with a native modal dialog: focus moves into it (on Cancel), Escape closes it, focus comes back. */
function DeleteCheck({ check, onDeleted }: { check: Check; onDeleted: () => void }) {
  const dialogRef = useRef<HTMLDialogElement>(null);
  const triggerRef = useRef<HTMLButtonElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);

  useEffect(() => {
    const dialog = dialogRef.current;
    if (!dialog) return;
    const onClose = () => triggerRef.current?.focus();
    dialog.addEventListener('close', onClose);
    return () => dialog.removeEventListener('close', onClose);
  }, []);

  async function confirm() {
    setBusy(true);
    setError(null);
    try {
      await api.delete(`/v1/checks/${encodeURIComponent(check.id)}`);
      dialogRef.current?.close();
      onDeleted();
    } catch (err) {
      setError(err instanceof Error ? err : new Error(String(err)));
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <button
        type="button"
        class="button-danger"
        ref={triggerRef}
        onClick={() => {
          setError(null);
          dialogRef.current?.showModal();
          cancelRef.current?.focus();
        }}
      >
        Delete
      </button>
      <dialog ref={dialogRef} class="check-delete-dialog" aria-labelledby="check-delete-title">
        <h2 id="check-delete-title">Delete “{check.name}”?</h2>
        <p>The check stops running and its queued jobs are dropped. This cannot be undone.</p>
        {error ? (
          <p class="check-action-error" role="alert">
            ✕ {error.message}
          </p>
        ) : null}
        <div class="check-dialog-buttons">
          <button type="button" class="button-danger" disabled={busy} onClick={confirm}>
            {busy ? 'Deleting…' : 'Delete check'}
          </button>
          <button
            type="button"
            class="button-secondary"
            ref={cancelRef}
            disabled={busy}
            onClick={() => dialogRef.current?.close()}
          >
            Cancel
          </button>
        </div>
      </dialog>
    </>
  );
}

/** The last results, newest first, each linking to its page. */
function RecentResults({
  checkId,
  loaded,
  heartbeat,
}: {
  checkId: string;
  loaded: Loaded<ResultItem[]>;
  heartbeat: boolean;
}) {
  if (loaded.error && !loaded.data)
    return <ErrorNotice error={loaded.error} title="The results could not be loaded" />;
  if (!loaded.data) return <Loading what="Loading results" />;
  if (loaded.data.length === 0) {
    return (
      <Empty>
        {heartbeat
          ? 'No results yet: one is recorded when a ping comes in, or when one is late.'
          : 'No results yet: the check has not run. Press Run now to run it.'}
      </Empty>
    );
  }
  const now = Date.now();
  return (
    <div class="table-wrap">
      <table class="check-results">
        <caption class="visually-hidden">The last {RECENT} results, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Location</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Response time
            </th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {loaded.data.map((r) => (
            <tr key={r.id}>
              <th scope="row">
                <a href={`/checks/${encodeURIComponent(checkId)}/results/${encodeURIComponent(r.id)}`}>
                  <time dateTime={r.startedAt}>{formatDateTime(r.startedAt)}</time>
                </a>{' '}
                <span class="muted">({relativeTime(Date.parse(r.startedAt), now)})</span>
              </th>
              <td>{r.runLocation}</td>
              <td>
                <RunStatusBadge status={r.status} />
                {r.attempts > 1 ? <span class="muted"> after {r.attempts} attempts</span> : null}
              </td>
              <td class="num">{formatMs(r.responseTime)}</td>
              <td class="check-error-text">{r.errorMessage ?? <span class="muted">—</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The check's error groups: failed runs grouped by their message. */
function ErrorGroups({ loaded }: { loaded: Loaded<ErrorGroup[]> }) {
  if (loaded.error && !loaded.data)
    return <ErrorNotice error={loaded.error} title="The error groups could not be loaded" />;
  if (!loaded.data) return <Loading what="Loading error groups" />;
  if (loaded.data.length === 0) return <Empty>No errors: no run of this check has failed.</Empty>;
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">Error groups, most recently seen first</caption>
        <thead>
          <tr>
            <th scope="col">Error</th>
            <th scope="col">First seen</th>
            <th scope="col">Last seen</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {loaded.data.map((g) => (
            <tr key={g.id}>
              <th scope="row" class="check-error-text">
                {g.cleanedErrorMessage}
                {g.rawErrorMessage && g.rawErrorMessage !== g.cleanedErrorMessage ? (
                  <span class="check-error-raw muted">Latest: {g.rawErrorMessage}</span>
                ) : null}
              </th>
              <td>
                <time dateTime={g.firstSeen}>{formatDateTime(g.firstSeen)}</time>
              </td>
              <td>
                <time dateTime={g.lastSeen}>{formatDateTime(g.lastSeen)}</time>
              </td>
              <td>
                {g.archivedForEver
                  ? 'Archived for good'
                  : g.archivedUntilNextEvent
                    ? 'Archived until it happens again'
                    : 'Active'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The check's alerts, newest first: what changed, when, and whether anybody was notified. */
function AlertHistory({ checkId, loaded }: { checkId: string; loaded: Loaded<CheckAlert[]> }) {
  if (loaded.error && !loaded.data)
    return <ErrorNotice error={loaded.error} title="The alerts could not be loaded" />;
  if (!loaded.data) return <Loading what="Loading alerts" />;
  if (loaded.data.length === 0)
    return <Empty>No alerts: this check has not changed state since it was created.</Empty>;
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">The last {RECENT} alerts, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Alert</th>
            <th scope="col">Notified</th>
            <th scope="col">Location</th>
            <th scope="col">Detail</th>
          </tr>
        </thead>
        <tbody>
          {loaded.data.map((a) => (
            <tr key={a.id}>
              <th scope="row">
                <time dateTime={a.created_at}>{formatDateTime(a.created_at)}</time>
              </th>
              <td>{ALERT_TYPE_TEXT[a.alertType] ?? a.alertType}</td>
              <td>{a.notified ? 'Yes' : 'No: muted'}</td>
              <td>{a.runLocation ?? <span class="muted">—</span>}</td>
              <td class="check-error-text">
                {a.alertType === 'ALERT_SSL' && a.sslDaysRemaining !== null
                  ? `${a.sslDaysRemaining} days left`
                  : (a.error ?? a.title)}
                {a.checkResultId ? (
                  <>
                    {' '}
                    <a
                      href={`/checks/${encodeURIComponent(checkId)}/results/${encodeURIComponent(a.checkResultId)}`}
                      aria-label={`View result of the alert at ${formatDateTime(a.created_at)}`}
                    >
                      View result
                    </a>
                  </>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
