import { chmod, chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Layout, SuiteIdentity } from './types.js';

/** Gives a path to the run user `runAs` (chown); the returned function rejects as chown does. */
export function ownedBy(runAs: SuiteIdentity): (path: string) => Promise<void> {
  return async (path: string) => {
    await chown(path, runAs.uid, runAs.gid);
  };
}

/**
 * Makes the run's folders inside its private `dir`: the project, home, browsers, output and report
 * folders (mode 0700, each given to the run user by `own`), `dir` itself left the agent's with
 * mode 0711.
 *
 * @returns the layout, absolute paths.
 * @throws Error when a folder cannot be made or given to the run user.
 */
export async function createLayout(dir: string, own: (path: string) => Promise<void>): Promise<Layout> {
  const layout: Layout = {
    dir,
    project: join(dir, 'project'),
    home: join(dir, 'home'),
    browsers: join(dir, 'browsers'),
    // One level down: Playwright removes and recreates its outputDir, which needs a parent the suite may write.
    output: join(dir, 'output', 'results'),
    reportFile: join(dir, 'report', 'report.json'),
    errorFile: join(dir, 'report', 'config-error.txt'),
  };
  // The run's dir stays the agent's, searchable but not writable by the suite's uid: the suite owns
  // the folders inside it but cannot swap one for a link before the agent reads its report and
  // artifacts back.
  await chmod(dir, 0o711);
  for (const sub of [
    layout.project,
    layout.home,
    layout.browsers,
    join(dir, 'output'),
    layout.output,
    join(dir, 'report'),
  ]) {
    await mkdir(sub, { mode: 0o700 });
    await own(sub);
  }
  return layout;
}
