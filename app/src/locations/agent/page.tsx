import { useState } from 'preact/hooks';
import { listChecks } from '../../api/checks.js';
import { getAgent, listAgentErrorReports } from '../../api/locations.js';
import { AgentScope, ConnectedBadge, formatSlots, shortId, When } from '../agents.js';
import { Breadcrumbs } from '../../ui/widgets.js';
import { Empty, ErrorNotice, Loading, PageHeader } from '../../ui/page.js';
import { formatDateTime } from '../../ui/format.js';
import { useLoad, useTitle } from '../../ui/hooks.js';
import type { Agent } from '../../api/schemas.js';
import './agent.css';

/** How often the page looks again at the agent (connected, slots, running jobs), ms. */
const POLL_MS = 10_000;
/** Error reports per page. */
const REPORTS_PER_PAGE = 20;

/**
 * One agent (`/agents/:agentId`): what it serves, its version, first and last contact, whether it is
 * connected, its free slots, check types, runtimes and running jobs, and the error reports it sent.
 */
export default function AgentDetail({ agentId }: { agentId?: string }) {
  const id = agentId ?? '';
  const agent = useLoad((signal) => getAgent(id, signal), [id], POLL_MS);
  // Names for the checks of running jobs (a job names its check by id).
  const checks = useLoad((signal) => listChecks(signal), []);
  const checkName = new Map((checks.data ?? []).map((c) => [c.id, c.name]));
  const data = agent.data;
  useTitle(data ? `Agent ${shortId(data.id)}` : 'Agent');
  const crumbs = [{ href: '/private-locations', label: 'Private locations' }];

  if (agent.error && !data) {
    return (
      <>
        <Breadcrumbs items={[...crumbs, { label: 'Agent' }]} />
        <PageHeader title="Agent" />
        <ErrorNotice error={agent.error} />
      </>
    );
  }
  if (!data) return <Loading what="Loading the agent" />;

  return (
    <>
      <Breadcrumbs
        items={[
          ...crumbs,
          ...(data.privateLocation
            ? [
                {
                  href: `/private-locations/${encodeURIComponent(data.privateLocation.id)}`,
                  label: data.privateLocation.name,
                },
              ]
            : []),
          { label: `Agent ${shortId(data.id)}` },
        ]}
      />
      <PageHeader
        title={
          <>
            Agent <code>{shortId(data.id)}</code>
          </>
        }
      >
        <ConnectedBadge connected={data.connected} />
      </PageHeader>
      {agent.error ? <ErrorNotice error={agent.error} title="Could not refresh" /> : null}

      <AgentFacts agent={data} />

      <RunningJobs agent={data} checkName={checkName} />

      <ErrorReports agentId={data.id} count={data.errorReports.count} />
    </>
  );
}

/** A list of short words as chips, or `none` (muted). */
function ChipsOr({ items, none }: { items: readonly string[]; none: string }) {
  return items.length === 0 ? (
    <span class="muted">{none}</span>
  ) : (
    <ul class="misc-chips">
      {items.map((t) => (
        <li key={t}>{t}</li>
      ))}
    </ul>
  );
}

/** What the agent is: id, version, scope, locations, contact, free slots, check types and runtimes. */
function AgentFacts({ agent: data }: { agent: Agent }) {
  return (
    <div class="card">
      <dl class="misc-dl">
        <dt>Id</dt>
        <dd>
          <code>{data.id}</code>
        </dd>
        <dt>Version</dt>
        <dd>{data.version}</dd>
        <dt>Serves</dt>
        <dd>
          <AgentScope agent={data} />
        </dd>
        <dt>Run locations</dt>
        <dd>{data.locations === null ? 'Every data-center location' : data.locations.join(', ') || '—'}</dd>
        <dt>Host</dt>
        <dd>{data.hostName ?? <span class="muted">not reported</span>}</dd>
        <dt>Connected</dt>
        <dd>
          {data.connected
            ? 'Yes: it claimed jobs within the last 35 seconds'
            : data.stoppedAt
              ? 'No: it stopped'
              : 'No: no claim in the last 35 seconds'}
        </dd>
        <dt>First contact</dt>
        <dd>{formatDateTime(data.firstSeenAt)}</dd>
        <dt>Last contact</dt>
        <dd>
          <When iso={data.lastSeenAt} /> ({formatDateTime(data.lastSeenAt)})
        </dd>
        <dt>Free slots</dt>
        <dd>
          {formatSlots(data.freeSlots)}
          <span class="muted"> (uptime: ICMP, DNS, TCP and URL jobs; main: API and browser jobs)</span>
        </dd>
        <dt>Check types</dt>
        <dd>
          <ChipsOr items={data.checkTypes} none="none reported yet" />
        </dd>
        <dt>Runtimes</dt>
        <dd>
          <ChipsOr items={data.runtimes} none="none" />
        </dd>
      </dl>
    </div>
  );
}

