import { type ChildProcess, spawn } from 'node:child_process';
import { constants, existsSync } from 'node:fs';
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  realpath,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { join, posix, relative, sep } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { Worker } from 'node:worker_threads';
import { compiledChildPath } from '../common/compiled-child.js';
import { killGroup, removeTree, trackGroup, untrackGroup } from '../common/process-tree.js';
import { killRunUser, runAsRunUser } from '../common/run-users.js';
import type { RunLog } from '../protocol/index.js';
import type { BrowserRunError, BrowserRunReport } from './messages.js';
import { USER_CONFIG_NAMES, WRAPPER_CONFIG_NAME, wrapperConfigSource } from './suite-config.js';
import type { SuiteReportRequest, SuiteReportResult } from './suite-report-worker.cjs';

export type { SuiteReportRequest, SuiteReportResult };

/**
 * Playwright check suites (docs/checks.md, "Browser, multi-step and Playwright check suites"): a
 * whole project run with the pinned runtime's own `playwright test`, its tests connected to the
 * runtime's warm Chromium, in a child process group of its own, as a run user of its own (never the
 * agent's uid). The project's code (its config, specs, helpers) only ever runs in that child.
 */

/** A project file of a suite: a relative path inside the project and its UTF-8 text. */
export type SuiteFile = { path: string; content: string };

/** A uid and gid the suite's processes run as. */
export type SuiteIdentity = { uid: number; gid: number };

/** How one suite is run. Times are milliseconds, sizes bytes. */
export type SuiteRunOptions = {
  /** `runtimes/<id>`: its node_modules is what the project imports (and its `@playwright/test` runs it). */
  runtimeDir: string;
  runtimeId: string;
  /** The warm browser of the runtime (`ws://127.0.0.1:<port>/<path>`). */
  wsEndpoint: string;
  /** The project: package.json, playwright.config.*, specs, helpers, an optional lock file. */
  files: SuiteFile[];
  /** An inline spec (written to `tests/check.spec.ts`), or null when `scriptPath` names one. */
  script: string | null;
  /** The path of the spec among `files`, or null. */
  scriptPath: string | null;
  /** The check's merged variables: with the runtime variables, the suite's whole environment. */
  env: Record<string, string>;
  /** What started the run (SCHEDULER, TEST_RECORD, …): `OUTPOST_RUN_SOURCE` and `CHECKLY_RUN_SOURCE`. */
  runSource: string;
  /** A test-session run: the suite sees `CI=1`. */
  testSession: boolean;
  /** The run's limit: Playwright stops at it less a margin, the agent kills the group just after it. */
  timeoutMs: number;
  /** Where the run's private dir is created. */
  tmpRoot: string;
  /**
   * The run user the suite runs as (src/common/run-users.ts). The uid must be this run's own: when
   * the run ends every process of that uid is killed. The runtime's node_modules and the folders
   * above `tmpRoot` must be readable by it.
   */
  runAs: SuiteIdentity;
  /** Aborting kills the suite; the outcome reports it as cancelled. */
  signal?: AbortSignal;
  /** Most bytes of stdout and stderr kept together (default 1 MiB); the rest are dropped and counted. */
  maxOutputBytes?: number;
  /** Most bytes of the JSON report read (default 16 MiB); a larger one is not parsed. */
  maxReportBytes?: number;
  /** The warm browser's version when its host knows it (`browser.version()`), else ''. */
  browserVersion?: string;
};

/** A file of the run to upload: traces and screenshots of Playwright's output folder, and the JSON report. */
export type SuiteArtifact = {
  /** Unique within the run, no slashes: the path under the output folder with `/` as `-`. */
  name: string;
  kind: 'TRACE' | 'SCREENSHOT' | 'VIDEO' | 'REPORT';
  /** Absolute path (inside `dir`); a regular file owned by the run when it was listed. */
  path: string;
  sizeBytes: number;
  /** From an attempt that did not pass: these come first, to upload before the others. */
  failed: boolean;
};

