import type { HttpTimingPhases, HttpTimings } from '../../protocol/http-result.js';
import { roundMs } from '../../common/clock.js';
import type { HopTrace } from './connector.js';

function since(from: number | null, to: number | null): number | null {
  return from === null || to === null ? null : roundMs(to - from);
}

/**
 * The timings of one request (docs/checks.md, "HTTP timing"): cumulative `timings`
 * from the request's start and `timingPhases` durations, in milliseconds, following the
 * definitions of got's timings that curl -w matches: wait = socket, dns = lookup − socket,
 * tcp = connect − lookup, tls = secureConnect − connect, firstByte = response − (secureConnect
 * or connect), download = end − response, total = end. A request that failed has `total` up
 * to `failedAt` and null for the phases it never reached.
 */
export function timingsOf(
  trace: HopTrace,
  secure: boolean,
  failedAt: number,
): { timings: HttpTimings; timingPhases: HttpTimingPhases } {
  const start = trace.startAt;
  const lookupAt = trace.lookupAt;
  const connectedAt = secure ? trace.secureConnectAt : trace.connectAt;
  const timings: HttpTimings = {
    socket: since(start, trace.socketAt),
    lookup: since(start, lookupAt),
    connect: since(start, trace.connectAt),
    secureConnect: secure ? since(start, trace.secureConnectAt) : null,
    response: since(start, trace.responseAt),
    end: since(start, trace.endAt),
  };
  const timingPhases: HttpTimingPhases = {
    wait: since(start, trace.socketAt),
    dns: since(trace.socketAt, lookupAt),
    tcp: since(lookupAt, trace.connectAt),
    tls: secure ? since(trace.connectAt, trace.secureConnectAt) : null,
    firstByte: since(connectedAt, trace.responseAt),
    download: since(trace.responseAt, trace.endAt),
    total: roundMs((trace.endAt ?? failedAt) - start),
  };
  return { timings, timingPhases };
}
