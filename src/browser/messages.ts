/**
 * The wire between the agent and one browser runner process (runner/main.ts), and what a
 * browser run reports (docs/architecture.md, "Browser checks").
 *
 * Agent → runner: one JSON {@link RunnerPayload} on the runner's stdin, then end of file. The
 * runner is started before a job arrives (warm): it loads Playwright, says `ready`, and blocks
 * reading its payload.
 *
 * Runner → agent: newline-delimited JSON {@link RunnerMessage}s on file descriptor 3, written with
 * blocking writes. The runner shares its process with user code, so every line is untrusted: the
 * agent bounds what it reads (per line and in all) and parses with {@link parseRunnerMessage},
 * which keeps a line that is not a well-formed message as output text.
 */

import type { ToolAnswer } from './tool-messages.js';

/** How a check's script is written (docs/checks.md, "Browser, multi-step and Playwright check suites"). */
export type ScriptShape =
  /** A `@playwright/test` spec: `import { test, expect } from '@playwright/test'`, `test(...)`, `test.step`. */
  | 'TEST'
  /** The older shape: the body of an async function with `page`, `context`, `request`, `browser`, `expect` in scope. */
  | 'PLAIN';

/** What the runner needs to run one browser or multi-step check. Times are milliseconds. */
export type RunnerPayload = {
  /** `ws://127.0.0.1:<port>/<unguessable path>` of the warm browser (the browser host's `launchServer`). */
  wsEndpoint: string;
  /** BROWSER or MULTI_STEP (a multi-step check gets no page unless its test asks for one). */
  checkType: 'BROWSER' | 'MULTI_STEP';
  /** The check's script, JavaScript (TypeScript types are stripped where Node can: 22.13 and later). */
  code: string;
  /**
   * The check's dependency files (relative paths from the script's folder): a TEST script imports them
   * with relative specifiers (`import { login } from './helpers/login'`), as ES modules; optional.
   */
  files?: { path: string; content: string }[];
  /** Null: detected from the code (an import or require of `@playwright/test` is the TEST shape). */
  shape: ScriptShape | null;
  /** The script's whole `process.env`: the check's merged variables and the runtime variables. */
  env: Record<string, string>;
  /**
   * Values to keep out of screenshots: an input that received one (fill, type, press) is masked in
   * every screenshot the runner takes. The agent scrubs every artifact again after the run.
   */
  secrets: string[];
  /** Time the script may run, from the payload's arrival, milliseconds. */
  timeoutMs: number;
  /**
   * How long before `timeoutMs` the runner stops the script to capture what it can (a screenshot,
   * the trace so far, the context closed), milliseconds.
   */
  captureMarginMs: number;
  /** Record a video of each page (WebM, needs ffmpeg); tracing is always on. */
  video: boolean;
  /** Longest single log message kept, characters; the runner cuts longer ones. */
  maxLogChars: number;
  /** Most log lines, errors, failed requests and console errors kept each; the rest are counted. */
  maxEntries: number;
};

/** Levels of script output (the result's RunLog levels). */
export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** A place in the check's script, 1-based. */
export type ScriptLocation = { line: number; column: number };

/** One error of a run: what failed and, where it points into the script, where. */
export type BrowserRunError = {
  /**
   * ASSERTION: a failed `expect`; SCRIPT: the script threw; TIMEOUT: a Playwright timeout or the
   * run's deadline; PAGE: an uncaught error in a page; CONSOLE: `console.error` in a page;
   * REQUEST: a request of a page that failed (no answer, aborted) or answered 4xx/5xx for the main frame.
   */
  kind: 'ASSERTION' | 'SCRIPT' | 'TIMEOUT' | 'PAGE' | 'CONSOLE' | 'REQUEST';
  /** One line: `expect(locator).toHaveText(expected) failed`. */
  message: string;
  /** Stack or call log, cut to a few KiB; null when there is none. */
  detail: string | null;
  /** In the script, when a stack frame points there. */
  location: ScriptLocation | null;
  /** The page's URL for PAGE, CONSOLE and REQUEST errors. */
  url: string | null;
};

/** One `test.step` (or a whole `test()`): its name, nesting and timing. */
export type BrowserStep = {
  /** The step's title; a test's title for the step of a whole test. */
  name: string;
  /** 0 for a test, 1 for its steps, 2 for steps within them, … */
  depth: number;
  /** Milliseconds from the script's start. */
  startMs: number;
  durationMs: number;
  status: 'PASSED' | 'FAILED' | 'SKIPPED';
  /** The error's message when FAILED. */
  error: string | null;
};

/**
 * Web vitals of one page (the runtime's `web-vitals`), in milliseconds except CLS (unitless);
 * null when the page did not report it (LCP before any paint, INP without an interaction).
 */
export type WebVitals = {
  FCP: number | null;
  LCP: number | null;
  CLS: number | null;
  TBT: number | null;
  INP: number | null;
  TTFB: number | null;
};

/** A page the script visited (each main-frame navigation). */
export type BrowserPage = { url: string; webVitals: WebVitals };

/** A file the runner left in its temp dir for upload, by its name there (no slashes). */
export type RunnerArtifact = {
  name: string;
  kind: 'TRACE' | 'SCREENSHOT' | 'VIDEO';
  /** Size on disk when reported, bytes (the agent measures again). */
  sizeBytes: number;
};

/** What one run reports in its `done` message. */
export type BrowserRunReport = {
  /** PASSED when every test passed; browser checks have no degraded state. */
  status: 'PASSED' | 'FAILED';
  shape: ScriptShape;
  /** The first error, the run's `errorMessage`; null when it passed. */
  errorMessage: string | null;
  errors: BrowserRunError[];
  /** Errors beyond `maxEntries` that were dropped. */
  droppedErrors: number;
  steps: BrowserStep[];
  pages: BrowserPage[];
  /** The run stopped at its deadline (the capture margin) rather than finishing. */
  timedOut: boolean;
  /** Milliseconds from the payload's arrival to the script's first statement. */
  startupMs: number;
  /** Milliseconds the script ran. */
  durationMs: number;
  versions: { playwright: string; browser: string };
  artifacts: RunnerArtifact[];
};

/** One line on the runner → agent channel. */
export type RunnerMessage =
  /** Started, Playwright loaded, waiting for its payload (warm). `playwright` is the loaded version. */
  | { t: 'ready'; playwright: string }
  /** A console or stdout/stderr line of the script; `malformed` when the line was not a message at all. */
  | { t: 'log'; level: LogLevel; msg: string; time: string; malformed?: true }
  /** A value the script put in `process.env.SERVICE_SECRET_*` or `OUTPOST_SECRET_*`, sent at once. */
  | { t: 'secret'; value: string }
  /** A step that ended, sent at once so a killed run still reports the steps it finished. */
  | { t: 'step'; step: BrowserStep }
  /** An artifact written so far (the partial trace of a run the agent may have to kill). */
  | { t: 'artifact'; artifact: RunnerArtifact }
  /** The run ended (passed, failed or stopped at its deadline) and reported everything. */
  | { t: 'done'; report: BrowserRunReport }
  /** The runner itself could not run the check (connect failed, bad payload). */
  | { t: 'error'; message: string }
  /** The answer to one call of a tool session (tool-messages.ts). */
  | ToolAnswer;
