import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import { RUN_USER_CAPABILITIES } from '../../src/common/run-users.js';
import { missingRequirement } from '../helpers/requirements.js';

/**
 * The privileges the agent ships with (docs/security.md): the image's entrypoint, the Dockerfile and
 * the Kubernetes manifest agree on the six capabilities the agent keeps to run user code apart, and
 * the entrypoint really leaves the agent with exactly those, as a non-root uid, with API_KEY in no
 * environment.
 */
const ENTRYPOINT = join(PACKAGE_ROOT, 'scripts', 'outpost-entrypoint.sh');
const SIX = Object.keys(RUN_USER_CAPABILITIES).sort();

/** The capability names of a bit set (capabilities(7) numbers of RUN_USER_CAPABILITIES; others as `bit<n>`). */
function capabilityNames(bits: bigint): string[] {
  const byBit = new Map<number, string>(
    Object.entries(RUN_USER_CAPABILITIES).map(([name, bit]) => [bit, name]),
  );
  const names: string[] = [];
  for (let bit = 0; bit < 64; bit++) {
    if ((bits >> BigInt(bit)) & 1n) names.push(byBit.get(bit) ?? `bit${bit}`);
  }
  return names.sort();
}

describe('agent privileges as shipped', () => {
  it('the entrypoint, the Kubernetes manifest and the agent name the same six capabilities', () => {
    const script = readFileSync(ENTRYPOINT, 'utf8');
    const caps = /^caps='([a-z_,]+)'$/m.exec(script)?.[1]?.split(',') ?? [];
    expect(caps.map((c) => c.toUpperCase()).sort()).toEqual(SIX);

    const manifest = readFileSync(join(PACKAGE_ROOT, 'deploy', 'kubernetes', 'base', 'agent.yaml'), 'utf8');
    const added = /^\s*add: \[([A-Z_, ]+)\]$/m.exec(manifest)?.[1]?.split(/,\s*/) ?? [];
    expect(added.sort()).toEqual(SIX);
    expect(manifest).toMatch(/drop: \[ALL\]/);
    expect(manifest).toMatch(/allowPrivilegeEscalation: false/);
    // Starting as root is what lets the entrypoint hand the capabilities over; runAsNonRoot forbids it.
    expect(manifest).not.toMatch(/runAsNonRoot: true/);
    // The key comes from a mounted Secret, never an environment variable.
    expect(manifest).toMatch(/name: API_KEY_FILE/);
    expect(manifest).not.toMatch(/name: API_KEY\s*$/m);
  });

  it('the agent image starts as root only for the entrypoint; the uptime image, which runs no user code, never', () => {
    const agent = readFileSync(join(PACKAGE_ROOT, 'Dockerfile'), 'utf8');
    const finalStage = agent.slice(agent.lastIndexOf('\nFROM '));
    expect(finalStage).not.toMatch(/^USER\s/m);
    const entrypoint = finalStage.split('\n').find((l) => l.startsWith('ENTRYPOINT')) ?? '';
    expect(JSON.parse(entrypoint.slice('ENTRYPOINT'.length))).toEqual([
      '/usr/bin/tini',
      '--',
      '/usr/local/bin/outpost-entrypoint',
      'node',
      '--disable-sigusr1',
      'dist/src/cli.js',
    ]);
    expect(finalStage).toContain('scripts/outpost-entrypoint.sh /usr/local/bin/outpost-entrypoint');
    const uptime = readFileSync(join(PACKAGE_ROOT, 'Dockerfile.uptime'), 'utf8');
    expect(uptime.slice(uptime.lastIndexOf('\nFROM '))).toMatch(/^USER node$/m);
  });

  const skip =
    process.getuid?.() === 0
      ? missingRequirement([
          { what: 'setpriv', ok: existsSync('/usr/bin/setpriv'), install: 'apt-get install util-linux' },
        ])
      : 'the entrypoint drops root privileges: run as root to test it';

  it.skipIf(skip !== null)(
    'started as root, the entrypoint runs the agent as the given uid with exactly the six capabilities and the key on fd 3, in no environment',
    () => {
      const key = `op_entrypoint_${Date.now()}_planted`;
      const probe = [
        'grep -E "^(Uid|CapEff|CapAmb|CapInh|NoNewPrivs):" /proc/self/status',
        'echo "env:$(cat /proc/self/environ | tr "\\0" " ")"',
        'echo "key:$(cat <&3)"',
      ].join('; ');
      const out = execFileSync(ENTRYPOINT, ['/bin/sh', '-c', probe], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', API_KEY: key, OUTPOST_AGENT_USER: '61790' },
        encoding: 'utf8',
      });
      const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(out)?.[1] ?? '';
      expect(field('Uid').split(/\s+/)).toEqual(['61790', '61790', '61790', '61790']);
      expect(capabilityNames(BigInt(`0x${field('CapEff')}`))).toEqual(SIX);
      expect(capabilityNames(BigInt(`0x${field('CapAmb')}`))).toEqual(SIX);
      expect(field('env')).toContain('API_KEY_FILE=/dev/fd/3');
      expect(field('env')).not.toContain(key);
      expect(field('key')).toBe(key);
    },
  );

  it.skipIf(skip !== null)('started as another user, the entrypoint changes nothing', () => {
    const result = spawnSync(
      '/usr/bin/setpriv',
      [
        '--reuid=61791',
        '--regid=61791',
        '--clear-groups',
        '--',
        ENTRYPOINT,
        '/bin/sh',
        '-c',
        'id -u; echo "$API_KEY"',
      ],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', API_KEY: 'kept' }, encoding: 'utf8' },
    );
    expect(result.stdout.split('\n').slice(0, 2)).toEqual(['61791', 'kept']);
  });
});
