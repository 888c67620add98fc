import { describe, expect, it } from 'vitest';
import { type HopTrace, startTrace, timingsOf } from '../../../src/net/http/index.js';

function trace(times: Partial<HopTrace>): HopTrace {
  return { ...startTrace(), startAt: 1000, ...times };
}

describe('timingsOf', () => {
  it('gives cumulative timings and phases of an https request', () => {
    const t = trace({
      socketAt: 1000.5,
      lookupAt: 1002,
      connectAt: 1003,
      secureConnectAt: 1010,
      responseAt: 1090,
      endAt: 1095,
    });

    expect(timingsOf(t, true, 2000)).toEqual({
      timings: { socket: 0.5, lookup: 2, connect: 3, secureConnect: 10, response: 90, end: 95 },
      timingPhases: { wait: 0.5, dns: 1.5, tcp: 1, tls: 7, firstByte: 80, download: 5, total: 95 },
    });
  });

  it('has no TLS over http: firstByte counts from connect', () => {
    const t = trace({ socketAt: 1000, lookupAt: 1000, connectAt: 1001, responseAt: 1081, endAt: 1081.25 });

    const { timings, timingPhases } = timingsOf(t, false, 2000);

    expect(timings.secureConnect).toBeNull();
    expect(timingPhases).toEqual({
      wait: 0,
      dns: 0,
      tcp: 1,
      tls: null,
      firstByte: 80,
      download: 0.25,
      total: 81.25,
    });
  });

  it('leaves the phases a failed request never reached null and counts total to the failure', () => {
    const t = trace({ socketAt: 1000.1, lookupAt: 1000.2 });

    const { timings, timingPhases } = timingsOf(t, true, 1900.2);

    expect(timings).toEqual({
      socket: 0.1,
      lookup: 0.2,
      connect: null,
      secureConnect: null,
      response: null,
      end: null,
    });
    expect(timingPhases).toEqual({
      wait: 0.1,
      dns: 0.1,
      tcp: null,
      tls: null,
      firstByte: null,
      download: null,
      total: 900.2,
    });
  });
});
