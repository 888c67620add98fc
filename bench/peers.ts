/**
 * `npm run bench -- peers`: Outpost's probes side by side with the prober most self-hosters run instead,
 * Prometheus blackbox_exporter (Debian's `prometheus-blackbox-exporter`), on the same work: HTTP (the URL
 * bench's GETs), TCP (connect, send, expect), DNS (an A query over UDP) and ICMP (one echo request per check,
 * blackbox_exporter's probe), each at the same concurrency, against the same loopback servers and targets.
 * blackbox_exporter's probes are driven through its `/probe` endpoint over kept-alive connections and only its
 * own process's CPU is counted; ours is our whole process's. Each protocol's own bench prints its details
 * (settings, memory, percentiles); this one ends with one table of the ratios: throughput ours / its, CPU per
 * check its / ours (> 1: we do better). Without blackbox_exporter it says what to install and measures nothing.
 */
import { BLACKBOX_MISSING, blackboxInstalled } from './blackbox.js';
import { benchDns } from './dns.js';
import { DEFAULT_SCENARIOS, loopbackTargets, measureBlackboxIcmp, measureExecutor } from './icmp.js';
import { benchTcp } from './tcp.js';
import { benchUrl } from './url.js';
import { benchPhase, loadAverageLine } from './watchdog.js';

/** One protocol's comparison: checks per second and CPU per check of each side, and the ratios (> 1: ours better). */
export type PeerRow = {
  protocol: string;
  concurrency: number;
  oursPerSecond: number;
  theirsPerSecond: number;
  oursCpuMsPerCheck: number;
  theirsCpuMsPerCheck: number;
  throughputRatio: number;
  cpuRatio: number;
};

/** A side of a comparison: successful checks per second, and CPU per check, ms. */
type Side = { perSecond: number; cpuMsPerCheck: number };

function row(protocol: string, concurrency: number, ours: Side, theirs: Side): PeerRow {
  return {
    protocol,
    concurrency,
    oursPerSecond: ours.perSecond,
    theirsPerSecond: theirs.perSecond,
    oursCpuMsPerCheck: ours.cpuMsPerCheck,
    theirsCpuMsPerCheck: theirs.cpuMsPerCheck,
    throughputRatio: ours.perSecond / theirs.perSecond,
    cpuRatio: theirs.cpuMsPerCheck / ours.cpuMsPerCheck,
  };
}

/** The side of a URL or TCP bench measurement. */
function sideOf(m: { checksPerSecond: number; cpuSeconds: number; checks: number }): Side {
  return { perSecond: m.checksPerSecond, cpuMsPerCheck: (m.cpuSeconds * 1000) / m.checks };
}

/** Runs the four comparisons and prints their ratios; an empty list when blackbox_exporter is missing. */
export async function benchPeers(): Promise<PeerRow[]> {
  if (!blackboxInstalled()) {
    console.log(BLACKBOX_MISSING);
    return [];
  }
  const rows: PeerRow[] = [];
  benchPhase('peers: HTTP');
  const http = await benchUrl();
  if (http.peer !== null) {
    rows.push(row('HTTP', http.ours.concurrency, sideOf(http.ours), sideOf(http.peer)));
  }
  benchPhase('peers: TCP');
  const tcp = await benchTcp();
  if (tcp.peer !== null) {
    rows.push(row('TCP', tcp.ours.concurrency, sideOf(tcp.ours), sideOf(tcp.peer)));
  }
  benchPhase('peers: DNS');
  const dns = await benchDns();
  if (dns.blackbox !== null) {
    const { outpost, blackbox } = dns;
    rows.push(
      row(
        'DNS',
        dns.concurrency,
        { perSecond: outpost.checksPerSecond, cpuMsPerCheck: outpost.cpuPerCheckMs },
        { perSecond: blackbox.checksPerSecond, cpuMsPerCheck: blackbox.cpuPerCheckMs },
      ),
    );
  }
  // blackbox_exporter's icmp prober sends one echo request per probe: the ICMP bench's scenario of that work.
  const scenario = DEFAULT_SCENARIOS.find((s) => s.blackbox === true && s.count === 1);
  if (scenario !== undefined) {
    const targets = loopbackTargets(1000);
    benchPhase('peers: ICMP, outpost');
    // measureExecutor makes its own unmeasured passes first (WARM_PASSES), as in the ICMP bench.
    const ours = await measureExecutor(targets, 1, scenario);
    benchPhase('peers: ICMP, blackbox_exporter');
    const theirs = await measureBlackboxIcmp(targets, scenario);
    if (theirs !== null) {
      rows.push(
        row(
          'ICMP',
          scenario.concurrency,
          { perSecond: ours.checksPerSecond, cpuMsPerCheck: (ours.cpuSeconds * 1000) / targets.length },
          { perSecond: theirs.checksPerSecond, cpuMsPerCheck: (theirs.cpuSeconds * 1000) / targets.length },
        ),
      );
    }
  }
  console.log('\nOutpost vs blackbox_exporter on the same work (> 1: we do better)');
  console.log(
    `${'protocol'.padEnd(9)}${'in flight'.padStart(10)}${'ours/s'.padStart(10)}${'its/s'.padStart(10)}` +
      `${'throughput ×'.padStart(14)}${'ours CPU ms'.padStart(13)}${'its CPU ms'.padStart(12)}${'CPU ×'.padStart(8)}`,
  );
  for (const r of rows) {
    console.log(
      `${r.protocol.padEnd(9)}${String(r.concurrency).padStart(10)}${r.oursPerSecond.toFixed(0).padStart(10)}` +
        `${r.theirsPerSecond.toFixed(0).padStart(10)}${r.throughputRatio.toFixed(2).padStart(14)}` +
        `${r.oursCpuMsPerCheck.toFixed(3).padStart(13)}${r.theirsCpuMsPerCheck.toFixed(3).padStart(12)}` +
        `${r.cpuRatio.toFixed(2).padStart(8)}`,
    );
  }
  console.log("CPU ms: per check; ours is our whole process, its blackbox_exporter's process.");
  console.log(loadAverageLine());
  return rows;
}
