import { mkdtemp, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { removeTree } from '../common/process-tree.js';
import { listArtifacts } from './suites/artifacts.js';
import { createLayout, ownedBy } from './suites/layout.js';
import { OutputLog } from './suites/output-log.js';
import { runPlaywright } from './suites/playwright-process.js';
import { ProjectError, runtimePlaywrightVersion, writeProject } from './suites/project.js';
import { parseSuiteReport, readSmall } from './suites/report.js';
import { failedReport, MAX_ERRORS, MAX_STEPS, scriptError, suiteReport } from './suites/run-report.js';
import type { Layout, SuiteRunOptions, SuiteRunOutcome } from './suites/types.js';
import { WRAPPER_CONFIG_NAME, wrapperConfigSource } from './suites/wrapper-config.js';

export type {
  SuiteArtifact,
  SuiteFile,
  SuiteIdentity,
  SuiteRunOptions,
  SuiteRunOutcome,
} from './suites/types.js';

/**
 * Playwright check suites (docs/checks.md, "Browser, multi-step and Playwright check suites"): a
 * whole project run with the pinned runtime's own `playwright test`, its tests connected to the
 * runtime's warm Chromium, in a child process group of its own, as a run user of its own (never the
 * agent's uid). The project's code (its config, specs, helpers) only ever runs in that child.
 *
 * This module runs one suite from start to end; its steps live in suites/: the run dir's layout,
 * the project, the wrapper config, the `playwright test` process and its output, the JSON report,
 * the artifacts and the run's report.
 */

const DEFAULT_MAX_OUTPUT_BYTES = 1_048_576;
const DEFAULT_MAX_REPORT_BYTES = 16 * 1_048_576;
/** Longest config refusal read back, bytes. */
const MAX_CONFIG_ERROR_BYTES = 4_096;

/**
 * Playwright's margin before the run's limit: time to stop the tests, close the browser contexts
 * and write the traces and the report. A tenth of the limit, within 2–15 s, and never more than
 * half of it.
 *
 * @param timeoutMs the run's limit, milliseconds.
 * @returns the margin, milliseconds.
 */
export function suiteMarginMs(timeoutMs: number): number {
  return Math.min(Math.floor(timeoutMs / 2), Math.min(15_000, Math.max(2_000, Math.floor(timeoutMs / 10))));
}

/**
 * Runs one Playwright check suite with the runtime's `playwright test` and maps its JSON report
 * onto a browser run report. Steps, in order:
 * 1. writes the project into a fresh private dir (0700, owned by `runAs`; its home, output and
 *    report folders beside it likewise, in a run dir of the agent's, mode 0711): paths relative,
 *    inside the project, not under `node_modules`; the inline script to `INLINE_SPEC_PATH` (suites/project.ts)
 *    unless `scriptPath` is given;
 * 2. links `<project>/node_modules` to the runtime's (no install: an agent has no registry); a
 *    package.json dependency the runtime lacks is the run's error, named;
 * 3. writes `outpost.config.mjs` (suites/wrapper-config.ts) around the user's `playwright.config.*`;
 * 4. spawns `node <runtime>/node_modules/@playwright/test/cli.js test --config outpost.config.mjs`
 *    detached (its own process group), as `runAs`, with only the check's variables and the runtime
 *    variables; reads stdout/stderr within `maxOutputBytes`; SIGKILLs the group at `timeoutMs`
 *    plus a short grace, or when `signal` aborts;
 * 5. parses the JSON report in a worker thread (bounded) and lists the artifacts.
 *
 * A project that cannot run (a bad path, a missing package, a refused config) is a FAILED report,
 * not an exception.
 *
 * @returns the outcome; its `dir` stays until `dispose` is called.
 * @throws Error when the private dir cannot be created
 *   or given to `runAs`, or when the process cannot be spawned (the agent's problems, not the
 *   check's); the dir is removed first.
 */
export async function runSuite(options: SuiteRunOptions): Promise<SuiteRunOutcome> {
  const dir = await realpath(await mkdtemp(join(options.tmpRoot, 'outpost-suite-')));
  let disposed: Promise<void> | null = null;
  const dispose = () => {
    disposed ??= removeTree(dir);
    return disposed;
  };
  try {
    return await runIn(dir, options, dispose);
  } catch (error) {
    await dispose();
    throw error;
  }
}

/**
 * {@link runSuite} inside its fresh private `dir`: the run's folders, the project, the wrapper
 * config, `playwright test`, then its report and artifacts read back.
 *
 * @throws Error for the agent's problems (a folder it cannot make or give away, a spawn that fails).
 */
async function runIn(
  dir: string,
  options: SuiteRunOptions,
  dispose: () => Promise<void>,
): Promise<SuiteRunOutcome> {
  const own = ownedBy(options.runAs);
  const layout = await createLayout(dir, own);
  const playwrightVersion = await runtimePlaywrightVersion(options.runtimeDir);
  const versions = { playwright: playwrightVersion, browser: options.browserVersion ?? '' };
  const started = Date.now();

  let project: Awaited<ReturnType<typeof writeProject>>;
  try {
    project = await writeProject(layout, options, own);
  } catch (error) {
    if (!(error instanceof ProjectError)) throw error;
    return {
      report: failedReport([scriptError(error.message)], versions, false, 0, 0),
      logs: [],
      artifacts: [],
      dir,
      dispose,
    };
  }
  await writeWrapperConfig(layout, options, project, own);

  const logs = new OutputLog(options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES);
  const spawned = Date.now();
  const exit = await runPlaywright(options, layout, logs);
  const ranMs = Date.now() - spawned;
  logs.finish();

  const parsed = await parseSuiteReport({
    reportPath: layout.reportFile,
    maxReportBytes: options.maxReportBytes ?? DEFAULT_MAX_REPORT_BYTES,
    projectDir: layout.project,
    maxSteps: MAX_STEPS,
    maxErrors: MAX_ERRORS,
  });
  const refusal = await readSmall(layout.errorFile, MAX_CONFIG_ERROR_BYTES);
  const artifacts = await listArtifacts(layout, options.runAs, parsed.ok ? parsed.failedAttachments : []);
  const report = suiteReport({
    timeoutMs: options.timeoutMs,
    exit,
    parsed,
    refusal,
    logs,
    artifacts,
    versions,
    startedAt: started,
    spawnedAt: spawned,
    ranMs,
  });
  return { report, logs: logs.lines(), artifacts, dir, dispose };
}

/** Writes `outpost.config.mjs` (suites/wrapper-config.ts) around the user's config, given to the run user. */
async function writeWrapperConfig(
  layout: Layout,
  options: SuiteRunOptions,
  project: { userConfigPath: string; userConfigIsModule: boolean; entrySpecPath: string },
  own: (path: string) => Promise<void>,
): Promise<void> {
  const wrapper = join(layout.project, WRAPPER_CONFIG_NAME);
  await writeFile(
    wrapper,
    wrapperConfigSource({
      userConfigPath: project.userConfigPath,
      userConfigIsModule: project.userConfigIsModule,
      wsEndpoint: options.wsEndpoint,
      outputDir: layout.output,
      reportFile: layout.reportFile,
      errorFile: layout.errorFile,
      entrySpecPath: project.entrySpecPath,
      entryIsInline: options.scriptPath === null || options.scriptPath === '',
      // Counted from here, just before the spawn: the agent's kill is counted from the spawn too.
      deadlineEpochMs: Date.now() + options.timeoutMs - suiteMarginMs(options.timeoutMs),
    }),
    { mode: 0o600, flag: 'wx' },
  );
  await own(wrapper);
}
