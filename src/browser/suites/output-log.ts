import { StringDecoder } from 'node:string_decoder';
import type { RunLog } from '../../protocol/index.js';

/** Longest log line kept, characters. */
const MAX_LOG_CHARS = 4_096;
/** Most log lines kept (a flood of short lines costs far more memory than its bytes); the rest are counted. */
const MAX_LOG_LINES = 2_000;
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes are what it removes.
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b[@-_]/g;

/**
 * stdout and stderr of the suite as log lines, within a byte budget and {@link MAX_LOG_LINES}: past
 * either, output is dropped and counted. Colours and cursor codes of the line reporter are removed; long lines are cut.
 */
export class OutputLog {
  readonly #maxBytes: number;
  #bytes = 0;
  #dropped = 0;
  #droppedLines = 0;
  readonly #partial = { stdout: '', stderr: '' };
  /** Per stream, so a character split across two chunks is decoded whole. */
  readonly #decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  readonly #lines: RunLog[] = [];

  /** @param maxBytes most bytes of stdout and stderr kept together. */
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Adds a chunk of `stream`: complete lines are kept (within the budgets), a partial one waits for the rest. */
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

  /** Adds a line of the agent's own (not counted against the budgets). */
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

  /** Every line kept, in order. */
  lines(): RunLog[] {
    return this.#lines;
  }
}