/** What one suite run produced. Call `dispose` once the artifacts are uploaded. */
export type SuiteRunOutcome = {
  /**
   * Shape TEST; steps are tests (depth 0, titles joined with ` › `, the project's name first when
   * there are several) and their `test.step`s (depth 1 and more; a step's `startMs` is its parent's
   * start plus the durations of the steps before it, as the JSON report has no step start times);
   * `pages` empty; `artifacts` the traces, screenshots and videos of `artifacts` below.
   */
  report: BrowserRunReport;
  /** Output of `playwright test` (its line reporter and the tests' console), bounded. */
  logs: RunLog[];
  /** Failed attempts' files first. */
  artifacts: SuiteArtifact[];
  /** The run's private dir, holding the project and every artifact. */
  dir: string;
  /** Removes `dir`. Idempotent, never throws. */
  dispose: () => Promise<void>;
};

/** Path the inline script is written to, unless `scriptPath` names the spec. */
export const INLINE_SPEC_PATH = 'tests/check.spec.ts';

const DEFAULT_MAX_OUTPUT_BYTES = 1_048_576;
const DEFAULT_MAX_REPORT_BYTES = 16 * 1_048_576;
/** Longest log line kept, characters. */
const MAX_LOG_CHARS = 4_096;
/** Most log lines kept (a flood of short lines costs far more memory than its bytes); the rest are counted. */
const MAX_LOG_LINES = 2_000;
/** Most steps and errors kept from the report. */
const MAX_STEPS = 1_000;
const MAX_ERRORS = 50;
/** After `timeoutMs`, how long before the group is SIGKILLed (Playwright writes its report at its global timeout). */
const KILL_GRACE_MS = 2_000;
/** How long the agent waits for the stdio of a killed group to close, ms. */
const CLOSE_WAIT_MS = 2_000;
/** Most files listed in the output folder, and how deep. */
const MAX_OUTPUT_FILES = 500;
const MAX_OUTPUT_DEPTH = 6;
/** The report-parsing worker's heap, MiB, and how long it may take. */
const REPORT_WORKER_HEAP_MB = 256;
const REPORT_WORKER_TIMEOUT_MS = 30_000;
/** Longest config refusal read back, bytes. */
const MAX_CONFIG_ERROR_BYTES = 4_096;
const PATH = '/usr/local/bin:/usr/bin:/bin';
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes are what it removes.
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b[@-_]/g;
/** npm package names (scoped or not): never a path. */
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/i;

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

/** A mistake in the project that stops it from running at all (reported as the run's error). */
class ProjectError extends Error {}

/** Checks one project path: relative, `/`-separated, no `.`/`..`/empty segment, not reserved. */
function checkPath(path: string): string {
  if (typeof path !== 'string' || path === '' || path.length > 1024)
    throw new ProjectError('a project file has an empty or too long path');
  if (path.includes('\\') || path.includes('\0'))
    throw new ProjectError(`project path ${JSON.stringify(path)} holds a backslash or NUL`);
  if (path.startsWith('/')) throw new ProjectError(`project path ${JSON.stringify(path)} is absolute`);
  const segments = path.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..'))
    throw new ProjectError(`project path ${JSON.stringify(path)} leaves the project or has an empty segment`);
  if (segments[0] === 'node_modules')
    throw new ProjectError(
      `project path ${JSON.stringify(path)} is inside node_modules: the runtime provides it`,
    );
  if (path === WRAPPER_CONFIG_NAME)
    throw new ProjectError(`project path ${WRAPPER_CONFIG_NAME} is reserved for the agent`);
  return path;
}

/** Package names of package.json's dependencies and devDependencies (type-only `@types/*` left out). */
function declaredPackages(manifest: unknown): string[] {
  if (typeof manifest !== 'object' || manifest === null) return [];
  const names: string[] = [];
  for (const field of ['dependencies', 'devDependencies', 'optionalDependencies']) {
    const deps = (manifest as Record<string, unknown>)[field];
    if (typeof deps === 'object' && deps !== null) names.push(...Object.keys(deps));
  }
  return [...new Set(names)].filter((name) => !name.startsWith('@types/'));
}

