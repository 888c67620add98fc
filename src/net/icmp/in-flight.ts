import { randomInt } from 'node:crypto';
import { OutpostError } from '../../common/errors.js';

/** Keys of requests in flight are 16-bit (ICMP sequence numbers, UDP ports). */
export const SEQUENCE_SPACE = 0x10000;

/** One request sent and not answered yet. `txMs` is the addon's send time (its clock). */
export type InFlightRequest<Settle> = {
  /** Where it went: an answer must come from (or quote) this address. */
  address: string;
  txMs: number;
  timeoutMs: number;
  settle: Settle;
};

/**
 * The requests of one socket waiting for their answer (echo requests of the pinger, probes of
 * the route trace): each under a 16-bit key with a timer that calls `onTimeout(key)` once its
 * `timeoutMs` passes. Whoever answers or times a request out `take`s it, so it settles once.
 */
export class InFlight<Settle> {
  readonly #requests = new Map<number, InFlightRequest<Settle> & { timer: NodeJS.Timeout }>();
  readonly #onTimeout: (key: number) => void;
  #nextSequence = randomInt(SEQUENCE_SPACE);

  constructor(onTimeout: (key: number) => void) {
    this.#onTimeout = onTimeout;
  }

  get size(): number {
    return this.#requests.size;
  }

  has(key: number): boolean {
    return this.#requests.has(key);
  }

  get(key: number): InFlightRequest<Settle> | undefined {
    return this.#requests.get(key);
  }

  /**
   * The next sequence number no request in flight holds (a counter from a random start).
   * @throws OutpostError OUTPOST_ERR_ICMP_SOCKET when all 65 536 are in flight.
   */
  nextSequence(): number {
    if (this.#requests.size >= SEQUENCE_SPACE) {
      throw new OutpostError('OUTPOST_ERR_ICMP_SOCKET', 'all 65536 ICMP sequence numbers are in flight');
    }
    let sequence = this.#nextSequence;
    while (this.#requests.has(sequence)) sequence = (sequence + 1) % SEQUENCE_SPACE;
    this.#nextSequence = (sequence + 1) % SEQUENCE_SPACE;
    return sequence;
  }

  /** Records a request sent under `key` and starts its timer. */
  add(key: number, request: InFlightRequest<Settle>): void {
    const timer = setTimeout(() => this.#onTimeout(key), request.timeoutMs);
    this.#requests.set(key, { ...request, timer });
  }

  /** Removes the request (its timer stopped) and returns it; undefined when none is in flight. */
  take(key: number): InFlightRequest<Settle> | undefined {
    const request = this.#requests.get(key);
    if (!request) return undefined;
    clearTimeout(request.timer);
    this.#requests.delete(key);
    return request;
  }

  /** Removes every request and returns them. */
  takeAll(): InFlightRequest<Settle>[] {
    return [...this.#requests.keys()].map((key) => this.take(key) as InFlightRequest<Settle>);
  }
}

/**
 * The round trip of an answer received at `rxMs` (the addon's clock), ms, or null when it came
 * after the request's timeout (then it counts as lost). A clock step between send and receive
 * could make it negative; it is clamped to 0, as ping does.
 */
export function roundTripMs(request: InFlightRequest<unknown>, rxMs: number): number | null {
  const rttMs = Math.max(0, rxMs - request.txMs);
  return rttMs > request.timeoutMs ? null : rttMs;
}
