import { randomInt } from 'node:crypto';
import { getSystemErrorName } from 'node:util';
import { OutpostError } from '../../common/errors.js';
import {
  BATCH_RECORD_FIELDS,
  ICMP_TYPES,
  type IcmpAddon,
  type NativeSocket,
  OPEN_FLAGS,
  type SocketType,
} from './addon.js';
import { SEQUENCE_SPACE } from './in-flight.js';

/**
 * Echo requests per native send call. Between two calls the socket is read: a burst of requests
 * to fast targets (loopback answers inside sendto) would otherwise queue more replies than the
 * receive buffer holds, and the kernel would drop them. When the event loop has kept up, the
 * read costs one empty recvmmsg.
 */
const SENDS_PER_CALL = 32;

/**
 * Echo requests per event-loop turn: a flush sends at most this many (a few ms of sendto) and
 * leaves the rest due for the next turn, so that thousands of checks due at once never hold
 * the event loop for long and their replies are read in between.
 */
const SENDS_PER_FLUSH = 1024;

/** What a ping run hears from the socket. Calls come from the socket's event-loop callbacks. */
export type EchoRunListener = {
  /** Request `index` (0-based) ended: its RTT (ms) and TTL, or nulls when it was lost. */
  onEcho(index: number, rttMs: number | null, ttl: number | null): void;
  /** Request `index` could not be sent: `code` is the errno name of sendto (ENETUNREACH, …). */
  onSendError(index: number, code: string): void;
  /** The run cannot go on (the socket closed, or every sequence number is in flight). */
  onFailure(error: Error): void;
};

/**
 * One ping run as the socket's scheduler sees it: `count` echo requests to `address`, the first
 * as soon as the socket's next batch goes out, each next one `intervalMs` after the previous.
 */
export class EchoRun {
  /** Requests handed to the socket so far: the index of the next. */
  sent = 0;
  /** performance.now() time, ms, from which the next request may go. */
  dueMs = 0;
  /** No more requests go and no more answers are heard (ended, aborted or failed). */
  stopped = false;
  /** The address as four words, as the addon's records carry a reply's source; set at the first send. */
  readonly words = [Number.NaN, Number.NaN, Number.NaN, Number.NaN];
  /** The sequence number of each request in flight, -1 for the others. */
  readonly sequences: Int32Array;

  /**
   * `address`: numeric, canonical; `intervalMs` ≥ 0, `timeoutMs` > 0 (each request's wait),
   * `payloadBytes` 0–65000, `count` 1–65535 (checked by the Pinger).
   */
  constructor(
    readonly address: string,
    readonly count: number,
    readonly intervalMs: number,
    readonly timeoutMs: number,
    readonly payloadBytes: number,
    readonly listener: EchoRunListener,
  ) {
    this.sequences = new Int32Array(count).fill(-1);
  }
}

/**
 * Requests of one batch that share their timeout: one timer for all of them, stopped once
 * none of them is in flight any more.
 */
type TimeoutGroup = {
  sequences: number[];
  stamps: number[];
  /** Requests of the group still in flight. */
  remaining: number;
  timer: NodeJS.Timeout | undefined;
};

/**
 * One ICMP echo socket of one address family, shared by every ping of a Pinger, with one
 * pacing scheduler for all of them: runs wait in a heap by the time their next request is
 * due; one timer sends every request due in one batch (one native call per
 * {@link SENDS_PER_CALL} requests), and the requests of a batch share one timeout timer.
 * Replies come many per callback (the addon's records). They are matched by identifier
 * (ours, or the one the kernel gave a datagram socket), sequence (a 16-bit counter of this
 * socket, so concurrent pings never collide) and source address.
 */
