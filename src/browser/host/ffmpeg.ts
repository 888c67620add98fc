/** Video recording in the browser host: Debian's ffmpeg standing in for Playwright's own build. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Where Debian's ffmpeg is; Playwright records videos with it. */
const SYSTEM_FFMPEG = '/usr/bin/ffmpeg';

/**
 * Playwright records videos with its own ffmpeg build, looked up as
 * `$PLAYWRIGHT_BROWSERS_PATH/ffmpeg-<revision>/ffmpeg-linux`; the revision is the runtime's
 * playwright-core's (browsers.json). A symlink to Debian's ffmpeg stands in for it, in this
 * host's temp dir, so nothing is downloaded and nothing outside the temp dir is written. Must
 * run before playwright-core is loaded: it reads the variable once.
 *
 * @param playwrightDir the runtime's playwright-core folder.
 * @returns null when video recording works, else why not.
 * @throws Error when browsers.json cannot be read or the symlink cannot be made.
 */
export function provideFfmpeg(playwrightDir: string): string | null {
  if (!fs.existsSync(SYSTEM_FFMPEG)) return `${SYSTEM_FFMPEG} is missing: videos cannot be recorded`;
  const browsers = JSON.parse(fs.readFileSync(path.join(playwrightDir, 'browsers.json'), 'utf8')) as {
    browsers: { name: string; revision: string }[];
  };
  const revision = browsers.browsers.find((b) => b.name === 'ffmpeg')?.revision;
  if (revision === undefined) return 'the runtime names no ffmpeg revision: videos cannot be recorded';
  const root = path.join(os.tmpdir(), 'ms-playwright');
  const dir = path.join(root, `ffmpeg-${revision}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.symlinkSync(SYSTEM_FFMPEG, path.join(dir, 'ffmpeg-linux'));
  process.env.PLAYWRIGHT_BROWSERS_PATH = root;
  return null;
}
