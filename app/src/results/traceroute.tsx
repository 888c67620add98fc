import type { CheckResult } from '../api/schemas.js';
import { formatMs } from '../ui/format.js';
import { Facts, Heading, type HeadingLevel, PassMark, ScrollRegion, below } from './text.js';

/** The TRACEROUTE part of a result (docs/checks.md, "TRACEROUTE"). */
export type TraceroutePart = NonNullable<CheckResult['tracerouteCheckResult']>;

/** Why the trace stopped, in words. */
const STOPPED: Record<string, string> = {
  destinationReached: 'the destination answered',
  maxHops: 'the most hops were probed',
  maxUnknownHops: 'too many hops in a row did not answer',
  timeout: 'the time limit ran out',
  unreachable: 'a hop answered that the destination is unreachable',
  sendError: 'probes could not be sent',
};

/**
 * The TRACEROUTE part: the target and its address, whether it was reached and why the trace stopped, the
 * final hop's latency, and one row per hop (address, name, loss, RTT best/avg/worst).
 */
export function TraceroutePartView({ part, level }: { part: TraceroutePart; level: HeadingLevel }) {
  const sub = below(level);
  const response = part.response;
  const latency = part.finalHopLatency;
  return (
    <section class="rv-part">
      <Heading level={level}>Route</Heading>
      <p class="rv-request-line">
        <span class="rv-mono rv-break">{part.request.url}</span>
        {response?.resolvedIp && response.resolvedIp !== part.request.url ? (
          <span class="muted"> ({response.resolvedIp})</span>
        ) : null}
      </p>
      {part.requestError ? <p class="rv-error">{part.requestError}</p> : null}
      <Facts
        facts={[
          {
            term: 'Destination',
            value: <PassMark ok={part.destinationReached} okText="Reached" badText="Not reached" />,
          },
          response?.truncationReason
            ? {
                term: 'Stopped because',
                value: STOPPED[response.truncationReason] ?? response.truncationReason,
              }
            : null,
          { term: 'Hops', value: String(part.totalHops) },
          {
            term: 'Probes',
            value: `${part.request.protocol}${response?.socketType ? ` (${response.socketType} socket)` : ''}`,
          },
          {
            term: 'Final hop latency',
            value:
              latency.avg === null
                ? null
                : `avg ${formatMs(latency.avg)}, min ${formatMs(latency.min ?? 0)}, max ${formatMs(latency.max ?? 0)}`,
          },
          { term: 'Total time', value: formatMs(part.timingPhases.total) },
        ]}
      />
      {response && response.hops.length > 0 ? (
        <>
          <Heading level={sub}>Hops</Heading>
          <ScrollRegion label="The hops of the route, nearest first">
            <table>
              <caption class="visually-hidden">The hops of the route, nearest first</caption>
              <thead>
                <tr>
                  <th scope="col" class="num">
                    Hop
                  </th>
                  <th scope="col">Address</th>
                  <th scope="col">Name</th>
                  <th scope="col" class="num">
                    Loss
                  </th>
                  <th scope="col" class="num">
                    Best
                  </th>
                  <th scope="col" class="num">
                    Avg
                  </th>
                  <th scope="col" class="num">
                    Worst
                  </th>
                </tr>
              </thead>
              <tbody>
                {response.hops.map((hop) => (
                  <tr key={hop.hop_number}>
                    <th scope="row" class="num">
                      {hop.hop_number}
                    </th>
                    <td class="rv-mono rv-break">
                      {hop.main_ip ?? '* (no answer)'}
                      {hop.annotations.length > 0 ? ` ${hop.annotations.join(' ')}` : ''}
                    </td>
                    <td class="rv-break">{hop.main_host || '—'}</td>
                    <td class="num">
                      {hop.loss_percentage}%{' '}
                      <span class="muted">
                        ({hop.received}/{hop.sent})
                      </span>
                    </td>
                    <td class="num">{hop.rtt ? formatMs(hop.rtt.best_ms) : '—'}</td>
                    <td class="num">{hop.rtt ? formatMs(hop.rtt.avg_ms) : '—'}</td>
                    <td class="num">{hop.rtt ? formatMs(hop.rtt.worst_ms) : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        </>
      ) : null}
    </section>
  );
}
