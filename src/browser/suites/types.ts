import type { RunLog } from '../../protocol/index.js';
import type { BrowserRunReport } from '../messages.js';

/**
 * The shapes of a Playwright check suite run (../suite-runner.ts): the project, how it is run, and
 * what the run produced.
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

/** The run's layout inside its private dir: absolute paths. */
export type Layout = {
  /** The run's private dir (mode 0711, the agent's). */
  dir: string;
  /** The project's files, the suite's working directory. */
  project: string;
  /** The suite's HOME and TMPDIR. */
  home: string;
  /** PLAYWRIGHT_BROWSERS_PATH (empty: the suite connects to the warm browser). */
  browsers: string;
  /** Playwright's outputDir (traces, screenshots, videos). */
  output: string;
  /** Where the JSON reporter writes. */
  reportFile: string;
  /** Where the wrapper config writes why it refused the user's config. */
  errorFile: string;
};