/**
 * Runs one Playwright check suite with the runtime's `playwright test` and maps its JSON report
 * onto a browser run report. Steps, in order:
 * 1. writes the project into a fresh private dir (0700, owned by `runAs`; its home, output and
 *    report folders beside it likewise, in a run dir of the agent's, mode 0711): paths relative,
 *    inside the project, not under `node_modules`; the inline script to {@link INLINE_SPEC_PATH}
 *    unless `scriptPath` is given;
 * 2. links `<project>/node_modules` to the runtime's (no install: an agent has no registry); a
 *    package.json dependency the runtime lacks is the run's error, named;
 * 3. writes `outpost.config.mjs` (suite-config.ts) around the user's `playwright.config.*`;
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

/** The run's layout inside its private dir. */
type Layout = {
  dir: string;
  project: string;
  home: string;
  browsers: string;
  output: string;
  reportFile: string;
  errorFile: string;
};

async function runIn(
  dir: string,
  options: SuiteRunOptions,
  dispose: () => Promise<void>,
): Promise<SuiteRunOutcome> {
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
  const own = async (path: string) => {
    await chown(path, options.runAs.uid, options.runAs.gid);
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
  const playwrightVersion = await runtimePlaywrightVersion(options.runtimeDir);
  const versions = { playwright: playwrightVersion, browser: options.browserVersion ?? '' };
  const started = Date.now();

  let userConfigPath: string;
  let userConfigIsModule: boolean;
  let entrySpecPath: string;
  try {
    ({ userConfigPath, userConfigIsModule, entrySpecPath } = await writeProject(layout, options, own));
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

  const wrapper = join(layout.project, WRAPPER_CONFIG_NAME);
  await writeFile(
    wrapper,
    wrapperConfigSource({
      userConfigPath,
      userConfigIsModule,
      wsEndpoint: options.wsEndpoint,
      outputDir: layout.output,
      reportFile: layout.reportFile,
      errorFile: layout.errorFile,
      entrySpecPath,
      entryIsInline: options.scriptPath === null || options.scriptPath === '',
      // Counted from here, just before the spawn: the agent's kill is counted from the spawn too.
      deadlineEpochMs: Date.now() + options.timeoutMs - suiteMarginMs(options.timeoutMs),
    }),
    { mode: 0o600, flag: 'wx' },
  );
  await own(wrapper);

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

  const errors: BrowserRunError[] = [];
  let droppedErrors = 0;
  if (exit.cancelled) errors.push(scriptError('the run was cancelled'));
  if (exit.killedAtDeadline) {
    errors.push({
      kind: 'TIMEOUT',
      message: `the suite ran past its limit of ${options.timeoutMs} ms and was stopped`,
      detail: null,
      location: null,
      url: null,
    });
  }
  if (refusal !== null) errors.push(scriptError(refusal.trim()));
  // Playwright stopped itself at the global timeout the wrapper set: say so in the run's terms first.
  const globalTimeout =
    parsed.ok && parsed.errors.some((e) => e.kind === 'TIMEOUT' && /^Timed out waiting/.test(e.message));
  if (globalTimeout && !exit.killedAtDeadline) {
    errors.push({
      kind: 'TIMEOUT',
      message: `the suite reached its limit of ${options.timeoutMs} ms and was stopped`,
      detail: null,
      location: null,
      url: null,
    });
  }
  if (parsed.ok) {
    errors.push(...parsed.errors);
    droppedErrors = parsed.droppedErrors;
    if (parsed.droppedSteps > 0)
      logs.note('WARN', `${parsed.droppedSteps} steps beyond ${MAX_STEPS} were dropped`);
  } else if (refusal === null && !exit.killedAtDeadline && !exit.cancelled) {
    const reason = exit.code === null ? `signal ${exit.signal ?? 'unknown'}` : `code ${exit.code}`;
    errors.push(
      scriptError(`playwright test ended (${reason}) without a report: ${parsed.message}`, logs.tail()),
    );
  }
  const timedOut = exit.killedAtDeadline || globalTimeout;
  const passed =
    parsed.ok &&
    errors.length === 0 &&
    exit.code === 0 &&
    parsed.stats.unexpected === 0 &&
    !timedOut &&
    !exit.cancelled;
  if (!passed && errors.length === 0) {
    errors.push(
      scriptError(`playwright test exited with code ${exit.code ?? exit.signal ?? 'unknown'}`, logs.tail()),
    );
  }
  const startupMs =
    parsed.ok && parsed.startTime !== null
      ? Math.max(0, Date.parse(parsed.startTime) - started)
      : Math.max(0, spawned - started);
  const durationMs = parsed.ok && parsed.durationMs > 0 ? Math.round(parsed.durationMs) : ranMs;
  const report: BrowserRunReport = {
    status: passed ? 'PASSED' : 'FAILED',
    shape: 'TEST',
    errorMessage: passed ? null : (errors[0]?.message ?? 'the suite failed'),
    errors: passed ? [] : errors.slice(0, MAX_ERRORS),
    droppedErrors: passed ? 0 : droppedErrors + Math.max(0, errors.length - MAX_ERRORS),
    steps: parsed.ok ? parsed.steps : [],
    pages: [],
    timedOut,
    startupMs,
    durationMs,
    versions,
    // The runner's view of the same files (no REPORT kind there); `artifacts` has their paths.
    artifacts: artifacts.flatMap(({ name, kind, sizeBytes }) =>
      kind === 'REPORT' ? [] : [{ name, kind, sizeBytes }],
    ),
  };
  return { report, logs: logs.lines(), artifacts, dir, dispose };
}

function scriptError(message: string, detail: string | null = null): BrowserRunError {
  return { kind: 'SCRIPT', message, detail, location: null, url: null };
}

function failedReport(
  errors: BrowserRunError[],
  versions: BrowserRunReport['versions'],
  timedOut: boolean,
  startupMs: number,
  durationMs: number,
): BrowserRunReport {
  return {
    status: 'FAILED',
    shape: 'TEST',
    errorMessage: errors[0]?.message ?? 'the suite failed',
    errors,
    droppedErrors: 0,
    steps: [],
    pages: [],
    timedOut,
    startupMs,
    durationMs,
    versions,
    artifacts: [],
  };
}

/** `@playwright/test`'s version in the runtime (trusted files of the agent's install), or ''. */
async function runtimePlaywrightVersion(runtimeDir: string): Promise<string> {
  try {
    const manifest = JSON.parse(
      await readFile(join(runtimeDir, 'node_modules', '@playwright', 'test', 'package.json'), 'utf8'),
    ) as { version?: unknown };
    return typeof manifest.version === 'string' ? manifest.version : '';
  } catch {
    return '';
  }
}

/**
 * Writes the project's files (exclusive creates in fresh folders, so nothing is written through a
 * link), the inline script, and the node_modules link, last, so no file lands in the runtime.
 * @throws ProjectError for a bad path, a duplicate, a missing config or a missing package.
 */
async function writeProject(
  layout: Layout,
  options: SuiteRunOptions,
  own: (path: string) => Promise<void>,
): Promise<{ userConfigPath: string; userConfigIsModule: boolean; entrySpecPath: string }> {
  const files = [...options.files];
  const hasScript = options.script !== null && options.script !== '';
  if (hasScript === (options.scriptPath !== null && options.scriptPath !== ''))
    throw new ProjectError('give exactly one of script and scriptPath');
  if (options.scriptPath) {
    checkPath(options.scriptPath);
    if (!files.some((f) => f.path === options.scriptPath))
      throw new ProjectError(`scriptPath ${options.scriptPath} is not a project file`);
  }
  let entrySpecPath = join(layout.project, ...(options.scriptPath ?? INLINE_SPEC_PATH).split('/'));
  if (hasScript) {
    if (files.some((f) => f.path === INLINE_SPEC_PATH))
      throw new ProjectError(
        `the project already has ${INLINE_SPEC_PATH}, where the inline script goes: give scriptPath instead`,
      );
    files.push({ path: INLINE_SPEC_PATH, content: options.script as string });
    entrySpecPath = join(layout.project, INLINE_SPEC_PATH);
  }
  const seen = new Set<string>();
  for (const file of files) {
    const path = checkPath(file.path);
    if (seen.has(path)) throw new ProjectError(`project path ${path} is given twice`);
    seen.add(path);
  }
  const made = new Set<string>(['']);
  for (const file of files) {
    const segments = file.path.split('/');
    for (let i = 1; i < segments.length; i++) {
      const folder = segments.slice(0, i).join('/');
      if (made.has(folder)) continue;
      if (seen.has(folder)) throw new ProjectError(`project path ${folder} is both a file and a folder`);
      await mkdir(join(layout.project, folder), { mode: 0o700 });
      await own(join(layout.project, folder));
      made.add(folder);
    }
    if (made.has(file.path)) throw new ProjectError(`project path ${file.path} is both a file and a folder`);
    const target = join(layout.project, ...segments);
    await writeFile(target, file.content, { mode: 0o600, flag: 'wx' });
    await own(target);
  }

  const manifestFile = files.find((f) => f.path === 'package.json');
  let manifest: unknown = {};
  if (manifestFile) {
    try {
      manifest = JSON.parse(manifestFile.content);
    } catch {
      throw new ProjectError('package.json is not valid JSON');
    }
  }
  const modules = join(options.runtimeDir, 'node_modules');
  const missing = declaredPackages(manifest).filter(
    (name) => !PACKAGE_NAME.test(name) || !existsSync(join(modules, ...name.split('/'), 'package.json')),
  );
  if (missing.length > 0) {
    throw new ProjectError(
      `package.json depends on ${missing.map((n) => JSON.stringify(n)).join(', ')}, which runtime ${options.runtimeId} does not provide (suites run with the runtime's packages; there is no install)`,
    );
  }
  const configName = USER_CONFIG_NAMES.find((name) => seen.has(name));
  if (configName === undefined)
    throw new ProjectError('the project has no playwright.config.{ts,js,mjs,cjs} at its root');
  const packageIsModule =
    typeof manifest === 'object' && manifest !== null && (manifest as { type?: unknown }).type === 'module';
  const userConfigIsModule = /\.m[jt]s$/.test(configName) || (/\.[jt]s$/.test(configName) && packageIsModule);
  await symlink(modules, join(layout.project, 'node_modules'), 'dir');
  return { userConfigPath: join(layout.project, configName), userConfigIsModule, entrySpecPath };
}

/** How `playwright test` ended. */
type PlaywrightExit = {
  code: number | null;
  signal: NodeJS.Signals | null;
  killedAtDeadline: boolean;
  cancelled: boolean;
};

/** The suite's whole environment: the check's variables, then the runtime's (which win). */
function suiteEnv(options: SuiteRunOptions, layout: Layout): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.env)) {
    if (
      typeof value === 'string' &&
      name !== '' &&
      !name.includes('=') &&
      !name.includes('\0') &&
      !value.includes('\0')
    )
      env[name] = value;
  }
  if (options.testSession) env.CI = '1';
  Object.assign(env, {
    OUTPOST: '1',
    OUTPOST_RUN_SOURCE: options.runSource,
    CHECKLY: '1',
    CHECKLY_RUN_SOURCE: options.runSource,
    HOME: layout.home,
    TMPDIR: layout.home,
    PATH,
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
    PLAYWRIGHT_BROWSERS_PATH: layout.browsers,
  });
  return env;
}

