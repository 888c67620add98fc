import { describe, expect, it } from 'vitest';
import { RunLogRecorder } from '../../src/checks/run-log.js';
import { createLogger } from '../../src/common/logger.js';
import { Scrubber } from '../../src/common/scrub.js';

/** A logger at `level` whose records are collected as parsed JSON. */
function collectingLogger(level: 'INFO' | 'WARN') {
  const records: Record<string, unknown>[] = [];
  const logger = createLogger({
    level,
    name: 'test',
    destination: { write: (line: string) => void records.push(JSON.parse(line)) },
  });
  return { logger, records };
}

describe('RunLogRecorder', () => {
  it("keeps a run's ERROR and WARN lines at their level in the result, and at INFO in the agent's own log (a failing check is data)", () => {
    const { logger, records } = collectingLogger('WARN');
    const run = new RunLogRecorder(logger);
    run.add('ERROR', 'assertion failed: status code 500 is not 200');
    run.add('WARN', 'the response was slow');
    expect(run.lines.map((l) => [l.level, l.msg])).toEqual([
      ['ERROR', 'assertion failed: status code 500 is not 200'],
      ['WARN', 'the response was slow'],
    ]);
    // `outpost up` logs at WARN: a failing run prints nothing there.
    expect(records).toEqual([]);

    const info = collectingLogger('INFO');
    const held = new RunLogRecorder(info.logger, { holdAgentLog: true });
    held.scrubWith(new Scrubber(['hunter2']));
    held.add('ERROR', 'login with hunter2 failed');
    held.flushAgentLog();
    expect(info.records.map((r) => [r.level, r.runLevel, r.msg])).toEqual([
      [30, 'ERROR', 'login with ***** failed'],
    ]);
  });
});
