#!/usr/bin/env node
// postinstall: installs the dependencies of each runtime under runtimes/ that has a package.json
// (what its check scripts may import), with `npm ci --ignore-scripts`. A checkout
// without runtimes (the uptime image) has nothing to do. Set OUTPOST_SKIP_RUNTIMES=1 to skip.
// Playwright never downloads a browser (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1): Chromium is Debian's
// chromium package, found at CHROMIUM_PATH (default /usr/bin/chromium).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runtimes = join(root, 'runtimes');
if (process.env.OUTPOST_SKIP_RUNTIMES === '1' || !existsSync(runtimes)) process.exit(0);
for (const id of readdirSync(runtimes).sort()) {
  const dir = join(runtimes, id);
  if (!existsSync(join(dir, 'package-lock.json'))) continue;
  console.log(`outpost: installing the dependencies of runtime ${id}`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund', '--ignore-scripts', '--omit=dev'], {
    cwd: dir,
    stdio: 'inherit',
    env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
