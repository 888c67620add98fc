/**
 * `npm run bench [-- name …]`: benchmarks side by side with the peers a user would pick instead
 * (blackbox_exporter, fping, autocannon), printing ratios (design.md §5). Build first
 * (`npm run build`); ICMP needs root or ping_group_range. With no names, all run.
 *
 * Each bench runs under a watchdog: past OUTPOST_BENCH_TIMEOUT_MINUTES (default 15) it prints
 * the bench and the step it hung in, kills every child process the benches started, and exits
 * with 3. Children are killed on any exit too (an error, Ctrl-C).
 *
 * Names: icmp, dns, tcp, url, peers (the four against blackbox_exporter, one table of ratios), api, sandbox, agent-rss, analytics, service-http, queue, trace-scrub, browser, alerting, heartbeats, web-app, status-pages, replicas, scheduler, results-scale, large-account.
 */
import { benchAgentIdleRss } from './agent-rss.js';
import { benchAlerting } from './alerting.js';
import { benchApi } from './api.js';
import { benchBrowser } from './browser.js';
import { benchAnalytics } from './analytics.js';
import { benchDns } from './dns.js';
import { benchHeartbeats } from './heartbeats.js';
import { benchLargeAccount } from './large-account.js';
import { benchPeers } from './peers.js';
import { benchQueue } from './queue.js';
import { benchReplicas } from './replicas.js';
import { benchResultsScale } from './results-scale.js';
import { runIcmpBench } from './icmp.js';
import { benchScheduler } from './scheduler.js';
import { benchSandbox } from './sandbox.js';
import { benchServiceHttp } from './service-http.js';
import { benchStatusPages } from './status-pages.js';
import { benchTcp } from './tcp.js';
import { benchTraceScrub } from './trace-scrub.js';
import { benchUrl } from './url.js';
import { benchStarted, currentBenchPhase, killBenchChildren } from './watchdog.js';
import { benchWebApp, webAppBenchOptions } from './web-app.js';

const BENCHES: Record<string, () => Promise<unknown>> = {
  icmp: () => runIcmpBench(),
  dns: () => benchDns(),
  tcp: () => benchTcp(),
  url: () => benchUrl(),
  peers: () => benchPeers(),
  api: () =>
    benchApi({
      sandbox: async () => {
        const { ScriptSandbox } = await import('../src/sandbox/sandbox.js');
        const sandbox = new ScriptSandbox({ poolSize: 8 });
        await sandbox.warm('2026.04');
        return sandbox;
      },
    }),
  sandbox: () => benchSandbox(),
  'agent-rss': async () => {
    const r = await benchAgentIdleRss();
    console.log(
      `agent idle RSS: ${r.idleRssMiB.toFixed(1)} MiB (peak ${r.peakRssMiB.toFixed(1)} MiB); goal under ${r.goalMiB} MiB: ${r.idleRssMiB < r.goalMiB ? 'met' : 'NOT met'}`,
    );
  },
  analytics: () => benchAnalytics(),
  'service-http': () => benchServiceHttp(),
  queue: () => benchQueue(),
  'trace-scrub': () => benchTraceScrub(),
  browser: () => benchBrowser(),
  alerting: () => benchAlerting(),
  heartbeats: () => benchHeartbeats(),
  'web-app': () => benchWebApp(webAppBenchOptions()),
  'status-pages': () => benchStatusPages(),
  replicas: () => benchReplicas(),
  scheduler: () => benchScheduler(),
  'results-scale': () => benchResultsScale(),
  'large-account': () => benchLargeAccount(),
};

const asked = process.argv.slice(2);
const unknown = asked.filter((n) => !(n in BENCHES));
if (unknown.length > 0) {
  console.error(`unknown bench ${unknown.join(', ')}; choose from ${Object.keys(BENCHES).join(', ')}`);
  process.exit(2);
}
const timeoutMinutes = Number(process.env.OUTPOST_BENCH_TIMEOUT_MINUTES ?? 15);
if (!(timeoutMinutes > 0)) {
  console.error(`OUTPOST_BENCH_TIMEOUT_MINUTES must be a positive number of minutes, not ${timeoutMinutes}`);
  process.exit(2);
}
process.on('exit', killBenchChildren);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    console.error(`bench ${currentBenchPhase()}: stopped by ${signal}`);
    process.exit(130);
  });
}
for (const name of asked.length > 0 ? asked : Object.keys(BENCHES)) {
  console.log(`\n=== ${name} ===`);
  benchStarted(name);
  const watchdog = setTimeout(() => {
    console.error(`bench ${currentBenchPhase()}: no end within ${timeoutMinutes} minutes; stopping`);
    process.exit(3);
  }, timeoutMinutes * 60_000);
  try {
    await BENCHES[name]!();
  } finally {
    clearTimeout(watchdog);
  }
}
