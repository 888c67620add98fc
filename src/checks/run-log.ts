import type { RunLog } from '../protocol/index.js';
import type { Logger } from '../shared/logger.js';

const PINO_METHODS = { DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/** The log lines of one run: kept for the result's `logs[]` and mirrored to the job's logger. */
export class RunLogRecorder {
  readonly lines: RunLog[] = [];
  readonly #log: Logger;

  constructor(log: Logger) {
    this.#log = log;
  }

  /** Records `msg`; `fields` go to the agent log only. */
  add(level: keyof typeof PINO_METHODS, msg: string, fields: Record<string, unknown> = {}): void {
    this.lines.push({ time: new Date().toISOString(), level, msg });
    this.#log[PINO_METHODS[level]](fields, msg);
  }
}