/** Spawns `playwright test`, reads its output into `logs`, kills its group at the deadline or on abort. */
async function runPlaywright(
  options: SuiteRunOptions,
  layout: Layout,
  logs: OutputLog,
): Promise<PlaywrightExit> {
  const cli = join(options.runtimeDir, 'node_modules', '@playwright', 'test', 'cli.js');
  const args = [cli, 'test', '--config', WRAPPER_CONFIG_NAME];
  const { command, args: argv } = existsSync('/bin/sh')
    ? runAsRunUser(options.runAs, '/bin/sh', [
        '-c',
        'ulimit -c 0 2>/dev/null; exec "$0" "$@"',
        process.execPath,
        ...args,
      ])
    : runAsRunUser(options.runAs, process.execPath, args);
  const child: ChildProcess = spawn(command, argv, {
    cwd: layout.project,
    env: suiteEnv(options, layout),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const pid = child.pid;
  if (pid === undefined) {
    const error = await new Promise<Error>((resolve) => child.once('error', resolve));
    throw new Error(`playwright test could not be started: ${error.message}`);
  }
  trackGroup(pid);
  let killedAtDeadline = false;
  let cancelled = false;
  const kill = () => killGroup(pid);
  const deadline = setTimeout(() => {
    killedAtDeadline = true;
    kill();
  }, options.timeoutMs + KILL_GRACE_MS);
  const onAbort = () => {
    cancelled = true;
    kill();
  };
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  for (const name of ['stdout', 'stderr'] as const) {
    const stream = child[name];
    stream?.on('error', () => {});
    stream?.on('data', (chunk: Buffer) => logs.add(name, chunk));
  }
  // Listened for from the start: 'close' may come right after 'exit'.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const exited = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  clearTimeout(deadline);
  options.signal?.removeEventListener('abort', onAbort);
  // Whatever the leader left in its group (workers, a webServer) dies with it.
  kill();
  untrackGroup(pid);
  // A process of the suite that left its group (setsid, a double fork) dies with the run too.
  await killRunUser(options.runAs);
  // A process that left the group (setsid) may hold the pipes: wait a little, then stop reading.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
  clearTimeout(timer);
  child.stdout?.destroy();
  child.stderr?.destroy();
  return { ...exited, killedAtDeadline: killedAtDeadline && !cancelled, cancelled };
}

/**
 * stdout and stderr of the suite as log lines, within a byte budget and {@link MAX_LOG_LINES}: past
 * either, output is dropped and counted. Colours and cursor codes of the line reporter are removed; long lines are cut.
 */
class OutputLog {
  readonly #maxBytes: number;
  #bytes = 0;
  #dropped = 0;
  #droppedLines = 0;
  readonly #partial = { stdout: '', stderr: '' };
  /** Per stream, so a character split across two chunks is decoded whole. */
  readonly #decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  readonly #lines: RunLog[] = [];

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  add(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    const room = this.#maxBytes - this.#bytes;
    if (room <= 0) {
      this.#dropped += chunk.length;
      return;
    }
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.#dropped += chunk.length - kept.length;
    this.#bytes += kept.length;
    const text = this.#partial[stream] + this.#decoders[stream].write(kept);
    const parts = text.split('\n');
    this.#partial[stream] = (parts.pop() ?? '').slice(0, MAX_LOG_CHARS);
    for (const line of parts) this.#push(stream, line);
  }

  #push(stream: 'stdout' | 'stderr', raw: string): void {
    const line = raw.replace(ANSI, '').replace(/\r/g, '').trimEnd();
    if (line === '') return;
    if (this.#lines.length >= MAX_LOG_LINES) {
      this.#droppedLines++;
      return;
    }
    this.#lines.push({
      time: new Date().toISOString(),
      level: stream === 'stdout' ? 'INFO' : 'ERROR',
      msg: line.length > MAX_LOG_CHARS ? `${line.slice(0, MAX_LOG_CHARS - 1)}…` : line,
    });
  }

  note(level: RunLog['level'], msg: string): void {
    this.#lines.push({ time: new Date().toISOString(), level, msg });
  }

  /** Flushes unterminated lines and notes what was dropped. */
  finish(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      this.#push(stream, this.#partial[stream] + this.#decoders[stream].end());
      this.#partial[stream] = '';
    }
    if (this.#droppedLines > 0)
      this.note('WARN', `${this.#droppedLines} lines of output beyond ${MAX_LOG_LINES} were dropped`);
    if (this.#dropped > 0)
      this.note('WARN', `${this.#dropped} bytes of output beyond ${this.#maxBytes} were dropped`);
  }

  /** The last lines, for an error's detail when there is no report. */
  tail(): string | null {
    const text = this.#lines
      .slice(-20)
      .map((l) => l.msg)
      .join('\n');
    return text === '' ? null : text.slice(-4_096);
  }

  lines(): RunLog[] {
    return this.#lines;
  }
}

