/**
 * What the modules of a browser runner share: the channel, its arguments, the limits the payload
 * sets, what the run collected so far, and the text helpers every report goes through.
 */
import path from 'node:path';
import { openChannel, stringify } from '../../common/child/channel.js';
import type {
  BrowserPage,
  BrowserRunError,
  BrowserRunReport,
  BrowserStep,
  RunnerArtifact,
  RunnerMessage,
} from '../messages.js';

// biome-ignore lint/suspicious/noExplicitAny: Playwright's client objects are typed by the runtime, not here.
export type Any = any;

/** The runner → agent channel (messages.ts). */
export const channel = openChannel<RunnerMessage>();

/** The name scripts carry in stack traces; line numbers are the script's own. */
export const SCRIPT_FILENAME = 'script.js';
/**
 * Longest line sent but `done`, bytes: under the agent's 256 KiB cap (runner-process.ts), which
 * kills a runner past it.
 */
export const MAX_LINE_BYTES = 240 * 1024;
/** Longest `done` line, bytes: under the agent's 4 MiB cap. */
export const MAX_DONE_BYTES = 3_800 * 1024;
/** Longest URL kept in errors and pages, characters (a data: URL can be megabytes). */
export const MAX_URL_CHARS = 2_048;
/** Longest error detail (stack, call log), characters. */
export const MAX_DETAIL_CHARS = 4_096;
/** Longest error message, characters. */
export const MAX_MESSAGE_CHARS = 2_048;

/** runtimes/<id> of this runner (its first argument). */
export const runtimeDir = process.argv[2] ?? '';
/** The runtime's id (its second argument). */
export const runtimeId = process.argv[3] ?? '';
/** The runtime's node_modules: Playwright and what scripts import. */
export const nodeModulesDir = path.join(runtimeDir, 'node_modules');
/** The runner's private temp dir, its working directory: artifacts are written here. */
export const workDir = process.cwd();

/** What the run changes as it goes (the payload's limits first). */
export const runState = {
  /** Longest log line, characters (RunnerPayload.maxLogChars). */
  maxLogChars: 65_536,
  /** Most log lines, errors, steps and pages kept each (RunnerPayload.maxEntries). */
  maxEntries: 1_000,
  /** Log lines sent so far. */
  logCount: 0,
  /** Errors past `maxEntries`. */
  droppedErrors: 0,
  /** When the script started, `performance.now()` ms; 0 before. */
  scriptStart: 0,
  /** From the payload's arrival to the script's start, ms. */
  startupMs: 0,
  /** True once the script ran into its deadline. */
  deadlineHit: false,
  /** The report as things stand, once a run has started (a script calling process.exit gets one too). */
  reportNow: null as ((durationMs: number) => BrowserRunReport) | null,
};

/** Errors of the run, in order (at most `maxEntries`). */
export const errors: BrowserRunError[] = [];
/** Steps of the run as they ended (at most `maxEntries`). */
export const steps: BrowserStep[] = [];
/** Pages visited, with their web vitals (at most `maxEntries`). */
export const pages: BrowserPage[] = [];
/** Files announced in the temp dir. */
export const artifacts: RunnerArtifact[] = [];

const ESC = String.fromCharCode(27);
const ANSI = new RegExp(`${ESC}\\[[0-9;]*m`, 'g');

/** `text` without ANSI colour codes. */
export const stripAnsi = (text: string) => text.replace(ANSI, '');

/** `text` cut to `max` characters, with `…` when it was cut. */
export const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

/**
 * `text` cut so that its JSON string takes at most `maxBytes` (escapes of control characters
 * take up to 6 bytes a character, other characters up to 3).
 */
export function fitJson(text: string, maxBytes: number): string {
  let fitted = text;
  for (let bytes = Buffer.byteLength(stringify(fitted)); bytes > maxBytes; ) {
    fitted = fitted.slice(0, Math.floor((fitted.length * maxBytes) / bytes / 1.05));
    bytes = Buffer.byteLength(stringify(fitted));
  }
  return fitted;
}

/** A promise that settles within `ms` (its value or undefined); never rejects. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
    );
  });
}
