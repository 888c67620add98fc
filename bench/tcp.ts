import { pino } from 'pino';
import { createTcpExecutor } from '../src/checks/tcp/index.js';
import {
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
 * blackbox_exporter's module for the TCP bench: connect over IPv4, send `PING\r\n` (it adds
 * the `\n` to what `send` says), expect a line with PING, 30 s as our job's timeout.
 */
const TCP_MODULE = `  tcp_ping:
    prober: tcp
    timeout: 30s
    tcp:
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
      query_response:
        - send: "PING\\r"
        - expect: "PING"
`;

/**
 * TCP benchmark: checks per second at `concurrency` (default 100) that connect to a loopback
 * echo server in another process, send `PING\r\n`, and read the echo until the server closes
 * (asserting it with RESPONSE_DATA), CPU and memory per concurrent check; then
 * blackbox_exporter's tcp prober doing the same at the same concurrency (send `PING\r\n`,
 * expect the PING line), driven over kept-alive connections to its /probe.
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
    benchPhase('outpost TCP checks');
    const ours = await measureOurs('outpost', settings, (isSlow) =>
      executor.run(jobs[isSlow ? 1 : 0]!, { signal: new AbortController().signal, log }),
    );
    benchPhase('blackbox_exporter tcp probes');
    const peer = await measureBlackboxPeer(
      settings,
      TCP_MODULE,
      'tcp_ping',
      `127.0.0.1:${fast.port}`,
      `127.0.0.1:${slow.port}`,
    );
    return report('TCP checks (connect, send PING, read the echo until the close)', ours, peer);
  } finally {
    await Promise.all([fast.close(), slow.close()]);
  }
}
