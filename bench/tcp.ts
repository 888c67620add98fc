import { pino } from 'pino';
import { createTcpExecutor } from '../src/checks/tcp/index.js';
import {
  type BenchOptions,
  type BenchReport,
  benchJob,
  measureCurl,
  measureOurs,
  report,
  startLoopbackServer,
} from './url.js';

/**
 * TCP benchmark: checks per second at `concurrency` (default 100) that connect to a loopback
 * echo server in another process, send `PING\r\n`, and read the echo until the server closes
 * (asserting it with RESPONSE_DATA), and memory per concurrent check; then one
 * `curl telnet://` process per check doing the same (stdin `PING\r\n`, exits on the close).
 */
export async function benchTcp(options: BenchOptions = {}): Promise<BenchReport> {
  const settings = { checks: 10_000, concurrency: 100, curlChecks: 300, ...options };
  const fast = await startLoopbackServer('echo');
  const slow = await startLoopbackServer('echo', 300);
  try {
    const executor = createTcpExecutor();
    const log = pino({ level: 'silent' });
    const jobs = [fast, slow].map((server) =>
      benchJob('TCP', {
        hostname: '127.0.0.1',
        port: server.port,
        data: 'PING\r\n',
        ipFamily: 'IPv4',
        assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'PING' }],
      }),
    );
    const ours = await measureOurs('outpost', settings, (isSlow) =>
      executor.run(jobs[isSlow ? 1 : 0]!, { signal: new AbortController().signal, log }),
    );
    const curl = await measureCurl(
      settings,
      (isSlow) => ['-s', '-o', '/dev/null', `telnet://127.0.0.1:${(isSlow ? slow : fast).port}`],
      'PING\r\n',
    );
    return report('TCP checks (connect, send PING, read the echo until the close)', ours, curl);
  } finally {
    await Promise.all([fast.close(), slow.close()]);
  }
}
