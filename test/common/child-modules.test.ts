import { describe, expect, it } from 'vitest';
import { checkBuiltin, deniedIn, pidOf, pidText, signalOf } from '../../src/common/child/lockdown.js';
import {
  API_SCRIPT_SECRET_PREFIXES,
  BROWSER_SCRIPT_SECRET_PREFIXES,
  createSecretTracker,
  MAX_SECRET_LENGTH,
} from '../../src/common/child/secrets.js';
import { bundleChild, CHILD_BUNDLES } from '../../src/common/compiled-child.js';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import { appendCapped, permissionNodeFlags } from '../../src/common/process-launcher.js';

describe('child lock-down helpers', () => {
  it('converts pids and signals once, refusing anything that could answer twice', () => {
    expect(pidOf(12)).toBe(12);
    expect(pidOf('-12')).toBe(-12);
    expect(pidOf(1.5)).toBe(null);
    expect(pidOf({ valueOf: () => 1 })).toBe(null);
    expect(pidOf('12345678901')).toBe(null);
    expect(signalOf(undefined)).toBe(15);
    expect(signalOf('SIGKILL')).toBe(9);
    expect(signalOf('toString')).toBe(null);
    expect(signalOf(65)).toBe(null);
    expect(pidText({})).toBe('object');
  });

  it('refuses the denied built-ins with a permission-shaped error naming the kind of child', () => {
    const denied = deniedIn('scripts');
    expect(checkBuiltin('fs', denied)).toBe(true);
    expect(checkBuiltin('lodash', denied)).toBe(false);
    expect(() => checkBuiltin('node:inspector', denied)).toThrow(
      expect.objectContaining({
        code: 'ERR_ACCESS_DENIED',
        permission: 'Module',
        resource: 'node:inspector',
      }),
    );
    expect(() => checkBuiltin('sqlite', deniedIn('checks'))).toThrow('is not allowed in checks');
  });
});

describe('child secret tracking', () => {
  it('keeps the documented prefixes: API scripts SERVICE_SECRET_ only, browser scripts OUTPOST_SECRET_ too', () => {
    expect(API_SCRIPT_SECRET_PREFIXES).toEqual(['SERVICE_SECRET_']);
    expect(BROWSER_SCRIPT_SECRET_PREFIXES).toEqual(['SERVICE_SECRET_', 'OUTPOST_SECRET_']);
  });

  it('reports each secret-named value once, cut, and sweeps environments', () => {
    const sent: string[] = [];
    const tracker = createSecretTracker({
      prefixes: API_SCRIPT_SECRET_PREFIXES,
      send: (value) => sent.push(value),
    });
    expect(tracker.isSecretName('SERVICE_SECRET_A')).toBe(true);
    expect(tracker.isSecretName('OUTPOST_SECRET_A')).toBe(false);
    expect(tracker.isSecretName(Symbol('SERVICE_SECRET_A'))).toBe(false);
    tracker.sweep({ SERVICE_SECRET_A: 'a', OTHER: 'b', SERVICE_SECRET_E: '' }, null, 'x', {
      SERVICE_SECRET_B: 'a',
    });
    tracker.report('x'.repeat(MAX_SECRET_LENGTH + 10));
    tracker.report(42);
    expect(sent).toEqual(['a', 'x'.repeat(MAX_SECRET_LENGTH)]);
  });

  it('cuts a value to a channel line when told how', () => {
    const sent: string[] = [];
    const tracker = createSecretTracker({
      prefixes: BROWSER_SCRIPT_SECRET_PREFIXES,
      send: (value) => sent.push(value),
      cutToLine: (value) => value.slice(0, 3),
    });
    tracker.sweep({ OUTPOST_SECRET_X: 'abcdef' });
    expect(sent).toEqual(['abc']);
  });
});

describe('process launcher helpers', () => {
  it('caps kept output', () => {
    expect(appendCapped('ab', 'cdef', 4)).toBe('abcd');
    expect(appendCapped('abcd', 'e', 4)).toBe('abcd');
  });

  it('allows reads of the bootstrap, the runtime and the temp dir, writes of the temp dir only', () => {
    const flags = permissionNodeFlags({
      bootstrap: '/b/child.cjs',
      runtimeDir: '/r',
      tmpDir: '/t',
      heapLimitMb: 64,
      noWarningsFallback: true,
    });
    expect(flags).toContain('--allow-fs-read=/b/child.cjs');
    expect(flags).toContain('--allow-fs-read=/r/node_modules');
    expect(flags).toContain('--allow-fs-write=/t');
    expect(flags.filter((f) => f.startsWith('--allow-fs-write'))).toEqual(['--allow-fs-write=/t']);
    expect(flags.at(-1)).toBe('--max-old-space-size=64');
  });
});

describe('child bundles', () => {
  it.each(Object.entries(CHILD_BUNDLES))(
    '%s is one CommonJS file that requires node: built-ins only',
    async (_name, entry) => {
      const { text, inputs } = await bundleChild(`${PACKAGE_ROOT}/${entry}`);
      expect(inputs.length).toBeGreaterThan(1);
      expect(inputs.every((input) => input.startsWith(`${PACKAGE_ROOT}/src/`))).toBe(true);
      const literal = [...text.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]);
      expect(literal.length).toBeGreaterThan(0);
      expect(literal.filter((id) => !id?.startsWith('node:'))).toEqual([]);
    },
    30_000,
  );
});
