import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/common/paths.js';

/**
 * No Docker engine runs here, so the Dockerfiles are checked statically: every
 * path they copy from the build context exists, and the entry point is the
 * file the build produces (package.json `bin`).
 */
const DOCKERFILES = ['Dockerfile', 'Dockerfile.uptime', 'Dockerfile.dev', 'Dockerfile.service'];
const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
  scripts: Record<string, string>;
};

describe.each(DOCKERFILES)('%s', (file) => {
  const text = readFileSync(join(PACKAGE_ROOT, file), 'utf8');
  const lines = text.split('\n').filter((l) => !l.trimStart().startsWith('#'));

  it('copies only paths that exist in the repository', () => {
    const sources = lines
      .filter((l) => /^COPY\s/.test(l) && !l.includes('--from='))
      .flatMap((l) => l.trim().split(/\s+/).slice(1, -1))
      .filter((s) => s !== '.');
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources)
      expect(existsSync(join(PACKAGE_ROOT, source)), `${file}: COPY ${source}`).toBe(true);
  });

  it('starts the built CLI named in package.json', () => {
    const entry = lines.find((l) => /^(ENTRYPOINT|CMD)\s/.test(l) && l.includes('cli.js'));
    if (file === 'Dockerfile.dev') {
      expect(text).toMatch(/CMD \["npm", "start"\]/);
      expect(pkg.scripts.start).toContain(pkg.bin.outpost!);
      return;
    }
    expect(entry).toContain(pkg.bin.outpost!);
    expect(text).toMatch(/npm run build/);
  });
});

/** The `apt-get install` commands of a shell text, continuation lines joined. */
const aptInstalls = (text: string): string[] =>
  text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#') && /apt-get install/.test(l));

/** What runtime 2026.04's Playwright needs from Debian: the browser, its fonts and ffmpeg for video. */
const BROWSER_PACKAGES = ['chromium', 'fonts-liberation', 'ffmpeg'];

describe.each(['Dockerfile', 'Dockerfile.dev'])('%s (browser checks)', (file) => {
  const text = readFileSync(join(PACKAGE_ROOT, file), 'utf8');

  it("installs Debian's chromium, fonts-liberation and ffmpeg without recommends and sets CHROMIUM_PATH", () => {
    const install = aptInstalls(text).find((l) => /\bchromium\b/.test(l));
    expect(install, `${file}: an apt-get install with chromium`).toBeDefined();
    expect(install).toContain('--no-install-recommends');
    for (const name of BROWSER_PACKAGES) expect(install).toMatch(new RegExp(`\\s${name}(\\s|$)`));
    expect(text).toMatch(/^ENV\s[^#]*CHROMIUM_PATH=\/usr\/bin\/chromium/ms);
  });

  it('runs under tini as PID 1, so orphaned Chromium processes are reaped (no zombies)', () => {
    expect(aptInstalls(text).join(' ')).toMatch(/\stini(\s|$)/);
    const entrypoint = text.split('\n').find((l) => l.startsWith('ENTRYPOINT'));
    expect(JSON.parse(entrypoint?.slice('ENTRYPOINT'.length) ?? '[]').slice(0, 2)).toEqual([
      '/usr/bin/tini',
      '--',
    ]);
  });

  it("writes a managed Chromium policy blocking file:// URLs (a check's browser must not read the agent's files)", () => {
    const joined = text.replace(/\\\n/g, ' ');
    expect(joined).toContain('/etc/chromium/policies/managed/outpost.json');
    const policy = /'(\{"URLBlocklist"[^']*\})'/.exec(joined)?.[1];
    expect(JSON.parse(policy ?? '{}').URLBlocklist).toContain('file://*');
  });
});

describe('Dockerfile.uptime', () => {
  it('stays browser-free: no browser package, no CHROMIUM_PATH, no runtimes', () => {
    const text = readFileSync(join(PACKAGE_ROOT, 'Dockerfile.uptime'), 'utf8');
    const code = text
      .split('\n')
      .filter((l) => !l.trimStart().startsWith('#'))
      .join('\n');
    for (const install of aptInstalls(text))
      for (const name of BROWSER_PACKAGES) expect(install).not.toMatch(new RegExp(`\\s${name}(\\s|$)`));
    expect(code).not.toMatch(/chromium|playwright|CHROMIUM_PATH|runtimes/i);
  });
});

describe('.ci/run', () => {
  it('installs the browser packages the compatibility suite needs', () => {
    const install = aptInstalls(readFileSync(join(PACKAGE_ROOT, '.ci/run'), 'utf8')).join(' ');
    for (const name of BROWSER_PACKAGES) expect(install).toMatch(new RegExp(`\\s${name}(\\s|$)`));
  });
});