/**
 * Reads a suite's JSON report (Playwright's `json` reporter, untrusted) in a worker thread
 * (suite-report-worker.cts) with a heap limit of 256 MiB and a time limit of 30 s, and maps it onto
 * steps and errors. Never throws: a missing, oversized or malformed report is `{ ok: false }`.
 *
 * @param request the report's path, its size cap (bytes), the project's root, and the most steps and errors kept.
 * @returns the mapped report, or why there is none.
 */
export async function parseSuiteReport(request: SuiteReportRequest): Promise<SuiteReportResult> {
  const file = await compiledChildPath(import.meta.url, 'suite-report-worker');
  return new Promise<SuiteReportResult>((resolve) => {
    const worker = new Worker(file, {
      workerData: request,
      resourceLimits: { maxOldGenerationSizeMb: REPORT_WORKER_HEAP_MB },
    });
    let settled = false;
    const settle = (result: SuiteReportResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(result);
    };
    const timer = setTimeout(
      () => settle({ ok: false, message: 'reading the JSON report took too long' }),
      REPORT_WORKER_TIMEOUT_MS,
    );
    worker.once('message', (result: SuiteReportResult) => settle(result));
    worker.once('error', (error) =>
      settle({ ok: false, message: `the JSON report could not be read: ${error.message}` }),
    );
    worker.once('exit', () => settle({ ok: false, message: 'the JSON report could not be read' }));
  });
}

