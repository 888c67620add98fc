import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

let created = 0;

function run(command: string, args: string[], input?: string): string {
  return execFileSync(command, args, { encoding: 'utf8', timeout: 10_000, ...(input ? { input } : {}) });
}

/**
 * A test host: a network namespace joined to this one by a veth pair, with a private /30
 * that exists only on that link. `hostAddress` is ours, `peerAddress` the namespace's.
 * Every packet a test sends to `peerAddress` stays on this machine.
 */
export type TestHost = {
  namespace: string;
  hostAddress: string;
  peerAddress: string;
  /** Runs a command inside the namespace. */
  exec(command: string, args: string[], input?: string): string;
  /** Replaces the namespace's nftables ruleset by an input chain holding `rules` (one per line). */
  setInputRules(rules: string[]): void;
  /**
   * Writes /etc/netns/<namespace>/<name>: `ip netns exec` bind-mounts it over /etc/<name>
   * (hosts, resolv.conf) for processes started in the namespace.
   */
  writeEtcFile(name: string, content: string): void;
  /** Starts a process inside the namespace, in its own process group; `destroy()` kills the group. */
  spawn(command: string, args: string[]): ChildProcess;
  /** Kills its processes and removes the namespace and the veth pair. Idempotent. */
  destroy(): void;
};

/** True when `subnet` (a.b.c.d/30) is not on any interface or route of this namespace. */
function subnetFree(prefix: string): boolean {
  return run('ip', ['-4', 'route', 'show', 'match', `${prefix}.0/30`])
    .split('\n')
    .every((line) => {
      // Only the default route may match; anything more specific means the subnet is taken.
      return line.trim() === '' || line.startsWith('default');
    });
}

/** Creates a test host. Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN), iproute2 and nftables. */
export function createTestHost(): TestHost {
  const id = `${process.pid % 100_000}x${created++}`;
  const namespace = `outpost-${id}`;
  const hostLink = `op${id}h`;
  const peerLink = `op${id}p`;
  let prefix = '';
  for (let attempt = 0; attempt < 20 && prefix === ''; attempt++) {
    const candidate = `10.${randomInt(200, 250)}.${randomInt(0, 256)}`;
    if (subnetFree(candidate)) prefix = candidate;
  }
  if (prefix === '') throw new Error('no free 10.x.y.0/30 subnet for a test host');
  const hostAddress = `${prefix}.1`;
  const peerAddress = `${prefix}.2`;
  const children = new Set<ChildProcess>();
  const etcDirectory = `/etc/netns/${namespace}`;
  let destroyed = false;

  const destroy = () => {
    if (destroyed) return;
    destroyed = true;
    // Each child leads its own process group: tsx runs node as a grandchild.
    for (const child of children) {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }
    rmSync(etcDirectory, { recursive: true, force: true });
    // Deleting the namespace removes the peer end, which removes the pair.
    try {
      run('ip', ['netns', 'del', namespace]);
    } catch {}
    try {
      run('ip', ['link', 'del', hostLink]);
    } catch {}
  };

  try {
    run('ip', ['netns', 'add', namespace]);
    run('ip', ['link', 'add', hostLink, 'type', 'veth', 'peer', 'name', peerLink]);
    run('ip', ['link', 'set', peerLink, 'netns', namespace]);
    run('ip', ['addr', 'add', `${hostAddress}/30`, 'dev', hostLink]);
    run('ip', ['link', 'set', hostLink, 'up']);
    run('ip', ['-n', namespace, 'addr', 'add', `${peerAddress}/30`, 'dev', peerLink]);
    run('ip', ['-n', namespace, 'link', 'set', peerLink, 'up']);
    run('ip', ['-n', namespace, 'link', 'set', 'lo', 'up']);
    // Never send a packet anywhere else: the peer must be reached through our veth only.
    const route = run('ip', ['-4', 'route', 'get', peerAddress]);
    if (!route.includes(`dev ${hostLink} `))
      throw new Error(`${peerAddress} is not routed via ${hostLink}: ${route}`);
  } catch (err) {
    destroy();
    throw err;
  }

  const exec = (command: string, args: string[], input?: string) =>
    run('ip', ['netns', 'exec', namespace, command, ...args], input);

  return {
    namespace,
    hostAddress,
    peerAddress,
    exec,
    setInputRules(rules) {
      const ruleset = [
        'flush ruleset',
        'table ip outpost {',
        '  chain input {',
        '    type filter hook input priority 0; policy accept;',
        ...rules.map((rule) => `    ${rule};`),
        '  }',
        '}',
        '',
      ].join('\n');
      exec('nft', ['-f', '-'], ruleset);
    },
    writeEtcFile(name, content) {
      mkdirSync(etcDirectory, { recursive: true });
      writeFileSync(join(etcDirectory, name), content);
    },
    spawn(command, args) {
      const child = spawn('ip', ['netns', 'exec', namespace, command, ...args], {
        stdio: ['ignore', 'pipe', 'inherit'],
        detached: true,
      });
      children.add(child);
      child.once('exit', () => children.delete(child));
      return child;
    },
    destroy,
  };
}

/**
 * Starts test/helpers/icmp-responder.ts in the host's namespace with the kernel's echo
 * replies turned off there: each echo request gets its reply after the next of `delaysMs`
 * (cycled). `options` are the responder's (--delay-from-size=BASE, --duplicate-after=MS).
 * Resolves once the responder listens.
 */
export async function startDelayedResponder(
  host: TestHost,
  delaysMs: number[],
  options: string[] = [],
): Promise<ChildProcess> {
  host.exec('sysctl', ['-q', '-w', 'net.ipv4.icmp_echo_ignore_all=1']);
  const tsx = join(import.meta.dirname, '..', '..', 'node_modules', '.bin', 'tsx');
  const child = host.spawn(tsx, [
    join(import.meta.dirname, 'icmp-responder.ts'),
    ...options,
    ...delaysMs.map(String),
  ]);
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await Promise.race([once(lines, 'line'), once(child, 'exit')])) as [string];
  if (line !== 'ready') throw new Error(`the ICMP responder did not start: ${String(line)}`);
  return child;
}
