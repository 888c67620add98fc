/**
 * `npm run bench [-- name …]`: benchmarks side by side with the reference tools
 * (fping, dig, curl, autocannon), printing ratios (design.md §5). Build first
 * (`npm run build`); ICMP needs root or ping_group_range. With no names, all run.
 *
 * Names: icmp, dns, tcp, url, api, sandbox, agent-rss, analytics, service-http, queue, trace-scrub, browser, alerting, heartbeats, web-app, status-pages, replicas, scheduler, results-scale, large-account.
 */
import { benchAgentIdleRss } from './agent-rss.js';
import { benchAlerting } from './alerting.js';
import { benchApi } from './api.js';
import { benchBrowser } from './browser.js';
import { benchAnalytics } from './analytics.js';
import { benchDns } from './dns.js';
import { benchHeartbeats } from './heartbeats.js';
import { benchLargeAccount } from './large-account.js';
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
import { benchWebApp, webAppBenchOptions } from './web-app.js';

const BENCHES: Record<string, () => Promise<unknown>> = {
  icmp: () => runIcmpBench(),
  dns: () => benchDns(),
  tcp: () => benchTcp(),
  url: () => benchUrl(),
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
for (const name of asked.length > 0 ? asked : Object.keys(BENCHES)) {
  console.log(`\n=== ${name} ===`);
  await BENCHES[name]!();
}
