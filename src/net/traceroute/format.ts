import type { RouteTrace } from './trace.js';

/**
 * Renders a route trace as traceroute prints one (numeric, `traceroute -n`), plus a last line
 * telling how it ended:
 *
 * ```
 * traceroute to example.com (192.0.2.7), 30 hops max, icmp probes, raw socket
 *  1  10.0.0.1  0.071 ms  0.035 ms  0.031 ms
 *  2  * * *
 *  3  192.0.2.7  10.112 ms  10.093 ms  10.311 ms
 * reached 192.0.2.7 at hop 3 in 1012.4 ms
 * ```
 *
 * A probe's address is printed when it differs from the previous probe's of the same hop;
 * `*` is a probe without answer; `!H`, `!X`, … follow the RTT of a Destination Unreachable.
 */
export function formatRouteTrace(trace: RouteTrace): string {
  const lines = [
    `traceroute to ${trace.target} (${trace.resolvedIp}), ${trace.maxHops} hops max, ` +
      `${trace.protocol} probes, ${trace.socketType} socket`,
  ];
  for (const hop of trace.hops) {
    let line = `${String(hop.ttl).padStart(2)} `;
    let previous: string | null = null;
    for (const probe of hop.probes) {
      if (probe.address === null || probe.rttMs === null) {
        line += ' *';
        continue;
      }
      if (probe.address !== previous) line += ` ${probe.address}`;
      previous = probe.address;
      line += `  ${probe.rttMs.toFixed(3)} ms`;
      if (probe.annotation !== null) line += ` ${probe.annotation}`;
    }
    lines.push(line);
  }
  const took = `${trace.durationMs.toFixed(1)} ms`;
  if (trace.reached) {
    lines.push(`reached ${trace.resolvedIp} at hop ${trace.hops.length} in ${took}`);
  } else if (trace.sendError !== null) {
    lines.push(`stopped after ${took}: probes could not be sent (${trace.sendError})`);
  } else if (trace.unknownHopsLimit) {
    lines.push(`did not reach ${trace.resolvedIp}: stopped after hops without an answer (${took})`);
  } else if (trace.timedOut) {
    lines.push(`did not reach ${trace.resolvedIp}: the time limit ran out after ${took}`);
  } else {
    lines.push(`did not reach ${trace.resolvedIp} within ${trace.hops.length} hops (${took})`);
  }
  return `${lines.join('\n')}\n`;
}
