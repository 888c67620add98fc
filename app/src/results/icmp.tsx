import { formatMs, formatPercent } from '../ui/format.js';
import type { IcmpCheckResult } from '../api/schemas.js';
import { Facts, Heading, type HeadingLevel, PassMark, below } from './text.js';

/** One echo request of an ICMP run: `sequence`, `success`, `rtt` (ms, null without a reply), `ttl`. */
type PingReply = IcmpCheckResult['pingResults'][number];

const BAR_WIDTH = 12;
const BAR_GAP = 4;
const CHART_HEIGHT = 80;
const MIN_BAR = 2;

/**
 * Geometry of the round-trip chart: one bar per echo request, its height proportional to its round-trip
 * time against the slowest reply (`maxRtt`, ms); a request without a reply has no bar (`lost`).
 */
function pingBars(pings: readonly PingReply[]): {
  maxRtt: number;
  width: number;
  bars: { x: number; height: number; lost: boolean; ping: PingReply }[];
} {
  const rtts = pings.map((p) => (p.success && typeof p.rtt === 'number' ? p.rtt : 0));
  const maxRtt = Math.max(0, ...rtts);
  const bars = pings.map((ping, i) => {
    const lost = !ping.success || typeof ping.rtt !== 'number';
    const height = lost || maxRtt === 0 ? 0 : Math.max(MIN_BAR, ((ping.rtt ?? 0) / maxRtt) * CHART_HEIGHT);
    return { x: i * (BAR_WIDTH + BAR_GAP), height, lost, ping };
  });
  return { maxRtt, width: Math.max(1, pings.length * (BAR_WIDTH + BAR_GAP) - BAR_GAP), bars };
}

/**
 * Round-trip time of each echo request as a small bar chart (drawn, hidden from screen readers) and
 * the same numbers as a visually hidden table (sequence, round-trip time, TTL, reply or not).
 */
function PingChart({ pings }: { pings: readonly PingReply[] }) {
  const { maxRtt, width, bars } = pingBars(pings);
  const anyLost = bars.some((b) => b.lost);
  return (
    <figure class="rv-ping">
      <div class="rv-ping-chart" aria-hidden="true">
        <span class="rv-ping-axis">{formatMs(maxRtt)}</span>
        <svg
          viewBox={`0 0 ${width} ${CHART_HEIGHT + 14}`}
          width={Math.min(width * 1.5, 720)}
          height={(CHART_HEIGHT + 14) * 1.2}
          preserveAspectRatio="xMinYMax meet"
          focusable="false"
          aria-hidden="true"
        >
          <line class="rv-ping-base" x1="0" x2={width} y1={CHART_HEIGHT} y2={CHART_HEIGHT} />
          {bars.map((b) =>
            b.lost ? (
              <text
                key={b.ping.sequence}
                class="rv-ping-lost"
                x={b.x + BAR_WIDTH / 2}
                y={CHART_HEIGHT - 2}
                text-anchor="middle"
              >
                ✕<title>{`#${b.ping.sequence}: no reply`}</title>
              </text>
            ) : (
              <rect
                key={b.ping.sequence}
                class="rv-ping-bar"
                x={b.x}
                y={CHART_HEIGHT - b.height}
                width={BAR_WIDTH}
                height={b.height}
              >
                <title>{`#${b.ping.sequence}: ${formatMs(b.ping.rtt)}`}</title>
              </rect>
            ),
          )}
          {bars.map((b) => (
            <text
              key={`n${b.ping.sequence}`}
              class="rv-ping-seq"
              x={b.x + BAR_WIDTH / 2}
              y={CHART_HEIGHT + 12}
              text-anchor="middle"
            >
              {b.ping.sequence}
            </text>
          ))}
        </svg>
      </div>
      <figcaption class="muted">
        Round-trip time of each echo request, by sequence number
        {anyLost ? '; ✕ marks a request that got no reply' : ''}.
      </figcaption>
      <table class="visually-hidden">
        <caption>Round-trip time of each echo request</caption>
        <thead>
          <tr>
            <th scope="col">Sequence</th>
            <th scope="col">Round-trip time</th>
            <th scope="col">TTL</th>
            <th scope="col">Reply</th>
          </tr>
        </thead>
        <tbody>
          {pings.map((p) => (
            <tr key={p.sequence}>
              <th scope="row">{p.sequence}</th>
              <td>{formatMs(p.rtt)}</td>
              <td>{p.ttl ?? '—'}</td>
              <td>{p.success ? 'Received' : 'No reply'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}

/** The ICMP part: packets sent and received, loss, latency summary and each echo request. */
export function IcmpPartView({ part, level }: { part: IcmpCheckResult; level: HeadingLevel }) {
  const latency = part.latency ?? { min: null, avg: null, max: null, stdDev: null };
  const pings = part.pingResults ?? [];
  return (
    <section class="rv-part">
      <Heading level={level}>Ping</Heading>
      <div class="grid rv-stats">
        <Stat label="Packets sent" value={String(part.packetsSent)} />
        <Stat label="Packets received" value={String(part.packetsReceived)} />
        <Stat label="Packet loss" value={formatPercent(part.packetLoss, part.packetLoss % 1 === 0 ? 0 : 1)} />
        <Stat label="Average latency" value={formatMs(latency.avg)} />
      </div>
      <Facts
        facts={[
          { term: 'Host', value: <span class="rv-mono rv-break">{part.hostname}</span> },
          { term: 'Resolved address', value: part.resolvedIp },
          { term: 'IP family', value: part.ipFamily },
          { term: 'Name resolution', value: formatMs(part.dnsResolutionTime) },
          { term: 'Packet size', value: `${part.packetSize} bytes` },
          {
            term: 'Socket',
            value:
              part.socketType === 'raw'
                ? 'Raw'
                : part.socketType === 'datagram'
                  ? 'Datagram (unprivileged)'
                  : null,
          },
          { term: 'Latency min', value: formatMs(latency.min) },
          { term: 'Latency max', value: formatMs(latency.max) },
          { term: 'Standard deviation', value: formatMs(latency.stdDev) },
        ]}
      />
      <Heading level={below(level)}>Echo requests</Heading>
      {pings.length > 0 ? <PingChart pings={pings} /> : <p class="muted">No echo request was sent.</p>}
      {part.packetsReceived === 0 && part.packetsSent > 0 ? (
        <p>
          <PassMark ok={false} badText="No echo request got a reply." />
        </p>
      ) : null}
    </section>
  );
}

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div class="card stat">
      <span class="stat-label">{label}</span>
      <span class="stat-value">{value}</span>
    </div>
  );
}
