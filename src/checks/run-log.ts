import type { RunLog } from '../protocol/index.js';
import type { Scrubber } from '../common/scrub.js';
import type { Logger } from '../common/logger.js';
import { isoNow } from '../common/clock.js';

/**
 * The agent-log level of each run-log level. A run's lines are data about the target (a failed
 * assertion, a script's console.error), not trouble of the agent: at most INFO in the agent's own log,
 * the run's level kept in the `runLevel` field. The result's `logs[]` keep their own levels.
 */
const PINO_METHODS = { DEBUG: 'debug', INFO: 'info', WARN: 'info', ERROR: 'info' } as const;

/** Options of {@link RunLogRecorder}. */
export type RunLogOptions = {
  /**
   * Hold the lines meant for the agent log until {@link RunLogRecorder.flushAgentLog}, and scrub
   * them then: a run that learns secrets late (credential header values a setup script set,
   * after it printed them) logs nothing before its scrubber knows every secret.
   */
  holdAgentLog?: boolean;
};

/** The log lines of one run: kept for the result's `logs[]` and mirrored to the job's logger. */
export class RunLogRecorder {
  readonly lines: RunLog[] = [];
  readonly #log: Logger;
  readonly #held: Array<{
    level: keyof typeof PINO_METHODS;
    msg: string;
    fields: Record<string, unknown>;
  }> | null;
  #scrubber: Scrubber | null = null;

  constructor(log: Logger, options: RunLogOptions = {}) {
    this.#log = log;
    this.#held = options.holdAgentLog ? [] : null;
  }

  /**
   * Scrubs every line recorded from now on, before it is kept or reaches the agent log, with
   * `scrubber` (which may learn more secrets later; lines already kept are not revisited, held
   * agent-log lines are scrubbed again when flushed).
   */
  scrubWith(scrubber: Scrubber): void {
    this.#scrubber = scrubber;
  }

  /** Records `msg`; `fields` go to the agent log only. */
  add(level: keyof typeof PINO_METHODS, msg: string, fields: Record<string, unknown> = {}): void {
    this.record({ time: isoNow(), level, msg }, fields);
  }

  /** Records a line that carries its own time (a script's console output). */
  record(line: RunLog, fields: Record<string, unknown> = {}): void {
    const msg = this.#scrubber ? this.#scrubber.text(line.msg) : line.msg;
    this.lines.push({ time: line.time, level: line.level, msg });
    const method = PINO_METHODS[line.level];
    if (this.#held !== null) this.#held.push({ level: line.level, msg, fields });
    // A level the agent log leaves out costs no object for it.
    else if (this.#log.isLevelEnabled(method)) this.#log[method]({ ...fields, runLevel: line.level }, msg);
  }

  /**
   * Writes the held agent-log lines (see RunLogOptions.holdAgentLog), scrubbed with every secret
   * known now; when the scrubber overflowed, one ERROR line saying they were withheld instead.
   */
  flushAgentLog(): void {
    if (this.#held === null) return;
    const scrubber = this.#scrubber;
    if (scrubber?.overflowed) {
      // Nothing of the run can be promised scrubbed: one line says why its lines are not written.
      const count = this.#held.splice(0).length;
      this.#log.error(
        { withheldLines: count },
        `run log withheld: the run had ${scrubber.overflowReason}, more than the agent can scrub`,
      );
      return;
    }
    for (const { level, msg, fields } of this.#held.splice(0)) {
      this.#log[PINO_METHODS[level]](
        { ...(scrubber ? scrubber.value(fields) : fields), runLevel: level },
        scrubber ? scrubber.text(msg) : msg,
      );
    }
  }
}
