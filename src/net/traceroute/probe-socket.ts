import { randomInt } from 'node:crypto';
import { OutpostError } from '../../common/errors.js';
import { ICMP_TYPES, type IcmpAddon, type NativeSocket, OPEN_FLAGS, type SocketType } from '../icmp/addon.js';
import { InFlight, roundTripMs, SEQUENCE_SPACE } from '../icmp/in-flight.js';

/** The probe kinds of a route trace: ICMP echo requests, or UDP datagrams to unused ports. */
export const TRACE_PROTOCOLS = ['icmp', 'udp'] as const;
export type TraceProtocol = (typeof TRACE_PROTOCOLS)[number];

/** What answered a probe: the target itself, or a router on the way. */
export type ProbeAnswerKind = 'reply' | 'time-exceeded' | 'unreachable';

/** The answer to one probe. */
export type ProbeAnswer = {
  kind: ProbeAnswerKind;
  /** Who answered: the target for a reply, the router (or target) that sent an ICMP error. */
  address: string;
  /** Kernel receive time of the answer minus the time taken just before sendto, ms. */
  rttMs: number;
  /** TTL / hop limit of the answer as received; null when the kernel did not say. */
  ttl: number | null;
  /** ICMP type and code of the answer; -1 and 0 for a UDP datagram answering a UDP probe. */
  icmpType: number;
  icmpCode: number;
};

/** Called exactly once per probe: with its answer, or null when none came within its timeout. */
export type ProbeSettle = (answer: ProbeAnswer | null) => void;

/** ICMP types of the errors a probe may get (RFC 792, RFC 4443), per family. */
const ERROR_TYPES = {
  4: { timeExceeded: 11, unreachable: 3 },
  6: { timeExceeded: 3, unreachable: 1 },
} as const;

/** The type the addon reports for a UDP datagram answering a UDP probe. */
const UDP_DATAGRAM_TYPE = -1;

/** Payload of each probe, bytes: with the headers a 60-byte IPv4 packet, as traceroute sends. */
const PROBE_PAYLOAD_BYTES = 32;

/** Drops a `%scope`: the kernel reports addresses without one. */
function withoutScope(address: string): string {
  const at = address.indexOf('%');
  return at === -1 ? address : address.slice(0, at);
}

/**
 * One socket sending route-trace probes with a chosen TTL / hop limit and matching their
 * answers: echo replies or UDP answers from the target, and the ICMP Time Exceeded and
 * Destination Unreachable errors that quote the probe. ICMP probes use the socket of the
 * native addon (unprivileged datagram, or raw with CAP_NET_RAW) and are told apart by
 * identifier and sequence; UDP probes use an unprivileged UDP socket with IP_RECVERR and are
 * told apart by destination port, which the caller chooses.
 */
export class ProbeSocket {
  readonly family: 4 | 6;
  readonly protocol: TraceProtocol;
  readonly kind: SocketType;
  /** ICMP: the echo identifier of our probes; UDP: our local port. */
  readonly identifier: number;
  readonly #addon: IcmpAddon;
  readonly #socket: NativeSocket;
  readonly #pending = new InFlight<ProbeSettle>((key) => this.#onTimeout(key));
  #closed = false;

  /**
   * Opens the socket. `preference` (ICMP only): 0 datagram then raw, 1 datagram only, 2 raw only.
   * @throws the addon's error (`code` an errno name) when no socket can be opened.
   */
  constructor(addon: IcmpAddon, family: 4 | 6, protocol: TraceProtocol, preference: 0 | 1 | 2) {
    this.#addon = addon;
    this.family = family;
    this.protocol = protocol;
    const flags = protocol === 'udp' ? OPEN_FLAGS.trace | OPEN_FLAGS.udp : OPEN_FLAGS.trace;
    const opened = addon.open(
      family,
      preference,
      ICMP_TYPES[family].reply,
      (type, identifier, sequence, ttl, rxMs, sourceAddress, _bytes, code, destination) =>
        this.#onPacket(type, code, identifier, sequence, ttl, rxMs, sourceAddress, destination),
      flags,
    );
    this.#socket = opened.socket;
    this.kind = opened.kind;
    // A datagram socket's identifier is the kernel's; the addon gives a raw one its own, with a kernel filter
    // that drops other identifiers' messages (native/icmp.c). The fallback is for an addon that gave none.
    this.identifier = opened.identifier ?? randomInt(SEQUENCE_SPACE);
  }

  /**
   * Sends one probe to `address` (numeric, canonical) with TTL / hop limit `hopLimit` and calls
   * `settle` exactly once. A UDP probe goes to `port` (1–65535, unique among pending probes);
   * an ICMP probe takes the next free sequence number. Returns the key to `cancel` it with.
   * @throws the addon's error (`code` an errno name such as ENETUNREACH) when sendto fails;
   *   `settle` is then never called.
   */
  send(address: string, hopLimit: number, timeoutMs: number, settle: ProbeSettle, port = 0): number {
    if (this.#closed) throw new OutpostError('OUTPOST_ERR_ABORTED', 'the probe socket is closed');
    const key = this.protocol === 'udp' ? port : this.#pending.nextSequence();
    if (this.#pending.has(key)) throw new RangeError(`a probe to port ${key} is already pending`);
    const txMs = this.#addon.send(
      this.#socket,
      address,
      ICMP_TYPES[this.family].request,
      this.identifier,
      key,
      PROBE_PAYLOAD_BYTES,
      hopLimit,
    );
    this.#pending.add(key, { address: withoutScope(address), txMs, timeoutMs, settle });
    return key;
  }

  /** Forgets a pending probe without settling it. */
  cancel(key: number): void {
    this.#pending.take(key);
  }

  /** Delivers the answers queued on the socket now (before a deadline declares probes lost). */
  flush(): void {
    if (!this.#closed) this.#addon.receive(this.#socket);
  }

  /** Closes the socket; pending probes are dropped without settling. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#pending.takeAll();
    this.#addon.close(this.#socket);
  }

  #classify(type: number): ProbeAnswerKind | null {
    if (type === ICMP_TYPES[this.family].reply || type === UDP_DATAGRAM_TYPE) return 'reply';
    if (type === ERROR_TYPES[this.family].timeExceeded) return 'time-exceeded';
    if (type === ERROR_TYPES[this.family].unreachable) return 'unreachable';
    return null;
  }

  #onPacket(
    type: number,
    code: number,
    identifier: number,
    sequence: number,
    ttl: number | null,
    rxMs: number,
    sourceAddress: string,
    destination: string,
  ): void {
    if (identifier !== this.identifier) return;
    const kind = this.#classify(type);
    const pending = this.#pending.get(sequence);
    if (kind === null || !pending) return;
    // A reply must come from where the probe went; an error must quote a probe sent there.
    if ((kind === 'reply' ? sourceAddress : destination) !== pending.address) return;
    this.#pending.take(sequence);
    const rttMs = roundTripMs(pending, rxMs);
    pending.settle(
      rttMs === null ? null : { kind, address: sourceAddress, rttMs, ttl, icmpType: type, icmpCode: code },
    );
  }

  #onTimeout(key: number): void {
    // libuv runs timers before it polls: an answer that came in time may still be queued.
    this.flush();
    this.#pending.take(key)?.settle(null);
  }
}
