import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A layer-4 load balancer on 127.0.0.1 for the replica tests, doing what a TCP proxy in front of service
 * replicas does (HAProxy in `mode tcp`, a Kubernetes Service): each new client connection goes to the next
 * upstream in turn; an upstream that refuses the connection is skipped and the next one tried (HAProxy's
 * `option redispatch`); when either side closes or resets, the other is closed too. Nothing above TCP is
 * read, so keep-alive connections stay on the upstream they were given, as they do behind a real balancer.
 */
export type TcpBalancer = {
  /** `http://127.0.0.1:{port}`: where agents and clients are pointed. */
  url: string;
  /** The upstream ports, in turn order; replace to add or remove replicas (new connections only). */
  upstreams: number[];
  /** Client connections open now, by the upstream port they were given. */
  openByUpstream(): Map<number, number>;
  close(): Promise<void>;
};

/**
 * Active health checks, as HAProxy's `option httpchk GET {path}` with `check inter {intervalMs} fall 2 rise 1`:
 * each upstream's `path` is fetched every `intervalMs` with a timeout of the same length; two failures in a
 * row take it out of the turn for new connections, one success brings it back.
 */
export type HealthChecks = { path: string; intervalMs: number };

/** Starts a balancer over `upstreams` (ports on 127.0.0.1), with active health checks when `health` is given. */
export async function startTcpBalancer(upstreams: number[], health?: HealthChecks): Promise<TcpBalancer> {
  const open = new Map<Socket, number>();
  const failures = new Map<number, number>();
  let turn = 0;
  const isUp = (port: number) => (failures.get(port) ?? 0) < 2;
  const balancer: TcpBalancer = {
    url: '',
    upstreams: [...upstreams],
    openByUpstream() {
      const counts = new Map<number, number>();
      for (const port of open.values()) counts.set(port, (counts.get(port) ?? 0) + 1);
      return counts;
    },
    close: async () => {
      clearInterval(checker);
      await closeServer(server, open);
    },
  };
  const checker = setInterval(() => {
    if (!health) return;
    for (const port of balancer.upstreams) {
      fetch(`http://127.0.0.1:${port}${health.path}`, { signal: AbortSignal.timeout(health.intervalMs) })
        .then((res) => res.ok)
        .catch(() => false)
        .then((ok) => failures.set(port, ok ? 0 : (failures.get(port) ?? 0) + 1));
    }
  }, health?.intervalMs ?? 60_000);
  checker.unref();

  const connect = (client: Socket, tried: number) => {
    const up = balancer.upstreams.filter(isUp);
    // With every upstream down, try them all rather than none.
    const ports = up.length > 0 ? up : balancer.upstreams;
    if (tried >= ports.length) {
      client.destroy();
      return;
    }
    const port = ports[turn++ % ports.length]!;
    const upstream = createConnection({ host: '127.0.0.1', port });
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      open.set(client, port);
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => {
        open.delete(client);
        upstream.destroy();
      });
      client.resume();
    });
    upstream.on('error', () => {
      if (!connected) connect(client, tried + 1);
    });
    upstream.on('close', () => {
      if (connected) client.destroy();
    });
  };

  const server = createServer({ pauseOnConnect: true }, (client) => {
    client.on('error', () => {});
    connect(client, 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  balancer.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return balancer;
}

async function closeServer(server: Server, open: Map<Socket, number>): Promise<void> {
  for (const socket of open.keys()) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