/** Up to `maxBytes` of a regular file (never through a link), or null when there is none. */
async function readSmall(path: string, maxBytes: number): Promise<string | null> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!(await handle.stat()).isFile()) return null;
    const buffer = Buffer.alloc(maxBytes);
    const { bytesRead } = await handle.read(buffer, 0, maxBytes, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

const KINDS: [RegExp, SuiteArtifact['kind']][] = [
  [/(^|\/)trace\.zip$|\.trace\.zip$/, 'TRACE'],
  [/\.png$|\.jpe?g$/, 'SCREENSHOT'],
  [/\.webm$/, 'VIDEO'],
];

/**
 * Traces, screenshots and videos under the output folder and the JSON report: regular files only
 * (links are never followed, and with `runAs` only files the run's uid owns with one link), at
 * most {@link MAX_OUTPUT_FILES}. Files of failed attempts first.
 */
async function listArtifacts(
  layout: Layout,
  runAs: SuiteIdentity | null,
  failedAttachments: string[],
): Promise<SuiteArtifact[]> {
  const failed = new Set(failedAttachments);
  const found: SuiteArtifact[] = [];
  const acceptable = async (path: string) => {
    const stat = await lstat(path).catch(() => null);
    if (!stat?.isFile()) return null;
    if (runAs !== null && (stat.uid !== runAs.uid || stat.nlink !== 1)) return null;
    return stat;
  };
  let listed = 0;
  const walk = async (folder: string, depth: number): Promise<void> => {
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (++listed > MAX_OUTPUT_FILES) return;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (depth < MAX_OUTPUT_DEPTH) await walk(path, depth + 1);
        continue;
      }
      const rel = relative(layout.output, path).split(sep).join(posix.sep);
      const kind = KINDS.find(([pattern]) => pattern.test(rel))?.[1];
      if (kind === undefined) continue;
      const stat = await acceptable(path);
      if (stat === null) continue;
      found.push({
        name: rel.replaceAll('/', '-'),
        kind,
        path,
        sizeBytes: stat.size,
        failed: failed.has(path),
      });
    }
  };
  await walk(layout.output, 0);
  const report = await acceptable(layout.reportFile);
  if (report !== null)
    found.push({
      name: 'report.json',
      kind: 'REPORT',
      path: layout.reportFile,
      sizeBytes: report.size,
      failed: false,
    });
  return found.sort((a, b) => Number(b.failed) - Number(a.failed));
}
