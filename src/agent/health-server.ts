import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JobClass } from '../protocol/index.js';
import type { Logger } from '../common/logger.js';

/** Lifecycle of the agent as probes see it: `starting` until the first successful claim. */
export type AgentStatus = 'starting' | 'ready' | 'draining';

/** The body of `GET /health`. Times are ISO 8601. */
export type HealthSnapshot = {
  status: AgentStatus;
  version: string;
  /** Jobs running or queued, all classes. */
  runningJobs: number;
  freeSlots: Record<JobClass, number>;
  /** End of the last claim that succeeded; null before the first. */
  lastSuccessfulPollAt: string | null;
  startedAt: string;
  /**
   * Browser runtimes of an agent that runs browser checks: each runtime's availability (a runtime
   * that failed its start-up compatibility check is unavailable, with the reason), its browser
   * version, running and waiting checks and the warm browsers' memory (PSS, bytes). Absent without
   * a browser.
   */
  browsers?: unknown;
  /**
   * Whether user code (API scripts, browser and multi-step scripts, check suites) runs apart from
   * the agent, as run users (docs/security.md): `isolated` with the `mode` (`root`, or
   * `capabilities` for a non-root agent holding CAP_SETUID and the rest), or not, with the reason
   * such checks are refused. Absent on the uptime profile, which runs no user code.
   */
  userCode?: UserCodeStatus;
};

/** The `userCode` part of `GET /health`. */
export type UserCodeStatus =
  | { isolated: true; mode: 'root' | 'capabilities' }
  | { isolated: false; reason: string };

/** Where the health server listens unless told otherwise: loopback only, like the service (`HOST`). */
export const DEFAULT_HEALTH_HOST = '127.0.0.1';

/** Options of {@link startHealthServer}. */
export type HealthServerOptions = {
  /** TCP port; 0 binds an ephemeral one (read it from the returned `port`). */
  port: number;
  /**
   * Address to bind; default `127.0.0.1`. The agent passes `AGENT_HEALTH_HOST` (default `127.0.0.1`); the
   * images and the Kubernetes manifest set `0.0.0.0`, because the kubelet's probes come from outside the pod.
   */
  host?: string;
  /** Read on every request. */
  snapshot: () => HealthSnapshot;
  /** Serves `GET /metrics` when given (a prom-client registry fits). */
  metrics?: { contentType: string; metrics(): Promise<string> };
  logger: Logger;
};

/** A started health server. */
export type HealthServer = {
  /** The bound port (the ephemeral one when asked for 0). */
  readonly port: number;
  /** Stops accepting and closes idle and open connections. Idempotent. */
  close(): Promise<void>;
};

function send(
  res: ServerResponse,
  statusCode: number,
  body: string,
  contentType = 'text/plain; charset=utf-8',
): void {
  res.writeHead(statusCode, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(body);
}

/**
 * Starts the agent's health server (docs/api.md, "Private-location agent health endpoints"):
 * - `GET /-/readiness`: 200 while `status` is `ready`, 503 while `starting` or `draining`;
 * - `GET /-/liveness`: 200 while the event loop answers;
 * - `GET /health`: 200 with the {@link HealthSnapshot} as JSON;
 * - `GET /metrics`: Prometheus text when `metrics` is given; 404 otherwise.
 * HEAD is accepted wherever GET is.
 *
 * @throws the listen error (EADDRINUSE, EACCES) when the port cannot be bound.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const log = options.logger;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return send(res, 405, 'method not allowed\n');
    }
    switch (path) {
      case '/-/readiness': {
        const { status } = options.snapshot();
        return status === 'ready' ? send(res, 200, 'ok\n') : send(res, 503, `${status}\n`);
      }
      case '/-/liveness':
        return send(res, 200, 'ok\n');
      case '/health':
        return send(res, 200, JSON.stringify(options.snapshot()), 'application/json; charset=utf-8');
      case '/metrics': {
        const { metrics } = options;
        if (metrics === undefined) return send(res, 404, 'not found\n');
        metrics.metrics().then(
          (text) => send(res, 200, text, metrics.contentType),
          (err: unknown) => {
            log.warn({ err }, 'metrics collection failed');
            send(res, 500, 'metrics collection failed\n');
          },
        );
        return;
      }
      default:
        return send(res, 404, 'not found\n');
    }
  });
  // Probes are short; do not let a half-open connection hold shutdown.
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const onListening = () => {
      server.off('error', reject);
      resolve();
    };
    server.listen(options.port, options.host ?? DEFAULT_HEALTH_HOST, onListening);
  });
  server.on('error', (err) => log.error({ err }, 'health server error'));
  const port = (server.address() as AddressInfo).port;
  log.info({ port, host: options.host ?? DEFAULT_HEALTH_HOST }, 'health server listening');

  let closing: Promise<void> | undefined;
  return {
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
