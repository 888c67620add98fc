import type { RunLog } from '../protocol/index.js';
import type { Logger } from '../shared/logger.js';
import type { Scrubber } from '../sandbox/scrub.js';

const PINO_METHODS = { DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/** The log lines of one run: kept for the result's `logs[]` and mirrored to the job's logger. */
export class RunLogRecorder {
  readonly lines: RunLog[] = [];
  readonly #log: Logger;
  #scrubber: Scrubber | null = null;

  constructor(log: Logger) {
    this.#log = log;
  }

  /**
   * Scrubs every line recorded from now on, before it is kept or reaches the agent log, with
   * `scrubber` (which may learn more secrets later; lines already recorded are not revisited).
   */
  scrubWith(scrubber: Scrubber): void {
    this.#scrubber = scrubber;
  }

  /** Records `msg`; `fields` go to the agent log only. */
  add(level: keyof typeof PINO_METHODS, msg: string, fields: Record<string, unknown> = {}): void {
    this.record({ time: new Date().toISOString(), level, msg }, fields);
  }

  /** Records a line that carries its own time (a script's console output). */
  record(line: RunLog, fields: Record<string, unknown> = {}): void {
    const msg = this.#scrubber ? this.#scrubber.text(line.msg) : line.msg;
    this.lines.push({ time: line.time, level: line.level, msg });
    this.#log[PINO_METHODS[line.level]](fields, msg);
  }
}
