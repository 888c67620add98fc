/**
 * The child → parent channel of every child bootstrap (script processes, browser runners, the
 * browser host): newline-delimited JSON written to fd 3, read by the parent with
 * `readLineChannel` (src/common/line-channel.ts).
 *
 * This module is bundled into each child (src/common/compiled-child.ts): it may import only
 * `node:` built-ins. The primitives it uses are taken when the bundle loads, before any user code
 * runs, so a script that reassigns globals (`JSON.stringify`, `fs.writeSync`, `process.exit`)
 * cannot break the report.
 */
import fs from 'node:fs';

/** The file descriptor of the channel: the parent spawns the child with a fourth pipe. */
export const CHANNEL_FD = 3;

/** `JSON.stringify` as it was when the bundle loaded. */
export const stringify = JSON.stringify;
/** `Buffer.from` as it was when the bundle loaded. */
export const bufferFrom = Buffer.from.bind(Buffer);
/** `performance.now` as it was when the bundle loaded, ms. */
export const now = performance.now.bind(performance);
/** `process.exit` as it was when the bundle loaded (a child replaces `process.exit` for scripts). */
export const realExit: (code?: number) => never = process.exit.bind(process);

const writeSync = fs.writeSync;
const pause = new Int32Array(new SharedArrayBuffer(4));

/** The channel of one child process, written with blocking writes. */
export type ChildChannel<M> = {
  /**
   * Writes one message as one line. A flooding script waits here while the parent reads; when the
   * parent is gone (any write error but EAGAIN) there is nobody to run for: `finished` is set and
   * the process exits at once with code 70.
   */
  send(message: M): void;
  /** `send` for a message already serialised (JSON without its newline). */
  sendLine(json: string): void;
  /**
   * True once the child sent its last message (or lost its parent): the child's own flag, set by
   * the bootstrap when it finishes and read by its exit and error handlers.
   */
  finished: boolean;
};

/**
 * Opens the channel on {@link CHANNEL_FD}. Nothing is written until `send` is called.
 *
 * @returns the channel; `finished` starts false.
 */
export function openChannel<M>(): ChildChannel<M> {
  const channel: ChildChannel<M> = {
    finished: false,
    send(message: M): void {
      channel.sendLine(stringify(message));
    },
    sendLine(json: string): void {
      const bytes = bufferFrom(`${json}\n`);
      let offset = 0;
      while (offset < bytes.length) {
        try {
          offset += writeSync(CHANNEL_FD, bytes, offset);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
            Atomics.wait(pause, 0, 0, 1);
            continue;
          }
          channel.finished = true;
          realExit(70);
        }
      }
    },
  };
  return channel;
}
