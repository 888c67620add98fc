import type {
  BrowserPage,
  BrowserRunError,
  BrowserRunReport,
  BrowserStep,
  LogLevel,
  RunnerArtifact,
  RunnerMessage,
  ScriptLocation,
  WebVitals,
} from './messages.js';

/**
 * Parsing of the runner → agent channel (messages.ts). The runner shares its process with user
 * code, so a line is untrusted: every field is checked and rebuilt (no property of the parsed
 * object is passed on as it is), and a line that is not a well-formed message becomes a `log`
 * line marked `malformed`.
 */

const LEVELS: ReadonlySet<string> = new Set(['DEBUG', 'INFO', 'WARN', 'ERROR']);
const ERROR_KINDS: ReadonlySet<string> = new Set([
  'ASSERTION',
  'SCRIPT',
  'TIMEOUT',
  'PAGE',
  'CONSOLE',
  'REQUEST',
]);
const STEP_STATUSES: ReadonlySet<string> = new Set(['PASSED', 'FAILED', 'SKIPPED']);
const ARTIFACT_KINDS: ReadonlySet<string> = new Set(['TRACE', 'SCREENSHOT', 'VIDEO']);
const VITALS = ['FCP', 'LCP', 'CLS', 'TBT', 'INP', 'TTFB'] as const;
/** Longest string kept from any field of a message, characters (messages are capped in bytes too). */
const MAX_FIELD_CHARS = 65_536;
/** Most entries kept from any list of a `done` report. */
const MAX_LIST_ENTRIES = 10_000;

type Obj = Record<string, unknown>;

const isRecord = (value: unknown): value is Obj =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const num = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null;
const nonNegative = (value: unknown): number => Math.max(0, num(value) ?? 0);
const str = (value: unknown): string | null =>
  typeof value === 'string' ? value.slice(0, MAX_FIELD_CHARS) : null;
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value.slice(0, MAX_LIST_ENTRIES) : []);

function location(value: unknown): ScriptLocation | null {
  if (!isRecord(value)) return null;
  const line = num(value.line);
  const column = num(value.column);
  return line !== null && column !== null && line >= 1 && column >= 0 ? { line, column } : null;
}

function runError(value: unknown): BrowserRunError | null {
  if (!isRecord(value) || !ERROR_KINDS.has(String(value.kind))) return null;
  const message = str(value.message);
  if (message === null) return null;
  return {
    kind: value.kind as BrowserRunError['kind'],
    message,
    detail: str(value.detail),
    location: location(value.location),
    url: str(value.url),
  };
}

/** A step as the runner sent it, or null when it is not one. */
export function parseStep(value: unknown): BrowserStep | null {
  if (!isRecord(value) || !STEP_STATUSES.has(String(value.status))) return null;
  const name = str(value.name);
  const depth = num(value.depth);
  if (name === null || depth === null || !Number.isInteger(depth) || depth < 0) return null;
  return {
    name,
    depth,
    startMs: nonNegative(value.startMs),
    durationMs: nonNegative(value.durationMs),
    status: value.status as BrowserStep['status'],
    error: str(value.error),
  };
}

/** An artifact as the runner announced it; null unless its name is a plain file name. */
export function parseArtifact(value: unknown): RunnerArtifact | null {
  if (!isRecord(value) || !ARTIFACT_KINDS.has(String(value.kind))) return null;
  const name = str(value.name);
  if (
    name === null ||
    name === '' ||
    name === '.' ||
    name === '..' ||
    /[/\\\0]/.test(name) ||
    name.length > 255
  ) {
    return null;
  }
  return { name, kind: value.kind as RunnerArtifact['kind'], sizeBytes: nonNegative(value.sizeBytes) };
}

function page(value: unknown): BrowserPage | null {
  if (!isRecord(value)) return null;
  const url = str(value.url);
  if (url === null) return null;
  const vitals = isRecord(value.webVitals) ? value.webVitals : {};
  const webVitals = {} as WebVitals;
  for (const name of VITALS) webVitals[name] = num(vitals[name]);
  return { url, webVitals };
}

const kept = <T>(values: unknown[], parse: (value: unknown) => T | null): T[] =>
  values.map(parse).filter((value): value is T => value !== null);

function report(value: unknown): BrowserRunReport | null {
  if (!isRecord(value)) return null;
  if (value.status !== 'PASSED' && value.status !== 'FAILED') return null;
  if (value.shape !== 'TEST' && value.shape !== 'PLAIN') return null;
  const versions = isRecord(value.versions) ? value.versions : {};
  return {
    status: value.status,
    shape: value.shape,
    errorMessage: str(value.errorMessage),
    errors: kept(list(value.errors), runError),
    droppedErrors: nonNegative(value.droppedErrors),
    steps: kept(list(value.steps), parseStep),
    pages: kept(list(value.pages), page),
    timedOut: value.timedOut === true,
    startupMs: nonNegative(value.startupMs),
    durationMs: nonNegative(value.durationMs),
    versions: { playwright: str(versions.playwright) ?? '', browser: str(versions.browser) ?? '' },
    artifacts: kept(list(value.artifacts), parseArtifact),
  };
}

/**
 * Parses one channel line of a runner. Never throws: a line that is not a well-formed
 * {@link RunnerMessage} (not JSON, unknown `t`, a field of the wrong type) is returned as
 * `{ t: 'log', level: 'INFO', msg: line, malformed: true }`.
 *
 * @param line one line without its newline, already bounded by the channel's caps.
 */
export function parseRunnerMessage(line: string): RunnerMessage {
  let value: unknown = null;
  // Only a line that can be an object is parsed: a failed JSON.parse costs ~10 µs.
  if (line.startsWith('{')) {
    try {
      value = JSON.parse(line);
    } catch {
      value = null;
    }
  }
  const raw = (): RunnerMessage => ({
    t: 'log',
    level: 'INFO',
    msg: line,
    time: new Date().toISOString(),
    malformed: true,
  });
  if (!isRecord(value)) return raw();
  switch (value.t) {
    case 'ready':
      return { t: 'ready', playwright: str(value.playwright) ?? '' };
    case 'log': {
      const msg = typeof value.msg === 'string' ? value.msg : null;
      if (msg === null || typeof value.level !== 'string' || !LEVELS.has(value.level)) return raw();
      return {
        t: 'log',
        level: value.level as LogLevel,
        msg,
        time: typeof value.time === 'string' ? value.time.slice(0, 64) : new Date().toISOString(),
      };
    }
    case 'secret':
      return typeof value.value === 'string' ? { t: 'secret', value: value.value } : raw();
    case 'step': {
      const step = parseStep(value.step);
      return step ? { t: 'step', step } : raw();
    }
    case 'artifact': {
      const artifact = parseArtifact(value.artifact);
      return artifact ? { t: 'artifact', artifact } : raw();
    }
    case 'done': {
      const parsed = report(value.report);
      return parsed ? { t: 'done', report: parsed } : raw();
    }
    case 'error': {
      const message = str(value.message);
      return message !== null ? { t: 'error', message } : raw();
    }
    case 'tool': {
      const id = num(value.id);
      const output = str(value.output);
      if (id === null || output === null || typeof value.ok !== 'boolean') return raw();
      return { t: 'tool', id, ok: value.ok, output, code: str(value.code), url: str(value.url) ?? '' };
    }
    default:
      return raw();
  }
}