/** The jobs the agent holds the lease of. */
function RunningJobs({ agent: data, checkName }: { agent: Agent; checkName: Map<string, string> }) {
  return (
    <section aria-labelledby="agent-jobs">
      <h2 id="agent-jobs">Running jobs ({data.runningJobs.length})</h2>
      {data.runningJobs.length === 0 ? (
        <Empty>No job is running on this agent now. Jobs show here while the agent holds their lease.</Empty>
      ) : (
        <div class="table-wrap">
          <table class="misc-table">
            <caption class="visually-hidden">Jobs running on the agent</caption>
            <thead>
              <tr>
                <th scope="col">Check</th>
                <th scope="col">Type</th>
                <th scope="col">Run location</th>
                <th scope="col">Check session</th>
                <th scope="col">Lease expires</th>
              </tr>
            </thead>
            <tbody>
              {data.runningJobs.map((job) => (
                <tr key={job.jobId}>
                  <th scope="row">
                    <a href={`/checks/${encodeURIComponent(job.checkId)}`}>
                      {checkName.get(job.checkId) ?? <code>{shortId(job.checkId)}</code>}
                    </a>
                  </th>
                  <td>{job.checkType}</td>
                  <td>{job.runLocation}</td>
                  <td>{job.checkSessionId ? <code>{shortId(job.checkSessionId)}</code> : 'scheduled run'}</td>
                  <td>
                    <When iso={job.leaseExpiresAt} never="—" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** The error reports of an agent, newest first, a page at a time; each stack in a disclosure. */
function ErrorReports({ agentId, count }: { agentId: string; count: number }) {
  const [page, setPage] = useState(1);
  const reports = useLoad(
    (signal) => listAgentErrorReports(agentId, { limit: REPORTS_PER_PAGE, page }, signal),
    [agentId, page, count],
  );
  const list = reports.data;
  const more = list !== undefined && list.length === REPORTS_PER_PAGE;

  return (
    <section aria-labelledby="agent-reports">
      <h2 id="agent-reports">Error reports ({count})</h2>
      <p class="muted">
        What the agent reported of its own errors: message, stack and versions; never keys, variables, check
        configuration, URLs, headers or bodies. <code>EXTERNAL_OBSERVABILITY=off</code> stops them.
      </p>
      {reports.error ? <ErrorNotice error={reports.error} /> : null}
      {!list && !reports.error ? <Loading what="Loading error reports" /> : null}
      {list && list.length === 0 ? (
        <Empty>{page === 1 ? 'This agent has reported no error.' : 'No more error reports.'}</Empty>
      ) : null}
      {list && list.length > 0 ? (
        <ol class="agent-reports">
          {list.map((r) => (
            <li key={r.id} class="card">
              <p class="agent-report-head">
                <time dateTime={r.created_at}>{formatDateTime(r.created_at)}</time>
                <span class="muted">
                  {' '}
                  · agent {r.agentVersion} · {r.platform} · runtime {r.runtimeVersion}
                </span>
              </p>
              <p class="agent-report-message">{r.message}</p>
              {r.stack ? (
                <details>
                  <summary>Stack trace</summary>
                  <pre>{r.stack}</pre>
                </details>
              ) : (
                <p class="muted">No stack trace.</p>
              )}
            </li>
          ))}
        </ol>
      ) : null}
      {page > 1 || more ? (
        <nav class="misc-buttons" aria-label="Error report pages">
          <button
            type="button"
            class="button-secondary"
            disabled={page === 1}
            onClick={() => setPage((p) => Math.max(1, p - 1))}
          >
            Newer
          </button>
          <span>Page {page}</span>
          <button
            type="button"
            class="button-secondary"
            disabled={!more}
            onClick={() => setPage((p) => p + 1)}
          >
            Older
          </button>
        </nav>
      ) : null}
    </section>
  );
}
