import { Value } from '@sinclair/typebox/value';
import { pino } from 'pino';
import { createApiExecutor } from '../src/checks/api/index.js';
import type { ScriptRunner } from '../src/sandbox/types.js';
import { ApiRequestBodySchema } from '../src/service/checks/types/api.js';
import {
  type BenchMeasurement,
  type BenchOptions,
  type BenchReport,
  benchJob,
  measureBlackboxPeer,
  measureOurs,
  report,
  startLoopbackServer,
} from './url.js';
import { benchPhase } from './watchdog.js';

/**
 * blackbox_exporter's module for the API bench: the same GET with the accept header, status 200
 * and `"status":"ok"` in the body (its nearest to our JSONPath assertions: it has no JSONPath,
 * so the prices are not checked on its side), IPv4, 30 s.
 */
const API_MODULE = `  api_get:
    prober: http
    timeout: 30s
    http:
      method: GET
      headers:
        accept: application/json
      valid_status_codes: [200]
      fail_if_body_not_matches_regexp:
        - '"status":"ok"'
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
      follow_redirects: true
`;

const ASSERTIONS = [
  { source: 'STATUS_CODE', comparison: 'EQUALS', target: '200', property: '', regex: null },
  { source: 'JSON_BODY', comparison: 'EQUALS', target: 'ok', property: '$.status', regex: null },
  { source: 'JSON_BODY', comparison: 'LESS_THAN', target: '100', property: '$.items[*].price', regex: null },
];

/** The request of the benchmark's check: the service's defaults plus an accept header and the assertions. */
const apiRequest = (port: number) =>
  Value.Default(ApiRequestBodySchema, {
    url: `http://127.0.0.1:${port}/`,
    headers: [{ key: 'accept', value: 'application/json' }],
    assertions: ASSERTIONS,
  }) as Record<string, unknown>;

/** The setup script of the second scenario: sets a header, as a typical auth-token setup does. */
const SETUP_SCRIPT = "request.headers['x-bench'] = process.env.CHECK_RUN_ID;";

/**
 * API benchmark: API checks per second at `concurrency` (default 100) against a loopback JSON
 * API in another process (a new connection per check) with three assertions (status code,
 * `$.status`, every `$.items[*].price`), memory per concurrent check; the same with a setup
 * script run in the sandbox (`sandbox`, when given: src/sandbox); and blackbox_exporter's http
 * prober as the peer at the same concurrency (status 200 and a body regexp for `"status":"ok"`:
 * it has no JSONPath), driven over kept-alive connections to its /probe.
 */
export async function benchApi(
  options: BenchOptions & { sandbox?: () => Promise<ScriptRunner>; scriptChecks?: number } = {},
): Promise<{ plain: BenchReport; withSetup: BenchMeasurement | null; setupRatio: number | null }> {
  const settings = { checks: 10_000, concurrency: 100, ...options };
  const fast = await startLoopbackServer('json');
  const slow = await startLoopbackServer('json', 300);
  const log = pino({ level: 'silent' });
  // A signal per run, as the dispatcher gives each job its own.
  const context = () => ({ signal: new AbortController().signal, log });
  try {
    const executor = createApiExecutor();
    const jobs = [fast, slow].map((server) => benchJob('API', apiRequest(server.port)));
    benchPhase('outpost API checks');
    const ours = await measureOurs('outpost API', settings, (isSlow) =>
      executor.run(jobs[isSlow ? 1 : 0]!, context()),
    );
    benchPhase('blackbox_exporter API probes');
    const peer = await measureBlackboxPeer(
      settings,
      API_MODULE,
      'api_get',
      `http://127.0.0.1:${fast.port}/`,
      `http://127.0.0.1:${slow.port}/`,
    );
    const plain = report(
      'API checks (GET a JSON API on 127.0.0.1, three assertions, a new connection each)',
      ours,
      peer,
    );

    let withSetup: BenchMeasurement | null = null;
    if (options.sandbox) {
      const scripts = await options.sandbox();
      try {
        const scripted = createApiExecutor({ scripts });
        const setupJobs = jobs.map((job) => ({
          ...job,
          setupScript: {
            source: 'LOCAL' as const,
            snippetId: null,
            name: 'setup script',
            code: SETUP_SCRIPT,
          },
        }));
        const scriptChecks = options.scriptChecks ?? 1000;
        benchPhase('outpost API checks with a setup script');
        withSetup = await measureOurs(
          'outpost API + setup script',
          { ...settings, checks: scriptChecks },
          (isSlow) => scripted.run(setupJobs[isSlow ? 1 : 0]!, context()),
        );
        report('API checks with a setup script (warm sandboxed processes of the account)', withSetup, peer);
        const started = (scripts as { processesStarted?: number }).processesStarted;
        if (started !== undefined)
          console.log(`script processes started: ${started} for ${scriptChecks} scripts`);
      } finally {
        await scripts.close();
      }
    }
    // Goal: a setup script costs at most half of the throughput of a plain API check.
    const setupRatio = withSetup === null ? null : withSetup.checksPerSecond / plain.ours.checksPerSecond;
    if (setupRatio !== null) {
      console.log(
        `API checks with a setup script / plain API checks: ${setupRatio.toFixed(2)}× (${withSetup?.checksPerSecond.toFixed(0)} / ${plain.ours.checksPerSecond.toFixed(0)} checks/s); goal ≥ 0.5×: ${setupRatio >= 0.5 ? 'met' : 'NOT met'}`,
      );
    }
    return { plain, withSetup, setupRatio };
  } finally {
    await Promise.all([fast.close(), slow.close()]);
  }
}