export class EchoSocket {
  readonly family: 4 | 6;
  readonly kind: SocketType;
  /** The identifier of our echo requests. */
  readonly identifier: number;
  readonly #addon: IcmpAddon;
  readonly #socket: NativeSocket;
  readonly #records: Float64Array;
  /** Requests in flight, by sequence number: the run, the request's index in it, its send time and stamp. */
  readonly #runs: (EchoRun | undefined)[] = new Array<EchoRun | undefined>(SEQUENCE_SPACE).fill(undefined);
  readonly #indexes = new Int32Array(SEQUENCE_SPACE);
  readonly #txMs = new Float64Array(SEQUENCE_SPACE);
  /** Bumped at each use of a sequence number: a timeout meant for an earlier use leaves it alone. */
  readonly #stamps = new Uint32Array(SEQUENCE_SPACE);
  readonly #groups: (TimeoutGroup | undefined)[] = new Array<TimeoutGroup | undefined>(SEQUENCE_SPACE).fill(
    undefined,
  );
  #pending = 0;
  #nextSequence = randomInt(SEQUENCE_SPACE);
  /** Runs waiting for their next request, a binary min-heap by dueMs (stopped ones are dropped when popped). */
  readonly #due: EchoRun[] = [];
  #immediate: NodeJS.Immediate | undefined;
  #pacingTimer: NodeJS.Timeout | undefined;
  readonly #timeoutGroups = new Set<TimeoutGroup>();
  // Buffers of one native send call.
  readonly #batchAddresses: string[] = [];
  readonly #batchRuns: EchoRun[] = [];
  readonly #batchSequences = new Int32Array(SENDS_PER_CALL);
  readonly #batchTxMs = new Float64Array(SENDS_PER_CALL);
  readonly #batchErrors = new Int32Array(SENDS_PER_CALL);
  readonly #batchWords = new Float64Array(4 * SENDS_PER_CALL);
  #closed = false;

  /**
   * Opens the socket. `preference`: 0 datagram then raw, 1 datagram only, 2 raw only.
   * @throws the addon's error (with `code`, an errno name) when no socket can be opened.
   */
  constructor(addon: IcmpAddon, family: 4 | 6, preference: 0 | 1 | 2) {
    this.#addon = addon;
    this.family = family;
    const opened = addon.open(
      family,
      preference,
      ICMP_TYPES[family].reply,
      (count) => this.#onReplies(count),
      OPEN_FLAGS.batch,
    );
    this.#socket = opened.socket;
    this.#records = opened.records;
    this.kind = opened.kind;
    // A datagram socket's identifier is the kernel's; the addon gives a raw one its own, with a kernel filter
    // that drops other identifiers' replies (native/icmp.c). The fallback is for an addon that gave none.
    this.identifier = opened.identifier ?? randomInt(SEQUENCE_SPACE);
  }

  /** Echo requests waiting for their reply. */
  get pendingCount(): number {
    return this.#pending;
  }

  /**
   * Starts `run`: its first request goes with the next batch (after the current event-loop
   * turn, so that runs started together share it), each next one `run.intervalMs` after the
   * previous. Its listener hears of every request once.
   * @throws OutpostError OUTPOST_ERR_ABORTED when the socket is closed.
   */
  start(run: EchoRun): void {
    if (this.#closed) throw new OutpostError('OUTPOST_ERR_ABORTED', 'the ICMP socket is closed');
    run.dueMs = performance.now();
    this.#push(run);
    this.#immediate ??= setImmediate(this.#flush);
  }

  /** Stops `run`: it sends no more, and its requests in flight are forgotten without a word. */
  stop(run: EchoRun): void {
    if (run.stopped) return;
    run.stopped = true;
    for (const sequence of run.sequences) {
      if (sequence >= 0 && this.#runs[sequence] === run) this.#take(sequence);
    }
  }

  /** Closes the socket; every run not stopped hears `onFailure` (OUTPOST_ERR_ABORTED). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#addon.close(this.#socket);
    if (this.#immediate) clearImmediate(this.#immediate);
    clearTimeout(this.#pacingTimer);
    for (const group of this.#timeoutGroups) clearTimeout(group.timer);
    this.#timeoutGroups.clear();
    this.#groups.fill(undefined);
    const runs = new Set<EchoRun>(this.#due);
    this.#due.length = 0;
    for (const run of this.#runs) if (run) runs.add(run);
    this.#runs.fill(undefined);
    this.#pending = 0;
    const error = new OutpostError('OUTPOST_ERR_ABORTED', 'the ICMP socket is closed');
    for (const run of runs) {
      if (run.stopped) continue;
      run.stopped = true;
      run.listener.onFailure(error);
    }
  }

  /** Sends every request due now, then waits for the next one due. */
  readonly #flush = (): void => {
    this.#immediate = undefined;
    clearTimeout(this.#pacingTimer);
    this.#pacingTimer = undefined;
    if (this.#closed) return;
    const now = performance.now();
    const groups = new Map<number, TimeoutGroup>();
    let calls = 0;
    let reserved = 0;
    while (this.#due.length > 0 && (this.#due[0]!.stopped || this.#due[0]!.dueMs <= now)) {
      if (reserved === SENDS_PER_FLUSH) {
        this.#immediate = setImmediate(this.#flush); // the rest of those due, next turn
        break;
      }
      const run = this.#pop();
      if (run.stopped) continue;
      // One native call sends requests of one payload size; a run of another size starts the next.
      if (this.#batchRuns.length > 0 && run.payloadBytes !== this.#batchRuns[0]!.payloadBytes) {
        this.#sendBatch(groups, calls++);
      }
      let sequence: number;
      try {
        sequence = this.#reserve(run);
      } catch (err) {
        this.#fail(run, err);
        continue;
      }
      reserved++;
      this.#batchRuns.push(run);
      this.#batchAddresses.push(run.address);
      this.#batchSequences[this.#batchRuns.length - 1] = sequence;
      if (this.#batchRuns.length === SENDS_PER_CALL) this.#sendBatch(groups, calls++);
    }
    if (this.#batchRuns.length > 0) this.#sendBatch(groups, calls++);
    if (this.#closed) return;
    for (const [timeoutMs, group] of groups) {
      if (group.remaining === 0) continue; // all answered inside the batch's own reads
      group.timer = setTimeout(() => this.#onTimeout(group), timeoutMs);
      this.#timeoutGroups.add(group);
    }
    this.#armPacing();
  };

  /** Sends the requests gathered in the batch buffers (read the socket first unless it is the first call). */
  #sendBatch(groups: Map<number, TimeoutGroup>, call: number): void {
    const runs = this.#batchRuns;
    const count = runs.length;
    if (call > 0) this.#read();
    if (this.#closed) {
      runs.length = 0;
      this.#batchAddresses.length = 0;
      return;
    }
    try {
      this.#addon.sendEchoes(
        this.#socket,
        ICMP_TYPES[this.family].request,
        this.identifier,
        runs[0]!.payloadBytes,
        this.#batchAddresses,
        this.#batchSequences,
        count,
        this.#batchTxMs,
        this.#batchErrors,
        this.#batchWords,
      );
    } catch (err) {
      for (let i = 0; i < count; i++) {
        if (this.#runs[this.#batchSequences[i]!] === runs[i]) this.#take(this.#batchSequences[i]!);
        this.#fail(runs[i]!, err);
      }
      runs.length = 0;
      this.#batchAddresses.length = 0;
      return;
    }
    // Every request of the call has gone: the next of each run is due an interval from now.
    const sentAt = performance.now();
    for (let i = 0; i < count; i++) {
      const run = runs[i]!;
      const sequence = this.#batchSequences[i]!;
      const index = run.sent++;
      const error = this.#batchErrors[i]!;
      if (this.#runs[sequence] !== run) {
        // Stopped during the call (an abort from a callback of the addon): forgotten already.
      } else if (error !== 0) {
        this.#take(sequence);
        run.listener.onSendError(index, getSystemErrorName(-error));
      } else {
        this.#txMs[sequence] = this.#batchTxMs[i]!;
        if (run.sent === 1) for (let w = 0; w < 4; w++) run.words[w] = this.#batchWords[4 * i + w]!;
        let group = groups.get(run.timeoutMs);
        if (!group) {
          group = { sequences: [], stamps: [], remaining: 0, timer: undefined };
          groups.set(run.timeoutMs, group);
        }
        group.sequences.push(sequence);
        group.stamps.push(this.#stamps[sequence]!);
        group.remaining++;
        this.#groups[sequence] = group;
      }
      if (!run.stopped && run.sent < run.count) {
        run.dueMs = sentAt + run.intervalMs;
        this.#push(run);
      }
    }
    runs.length = 0;
    this.#batchAddresses.length = 0;
  }

  /** Takes a free sequence number for the next request of `run`. */
  #reserve(run: EchoRun): number {
    if (this.#pending >= SEQUENCE_SPACE) {
      throw new OutpostError('OUTPOST_ERR_ICMP_SOCKET', 'all 65536 ICMP sequence numbers are in flight');
    }
    let sequence = this.#nextSequence;
    while (this.#runs[sequence] !== undefined) sequence = (sequence + 1) % SEQUENCE_SPACE;
    this.#nextSequence = (sequence + 1) % SEQUENCE_SPACE;
    this.#runs[sequence] = run;
    this.#indexes[sequence] = run.sent;
    this.#stamps[sequence] = (this.#stamps[sequence]! + 1) >>> 0;
    run.sequences[run.sent] = sequence;
    this.#pending++;
    return sequence;
  }

  /** Frees a sequence number; returns the run it was in flight for. */
  #take(sequence: number): EchoRun | undefined {
    const run = this.#runs[sequence];
    if (run === undefined) return undefined;
    this.#runs[sequence] = undefined;
    run.sequences[this.#indexes[sequence]!] = -1;
    this.#pending--;
    const group = this.#groups[sequence];
    if (group !== undefined) {
      this.#groups[sequence] = undefined;
      if (--group.remaining === 0 && group.timer !== undefined) {
        clearTimeout(group.timer);
        this.#timeoutGroups.delete(group);
      }
    }
    return run;
  }

  #fail(run: EchoRun, err: unknown): void {
    if (run.stopped) return;
    this.stop(run);
    run.listener.onFailure(err instanceof Error ? err : new Error(String(err)));
  }

  /** Handles `count` replies in the records (see native/icmp.c): each settles its request once. */
  #onReplies(count: number): void {
    const records = this.#records;
    for (let i = 0, at = 0; i < count && !this.#closed; i++, at += BATCH_RECORD_FIELDS) {
      if (records[at] !== this.identifier) continue;
      const sequence = records[at + 1]!;
      const run = this.#runs[sequence];
      if (run === undefined) continue; // late, duplicated, or another socket's
      const words = run.words;
      if (
        records[at + 4] !== words[0] ||
        records[at + 5] !== words[1] ||
        records[at + 6] !== words[2] ||
        records[at + 7] !== words[3]
      ) {
        continue;
      }
      const index = this.#indexes[sequence]!;
      this.#take(sequence);
      // A clock step between send and receive could make it negative: clamped to 0, as ping does.
      const rttMs = Math.max(0, records[at + 3]! - this.#txMs[sequence]!);
      const ttl = records[at + 2]!;
      if (rttMs > run.timeoutMs) run.listener.onEcho(index, null, null);
      else run.listener.onEcho(index, rttMs, ttl < 0 ? null : ttl);
    }
  }

  #onTimeout(group: TimeoutGroup): void {
    this.#timeoutGroups.delete(group);
    // libuv runs timers before it polls: a reply that came in time may still be queued.
    this.#read();
    const { sequences, stamps } = group;
    for (let i = 0; i < sequences.length; i++) {
      const sequence = sequences[i]!;
      if (this.#stamps[sequence] !== stamps[i]) continue;
      const index = this.#indexes[sequence]!;
      this.#take(sequence)?.listener.onEcho(index, null, null);
    }
  }

  /** Delivers the replies queued on the socket now. */
  #read(): void {
    if (!this.#closed) this.#addon.receive(this.#socket);
  }

  /** Sets the pacing timer for the run due first. */
  #armPacing(): void {
    while (this.#due.length > 0 && this.#due[0]!.stopped) this.#pop();
    if (this.#due.length === 0 || this.#immediate) return;
    // Whole milliseconds, rounded up: the timer may fire early by less than one; #flush then re-arms.
    const delayMs = Math.max(1, Math.ceil(this.#due[0]!.dueMs - performance.now()));
    this.#pacingTimer = setTimeout(this.#flush, delayMs);
  }

  #push(run: EchoRun): void {
    const heap = this.#due;
    let at = heap.length;
    heap.push(run);
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (heap[parent]!.dueMs <= run.dueMs) break;
      heap[at] = heap[parent]!;
      at = parent;
    }
    heap[at] = run;
  }

  #pop(): EchoRun {
    const heap = this.#due;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let at = 0;
      for (;;) {
        const left = 2 * at + 1;
        if (left >= heap.length) break;
        const right = left + 1;
        const child = right < heap.length && heap[right]!.dueMs < heap[left]!.dueMs ? right : left;
        if (heap[child]!.dueMs >= last.dueMs) break;
        heap[at] = heap[child]!;
        at = child;
      }
      heap[at] = last;
    }
    return top;
  }
}
