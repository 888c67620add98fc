import { randomInt } from 'node:crypto';
import { OutpostError } from '../../shared/errors.js';
import { ICMP_TYPES, type IcmpAddon, type NativeSocket, type SocketType } from './addon.js';

/** How a sent echo request ended: its RTT (ms) and TTL, or null for both when it was lost. */
export type EchoSettle = (rttMs: number | null, ttl: number | null) => void;

type Pending = {
  address: string;
  txMs: number;
  timeoutMs: number;
  timer: NodeJS.Timeout;
  settle: EchoSettle;
};

const SEQUENCE_SPACE = 0x10000;

/**
 * Sends after which the socket is read before sending more. A burst of requests to fast
 * targets (loopback answers inside sendto) would otherwise queue more replies than the
 * receive buffer holds, and the kernel would drop them. When the event loop has kept up,
 * the read costs one empty recvmsg.
 */
const SENDS_BETWEEN_READS = 32;

/**
 * One ICMP echo socket of one address family, shared by every ping of a Pinger.
 * Replies are matched by identifier (ours, or the one the kernel gave a datagram
 * socket), sequence (a 16-bit counter of this socket, so concurrent pings never
 * collide) and source address.
 */
export class EchoSocket {
  readonly family: 4 | 6;
  readonly kind: SocketType;
  /** The identifier of our echo requests. */
  readonly identifier: number;
  readonly #addon: IcmpAddon;
  readonly #socket: NativeSocket;
  readonly #pending = new Map<number, Pending>();
  #nextSequence = randomInt(SEQUENCE_SPACE);
  #closed = false;
  #sendsSinceRead = 0;

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
      (_type, identifier, sequence, ttl, rxMs, sourceAddress) =>
        this.#onPacket(identifier, sequence, ttl, rxMs, sourceAddress),
    );
    this.#socket = opened.socket;
    this.kind = opened.kind;
    // Raw sockets see every echo reply of the host: a random identifier keeps ours apart.
    this.identifier = opened.identifier ?? randomInt(SEQUENCE_SPACE);
  }

  /** Echo requests waiting for their reply. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /**
   * Sends one echo request to `address` (numeric, canonical form) with `payloadBytes` of data
   * and calls `settle` exactly once: with the RTT when the reply comes within `timeoutMs`,
   * with nulls when it does not. Returns the sequence number used.
   * @throws the addon's error (`code` an errno name such as ENETUNREACH) when sendto fails;
   *   `settle` is then never called.
   */
  send(address: string, payloadBytes: number, timeoutMs: number, settle: EchoSettle): number {
    if (this.#closed) throw new OutpostError('OUTPOST_ERR_ABORTED', 'the ICMP socket is closed');
    if (++this.#sendsSinceRead > SENDS_BETWEEN_READS) this.#read();
    const sequence = this.#takeSequence();
    const txMs = this.#addon.send(
      this.#socket,
      address,
      ICMP_TYPES[this.family].request,
      this.identifier,
      sequence,
      payloadBytes,
    );
    const timer = setTimeout(() => this.#onTimeout(sequence), timeoutMs);
    this.#pending.set(sequence, { address, txMs, timeoutMs, timer, settle });
    return sequence;
  }

  /** Forgets a pending request without settling it (its ping was aborted). */
  cancel(sequence: number): void {
    const pending = this.#pending.get(sequence);
    if (!pending) return;
    clearTimeout(pending.timer);
    this.#pending.delete(sequence);
  }

  /** Closes the socket; pending requests settle as lost. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#addon.close(this.#socket);
    for (const [sequence, pending] of this.#pending) {
      this.cancel(sequence);
      pending.settle(null, null);
    }
  }

  #takeSequence(): number {
    if (this.#pending.size >= SEQUENCE_SPACE) {
      throw new OutpostError('OUTPOST_ERR_ICMP_SOCKET', 'all 65536 ICMP sequence numbers are in flight');
    }
    let sequence = this.#nextSequence;
    while (this.#pending.has(sequence)) sequence = (sequence + 1) % SEQUENCE_SPACE;
    this.#nextSequence = (sequence + 1) % SEQUENCE_SPACE;
    return sequence;
  }

  #onPacket(
    identifier: number,
    sequence: number,
    ttl: number | null,
    rxMs: number,
    sourceAddress: string,
  ): void {
    if (identifier !== this.identifier) return;
    const pending = this.#pending.get(sequence);
    if (!pending || pending.address !== sourceAddress) return;
    this.cancel(sequence);
    // A clock step between send and receive could make this negative; ping clamps too.
    const rttMs = Math.max(0, rxMs - pending.txMs);
    if (rttMs > pending.timeoutMs) pending.settle(null, null);
    else pending.settle(rttMs, ttl);
  }

  /** Delivers the replies queued on the socket now. */
  #read(): void {
    this.#sendsSinceRead = 0;
    if (!this.#closed) this.#addon.receive(this.#socket);
  }

  #onTimeout(sequence: number): void {
    // libuv runs timers before it polls: a reply that came in time may still be queued.
    this.#read();
    const pending = this.#pending.get(sequence);
    if (!pending) return;
    this.#pending.delete(sequence);
    pending.settle(null, null);
  }
}
