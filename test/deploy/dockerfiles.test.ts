import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/common/paths.js';

/**
 * No Docker engine runs here, so the Dockerfiles are checked statically: every
 * path they copy from the build context exists, and the entry point is the
 * file the build produces (package.json `bin`).
 */
const DOCKERFILES = ['Dockerfile', 'Dockerfile.uptime', 'Dockerfile.dev'];
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
