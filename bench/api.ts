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
  measureCurl,
  measureOurs,
  report,
  startLoopbackServer,
} from './url.js';

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
 * script run in the sandbox (`sandbox`, when given: src/sandbox); and one curl per check as the
 * reference (curl only fetches: it asserts nothing, so it is the floor of the work).
 */
export async function benchApi(
  options: BenchOptions & { sandbox?: () => Promise<ScriptRunner>; scriptChecks?: number } = {},
): Promise<{ plain: BenchReport; withSetup: BenchMeasurement | null }> {
  const settings = { checks: 10_000, concurrency: 100, curlChecks: 300, ...options };
  const fast = await startLoopbackServer('json');
  const slow = await startLoopbackServer('json', 300);
  const log = pino({ level: 'silent' });
  // A signal per run, as the dispatcher gives each job its own.
  const context = () => ({ signal: new AbortController().signal, log });
  try {
    const executor = createApiExecutor();
    const jobs = [fast, slow].map((server) => benchJob('API', apiRequest(server.port)));
    const ours = await measureOurs('outpost API', settings, (isSlow) =>
      executor.run(jobs[isSlow ? 1 : 0]!, context()),
    );
    const curl = await measureCurl(settings, (isSlow) => [
      '-s',
      '-o',
      '/dev/null',
      '--fail',
      `http://127.0.0.1:${(isSlow ? slow : fast).port}/`,
    ]);
    const plain = report(
      'API checks (GET a JSON API on 127.0.0.1, three assertions, a new connection each)',
      ours,
      curl,
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
        withSetup = await measureOurs(
          'outpost API + setup script',
          { ...settings, checks: scriptChecks },
          (isSlow) => scripted.run(setupJobs[isSlow ? 1 : 0]!, context()),
        );
        report('API checks with a setup script (one sandboxed child process per script)', withSetup, curl);
      } finally {
        await scripts.close();
      }
    }
    return { plain, withSetup };
  } finally {
    await Promise.all([fast.close(), slow.close()]);
  }
}
