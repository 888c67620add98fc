/**
 * A check session's results per location: status, summary, and every attempt.
 */
import { ResultView, resultTypeText } from '../../results/view.js';
import { ScrollRegion } from '../../results/text.js';
import { RunStatusBadge } from '../../ui/status.js';
import { formatDateTime, formatMs } from '../../ui/format.js';
import type { SessionResult } from '../../api/schemas.js';
import type { LocationResults } from './state.js';

/** The path of a result's page. */
export function resultPath(checkId: string, resultId: string): string {
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
export function LocationsSummary({
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
export function LocationSection({
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
export function AttemptsTable({
  attempts,
  checkId,
}: {
  attempts: readonly SessionResult[];
  checkId: string;
}) {
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
