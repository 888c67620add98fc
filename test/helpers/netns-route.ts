import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';

let created = 0;

function run(command: string, args: string[], input?: string): string {
  return execFileSync(command, args, { encoding: 'utf8', timeout: 10_000, ...(input ? { input } : {}) });
}

function works(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/** Addresses of one family along a routed test path. */
export type PathAddresses = {
  /** The client's address on the client–router link. */
  client: string;
  /** The router's address on the client–router link: hop 1 of a trace from the client. */
  router: string;
  /** The router's address on the router–target link. */
  routerFar: string;
  /** The target's address: hop 2. */
  target: string;
};

/**
 * A two-hop path made of network namespaces: client ↔ router ↔ target, each link a veth pair
 * with its own subnet, the router forwarding (IPv4 and IPv6) and not rate-limiting the ICMP
 * errors it sends, so every probe of every trace gets its answer. The client is this process's
 * namespace (`clientNamespace` null: only a route to the target's subnet is added here) or a
 * namespace of its own. Every packet to these addresses stays on this machine.
 */
export type RoutedPath = {
  clientNamespace: string | null;
  routerNamespace: string;
  targetNamespace: string;
  ipv4: PathAddresses;
  ipv6: PathAddresses;
  /** Runs a command in a namespace of the path. */
  exec(namespace: string, command: string, args: string[], input?: string): string;
  /** Replaces the router's nftables ruleset by a forward chain holding `rules` (one per line); [] clears it. */
  setRouterForwardRules(rules: string[]): void;
  /**
   * Starts a process in the client namespace (or here), in its own process group; `destroy()`
   * kills the group. `prefix` goes before the command (for example setpriv and its options).
   */
  spawnInClient(command: string, args: string[], prefix?: string[]): ChildProcess;
  /** Kills its processes and removes the namespaces and links. Idempotent. */
  destroy(): void;
};

/** True when no route of this namespace other than the default one matches `prefix` (a.b.c.0/29). */
function subnetFree(prefix: string): boolean {
  return run('ip', ['-4', 'route', 'show', 'match', `${prefix}.0/29`])
    .split('\n')
    .every((line) => line.trim() === '' || line.startsWith('default'));
}

/**
 * Creates a routed path. Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN), iproute2 and nftables.
 * IPv6 addresses are unique local ones (fd00::/8) without duplicate address detection; the
 * function returns once both families carry a ping from the client to the target.
 */
export function createRoutedPath(options: { clientNamespace: boolean }): RoutedPath {
  const id = `${process.pid % 100_000}r${created++}`;
  const routerNamespace = `outpost-${id}-router`;
  const targetNamespace = `outpost-${id}-target`;
  const clientNamespace = options.clientNamespace ? `outpost-${id}-client` : null;
  const links = { client: `op${id}a`, routerNear: `op${id}b`, routerFar: `op${id}c`, target: `op${id}d` };
  let prefix = '';
  for (let attempt = 0; attempt < 20 && prefix === ''; attempt++) {
    const candidate = `10.${randomInt(200, 250)}.${randomInt(0, 256)}`;
    if (subnetFree(candidate)) prefix = candidate;
  }
  if (prefix === '') throw new Error('no free 10.x.y.0/29 subnet for a routed test path');
  const prefix6 = `fd00:${randomInt(0x10000).toString(16)}:${randomInt(0x10000).toString(16)}`;
  const ipv4: PathAddresses = {
    client: `${prefix}.1`,
    router: `${prefix}.2`,
    routerFar: `${prefix}.5`,
    target: `${prefix}.6`,
  };
  const ipv6: PathAddresses = {
    client: `${prefix6}:1::1`,
    router: `${prefix6}:1::2`,
    routerFar: `${prefix6}:2::1`,
    target: `${prefix6}:2::2`,
  };
  const children = new Set<ChildProcess>();
  let destroyed = false;

  const inClient = (args: string[]) => (clientNamespace ? ['-n', clientNamespace, ...args] : args);
  const exec = (namespace: string, command: string, args: string[], input?: string) =>
    run('ip', ['netns', 'exec', namespace, command, ...args], input);
  const execClient = (command: string, args: string[]) =>
    clientNamespace ? exec(clientNamespace, command, args) : run(command, args);

  const destroy = () => {
    if (destroyed) return;
    destroyed = true;
    for (const child of children) {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }
    // Deleting a namespace deletes the veth ends in it, and so their peers.
    for (const namespace of [clientNamespace, routerNamespace, targetNamespace]) {
      if (namespace === null) continue;
      try {
        run('ip', ['netns', 'del', namespace]);
      } catch {}
    }
    if (clientNamespace === null) {
      try {
        run('ip', ['link', 'del', links.client]);
      } catch {}
    }
  };

  try {
    for (const namespace of [clientNamespace, routerNamespace, targetNamespace]) {
      if (namespace === null) continue;
      run('ip', ['netns', 'add', namespace]);
      run('ip', ['-n', namespace, 'link', 'set', 'lo', 'up']);
    }
    run('ip', ['link', 'add', links.client, 'type', 'veth', 'peer', 'name', links.routerNear]);
    if (clientNamespace) run('ip', ['link', 'set', links.client, 'netns', clientNamespace]);
    run('ip', ['link', 'set', links.routerNear, 'netns', routerNamespace]);
    run('ip', [
      '-n',
      routerNamespace,
      'link',
      'add',
      links.routerFar,
      'type',
      'veth',
      'peer',
      'name',
      links.target,
    ]);
    run('ip', ['-n', routerNamespace, 'link', 'set', links.target, 'netns', targetNamespace]);

    run('ip', inClient(['addr', 'add', `${ipv4.client}/30`, 'dev', links.client]));
    run('ip', inClient(['-6', 'addr', 'add', `${ipv6.client}/64`, 'dev', links.client, 'nodad']));
    run('ip', inClient(['link', 'set', links.client, 'up']));
    for (const [link, address4, address6] of [
      [links.routerNear, ipv4.router, ipv6.router],
      [links.routerFar, ipv4.routerFar, ipv6.routerFar],
    ] as const) {
      run('ip', ['-n', routerNamespace, 'addr', 'add', `${address4}/30`, 'dev', link]);
      run('ip', ['-n', routerNamespace, '-6', 'addr', 'add', `${address6}/64`, 'dev', link, 'nodad']);
      run('ip', ['-n', routerNamespace, 'link', 'set', link, 'up']);
    }
    run('ip', ['-n', targetNamespace, 'addr', 'add', `${ipv4.target}/30`, 'dev', links.target]);
    run('ip', [
      '-n',
      targetNamespace,
      '-6',
      'addr',
      'add',
      `${ipv6.target}/64`,
      'dev',
      links.target,
      'nodad',
    ]);
    run('ip', ['-n', targetNamespace, 'link', 'set', links.target, 'up']);

    // The router forwards and answers every probe: no ICMP rate limit, neither per peer (one
    // error a second after a burst of 6) nor for the namespace (1000 a second after a burst of
    // 50), either of which would drop answers when traces follow each other closely.
    const unlimited = [
      'net.ipv4.icmp_ratelimit=0',
      'net.ipv6.icmp.ratelimit=0',
      'net.ipv4.icmp_msgs_per_sec=1000000',
      'net.ipv4.icmp_msgs_burst=1000000',
    ];
    exec(routerNamespace, 'sysctl', [
      '-q',
      '-w',
      'net.ipv4.ip_forward=1',
      'net.ipv6.conf.all.forwarding=1',
      ...unlimited,
    ]);
    exec(targetNamespace, 'sysctl', ['-q', '-w', ...unlimited]);
    run('ip', ['-n', targetNamespace, 'route', 'add', 'default', 'via', ipv4.routerFar]);
    run('ip', ['-n', targetNamespace, '-6', 'route', 'add', 'default', 'via', ipv6.routerFar]);
    if (clientNamespace) {
      run('ip', ['-n', clientNamespace, 'route', 'add', 'default', 'via', ipv4.router]);
      run('ip', ['-n', clientNamespace, '-6', 'route', 'add', 'default', 'via', ipv6.router]);
    } else {
      // Here only the target's own subnets go to the router.
      run('ip', ['route', 'add', `${prefix}.4/30`, 'via', ipv4.router, 'dev', links.client]);
      run('ip', ['-6', 'route', 'add', `${prefix6}:2::/64`, 'via', ipv6.router, 'dev', links.client]);
    }
    for (const target of [ipv4.target, ipv6.target]) {
      const route = execClient('ip', ['route', 'get', target]);
      if (!route.includes(`dev ${links.client} `))
        throw new Error(`${target} is not routed via ${links.client}: ${route}`);
    }
    // IPv6 needs a moment (router link-local addresses, neighbour discovery) before it forwards.
    const pings = (args: string[]) =>
      clientNamespace
        ? works('ip', ['netns', 'exec', clientNamespace, 'ping', ...args])
        : works('ping', args);
    const until = performance.now() + 5000;
    while (!pings(['-6', '-c', '1', '-W', '1', ipv6.target])) {
      if (performance.now() > until)
        throw new Error(`${ipv6.target} does not answer through the test router`);
    }
    if (!pings(['-c', '1', '-W', '1', ipv4.target])) {
      throw new Error(`${ipv4.target} does not answer through the test router`);
    }
  } catch (err) {
    destroy();
    throw err;
  }

  return {
    clientNamespace,
    routerNamespace,
    targetNamespace,
    ipv4,
    ipv6,
    exec,
    setRouterForwardRules(rules) {
      const ruleset = [
        'flush ruleset',
        'table inet outpost {',
        '  chain forward {',
        '    type filter hook forward priority 0; policy accept;',
        ...rules.map((rule) => `    ${rule};`),
        '  }',
        '}',
        '',
      ].join('\n');
      exec(routerNamespace, 'nft', ['-f', '-'], ruleset);
    },
    spawnInClient(command, args, prefix = []) {
      const argv = [
        ...(clientNamespace ? ['ip', 'netns', 'exec', clientNamespace] : []),
        ...prefix,
        command,
        ...args,
      ];
      const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      children.add(child);
      child.once('exit', () => children.delete(child));
      return child;
    },
    destroy,
  };
}
