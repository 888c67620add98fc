import type { Readable } from 'node:stream';

/**
 * What is read from one child's newline-delimited channel at most. Every line is parsed from at
 * most `maxLineBytes` buffered bytes (one line starting with the big-line prefix, such as a
 * `done` report, from at most `maxBigLineBytes`), and the channel as a whole carries at most
 * `maxTotalBytes`: past any of them the reader stops buffering and calls `onOverflow` (the owner
 * kills the child), so a child cannot grow the agent's memory through its channel.
 */
export type LineChannelLimits = {
  /** Longest ordinary line, bytes. */
  maxLineBytes: number;
  /** Longest line that starts with the big-line prefix, bytes (the larger of this and `maxLineBytes` applies). */
  maxBigLineBytes: number;
  /** Most bytes read from the channel in all, bytes. */
  maxTotalBytes: number;
};

/** How {@link readLineChannel} parses and reports the lines of one channel. */
export type LineChannelOptions<M> = {
  /** The caps; called for every line and chunk, so an owner may raise them once a run starts. */
  limits: () => LineChannelLimits;
  /** How a line that may be as long as `maxBigLineBytes` starts (`{"t":"done"`); others get `maxLineBytes`. */
  bigLinePrefix: Buffer;
  /** Turns one complete line (UTF-8, without its newline, never empty) into a message; must not throw. */
  parse: (line: string) => M;
  /** Whether a parsed message stands for a line that was not a message at all. */
  isMalformed: (message: M) => boolean;
  /**
   * Most malformed lines accepted; past it the channel overflows. Each costs a failed
   * JSON.parse (~10 µs), so a flood of them could hold the event loop.
   */
  maxMalformedLines: number;
  /** Who reads, for overflow reasons: `sent more than N bytes to ${receiver}`. */
  receiver: string;
  /** Each message, in order. */
  onMessage: (message: M) => void;
  /** A cap was passed; `what` says which (`sent a message larger than 262144 bytes`). Called once. */
  onOverflow: (what: string) => void;
};

/** Channel lines read in one turn of the event loop (each costs ~1-2 µs to parse and handle). */
export const LINES_PER_TURN = 512;

/**
 * Whether the line being buffered (`pending`, then `part`) starts with `prefix`: reads only the first
 * `prefix.length` bytes (O(prefix), not O(line)).
 */
function startsWith(pending: readonly Buffer[], part: Buffer, prefix: Buffer): boolean {
  const head: Buffer[] = [];
  let length = 0;
  for (const piece of [...pending.slice(0, prefix.length), part]) {
    if (length >= prefix.length) break;
    head.push(piece);
    length += piece.length;
  }
  return Buffer.concat(head).subarray(0, prefix.length).equals(prefix);
}

/**
 * Reads `channel` (a child's pipe) as newline-delimited lines within `options.limits()`.
 *
 * Lines are split in O(chunk) per chunk (only the new chunk is searched), buffering at most one
 * line's cap; at most {@link LINES_PER_TURN} lines are handled per turn of the event loop (the
 * pipe is paused meanwhile), so a flooding child cannot hold the loop. Past a cap the rest of the
 * channel is read and dropped unparsed, and `onOverflow` is called once. Empty lines are skipped.
 *
 * @param channel the readable end of the child's channel (Buffers, no encoding set).
 * @param options parsing, caps and callbacks.
 * @returns `restartCounts`, which starts the total-bytes and malformed-lines counts over (a
 *   child that runs one piece of user code after another is held to the caps per piece).
 */
export function readLineChannel<M>(
  channel: Readable,
  options: LineChannelOptions<M>,
): { restartCounts(): void } {
  const prefix = options.bigLinePrefix;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  /** Whether the line being buffered is a big line; null until it passes maxLineBytes. */
  let bigLine: boolean | null = null;
  let totalBytes = 0;
  let malformed = 0;
  let overflowed = false;
  let waiting = false;
  const overflow = (what: string) => {
    overflowed = true;
    pending = [];
    pendingBytes = 0;
    // The rest is read and dropped (a paused pipe would block the child's kill-free exit).
    channel.removeAllListeners('data');
    channel.on('data', () => {});
    channel.resume();
    options.onOverflow(what);
  };
  /** Adds part of a line; when `complete`, parses the line. False once past a cap. O(part). */
  const take = (part: Buffer, complete: boolean): boolean => {
    const limits = options.limits();
    const bytes = pendingBytes + part.length;
    if (bytes > limits.maxLineBytes) {
      bigLine ??= startsWith(pending, part, prefix);
      const cap = bigLine ? Math.max(limits.maxBigLineBytes, limits.maxLineBytes) : limits.maxLineBytes;
      if (bytes > cap) {
        overflow(`sent a message larger than ${cap} bytes`);
        return false;
      }
    }
    if (!complete) {
      // A copy: a subarray would keep the whole chunk alive.
      pending.push(Buffer.from(part));
      pendingBytes = bytes;
      return true;
    }
    const text =
      pending.length === 0 ? part.toString('utf8') : Buffer.concat([...pending, part]).toString('utf8');
    pending = [];
    pendingBytes = 0;
    bigLine = null;
    if (text === '') return true;
    const message = options.parse(text);
    if (options.isMalformed(message) && ++malformed > options.maxMalformedLines) {
      overflow(
        `wrote more than ${options.maxMalformedLines} lines that are not messages to ${options.receiver}`,
      );
      return false;
    }
    options.onMessage(message);
    return !overflowed;
  };
  /** Reads lines of `chunk` from `from`, at most LINES_PER_TURN, then lets the event loop turn. */
  const read = (chunk: Buffer, from: number): void => {
    let start = from;
    let lines = 0;
    for (let at = chunk.indexOf(10, start); at !== -1; at = chunk.indexOf(10, start)) {
      // An empty line costs nothing.
      if (at > start || pending.length > 0) {
        if (!take(chunk.subarray(start, at), true)) return;
      }
      start = at + 1;
      if (++lines >= LINES_PER_TURN && start < chunk.length) {
        // libuv hands over up to 32 reads of a pipe in one turn of the event loop: the rest
        // of this chunk, and the chunks after it, wait for the next turn.
        channel.pause();
        setImmediate(() => {
          if (overflowed) return;
          read(chunk, start);
          if (!overflowed && !waiting) channel.resume();
        });
        waiting = true;
        return;
      }
    }
    waiting = false;
    if (start < chunk.length) take(chunk.subarray(start), false);
  };
  channel.on('data', (chunk: Buffer) => {
    if (overflowed) return;
    totalBytes += chunk.length;
    const { maxTotalBytes } = options.limits();
    if (totalBytes > maxTotalBytes) {
      overflow(`sent more than ${maxTotalBytes} bytes to ${options.receiver}`);
      return;
    }
    read(chunk, 0);
  });
  return {
    restartCounts() {
      totalBytes = 0;
      malformed = 0;
    },
  };
}
