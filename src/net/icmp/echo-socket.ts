import { randomInt } from 'node:crypto';
import { OutpostError } from '../../common/errors.js';
import { ICMP_TYPES, type IcmpAddon, type NativeSocket, type SocketType } from './addon.js';
import { InFlight, roundTripMs, SEQUENCE_SPACE } from './in-flight.js';

/** How a sent echo request ended: its RTT (ms) and TTL, or null for both when it was lost. */
export type EchoSettle = (rttMs: number | null, ttl: number | null) => void;

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
  readonly #pending = new InFlight<EchoSettle>((sequence) => this.#onTimeout(sequence));
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
    const sequence = this.#pending.nextSequence();
    const txMs = this.#addon.send(
      this.#socket,
      address,
      ICMP_TYPES[this.family].request,
      this.identifier,
      sequence,
      payloadBytes,
    );
    this.#pending.add(sequence, { address, txMs, timeoutMs, settle });
    return sequence;
  }

  /** Forgets a pending request without settling it (its ping was aborted). */
  cancel(sequence: number): void {
    this.#pending.take(sequence);
  }

  /** Closes the socket; pending requests settle as lost. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#addon.close(this.#socket);
    for (const pending of this.#pending.takeAll()) pending.settle(null, null);
  }

  #onPacket(
    identifier: number,
    sequence: number,
    ttl: number | null,
    rxMs: number,
    sourceAddress: string,
  ): void {
    if (identifier !== this.identifier) return;
    if (this.#pending.get(sequence)?.address !== sourceAddress) return;
    const pending = this.#pending.take(sequence)!;
    const rttMs = roundTripMs(pending, rxMs);
    pending.settle(rttMs, rttMs === null ? null : ttl);
  }

  /** Delivers the replies queued on the socket now. */
  #read(): void {
    this.#sendsSinceRead = 0;
    if (!this.#closed) this.#addon.receive(this.#socket);
  }

  #onTimeout(sequence: number): void {
    // libuv runs timers before it polls: a reply that came in time may still be queued.
    this.#read();
    this.#pending.take(sequence)?.settle(null, null);
  }
}
