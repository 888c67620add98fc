import { createRequire } from 'node:module';
import { join } from 'node:path';
import { OutpostError } from '../../common/errors.js';
import { PACKAGE_ROOT } from '../../common/paths.js';

/** The kind of ICMP socket the kernel gave us: `datagram` (unprivileged ping socket) or `raw` (CAP_NET_RAW). */
export type SocketType = 'datagram' | 'raw';

/** Opaque handle of one native ICMP socket. */
export type NativeSocket = { readonly __brand: 'NativeSocket' };

/**
 * Called for each received echo message of the socket's type. `rxMs` is the kernel receive
 * time (SO_TIMESTAMPNS) in ms since the addon's epoch; `ttl` the IPv4 TTL or IPv6 hop limit.
 *
 * A socket opened with `OPEN_FLAGS.trace` also gets the ICMP errors answering its probes
 * (Time Exceeded, Destination Unreachable): `type` and `code` are the error's, `identifier`
 * and `sequence` those of the probe it quotes, `sourceAddress` the router that sent it and
 * `destination` where the probe was going. For an echo reply `code` is 0 and `destination`
 * equals `sourceAddress`. A UDP trace socket reports `identifier` = its local port,
 * `sequence` = the probe's destination port, and a UDP datagram answering a probe with
 * `type` -1.
 */
export type PacketListener = (
  type: number,
  identifier: number,
  sequence: number,
  ttl: number | null,
  rxMs: number,
  sourceAddress: string,
  icmpBytes: number,
  code: number,
  destination: string,
) => void;

/**
 * Called by a socket opened with `OPEN_FLAGS.batch` once per wakeup with the number of echo
 * replies it wrote to the socket's `records` (see {@link BATCH_RECORD_FIELDS}).
 */
export type BatchListener = (count: number) => void;

/**
 * Flags of `open` (native/icmp.c): `trace` delivers the ICMP errors that answer our probes
 * (raw sockets: the kernel filter passes them; datagram sockets: IP_RECVERR / IPV6_RECVERR);
 * `udp` (only together with `trace`) opens a UDP socket whose probes are UDP datagrams;
 * `batch` (alone) delivers echo replies many per call, as records, and allows `sendEchoes`.
 */
export const OPEN_FLAGS = { trace: 1, udp: 2, batch: 4 } as const;

/**
 * Numbers per reply in the `records` of a batch socket: identifier, sequence, TTL or hop limit
 * (-1 unknown), kernel receive time (ms since the epoch) and the source address as four 32-bit
 * words (IPv4: the address, then zeros; IPv6: its 16 bytes, big endian). `sendEchoes` reports
 * each destination in the same four words.
 */
export const BATCH_RECORD_FIELDS = 8;

/** The functions of native/icmp.c (see the comment at its top). */
export type IcmpAddon = {
  /**
   * Opens a batch socket (`OPEN_FLAGS.batch`): echo replies of `receiveType` reach `onReplies`
   * many per call, in `records` (256 records of {@link BATCH_RECORD_FIELDS} numbers).
   * `preference` as below. `identifier`: a datagram socket's, given by the kernel; a raw socket's
   * own, random, with a kernel socket filter that drops every reply carrying another (a kernel
   * that refuses the filter still gets the socket; its replies are then told apart by the caller
   * alone). Throws with `code` an errno name.
   */
  open(
    family: 4 | 6,
    preference: 0 | 1 | 2,
    receiveType: number,
    onReplies: BatchListener,
    flags: typeof OPEN_FLAGS.batch,
  ): { socket: NativeSocket; kind: SocketType; identifier: number | null; records: Float64Array };
  /**
   * preference: 0 datagram then raw, 1 datagram only, 2 raw only (ignored with `OPEN_FLAGS.udp`).
   * `flags`: a sum of OPEN_FLAGS but `batch`, default 0. Throws with `code` an errno name.
   */
  open(
    family: 4 | 6,
    preference: 0 | 1 | 2,
    receiveType: number,
    onPacket: PacketListener,
    flags?: number,
  ): { socket: NativeSocket; kind: SocketType; identifier: number | null };
  /**
   * Sends one echo message (a UDP socket: `payloadBytes` of data to port `sequence`, 1–65535);
   * returns the CLOCK_REALTIME time taken just before sendto, ms since the epoch. `hopLimit`
   * (1–255) sets the IPv4 TTL / IPv6 hop limit of this message; without it the kernel default applies.
   */
  send(
    socket: NativeSocket,
    address: string,
    type: number,
    identifier: number,
    sequence: number,
    payloadBytes: number,
    hopLimit?: number,
  ): number;
  /**
   * Sends `count` (1–1024) echo requests of a batch socket in one call: request i to
   * `addresses[i]` (numeric) with sequence `sequences[i]`, one sendto each. Writes each one's
   * send time (CLOCK_REALTIME just before its sendto, ms since the epoch) to `txMs[i]`, its errno
   * (0 when sent; EINVAL for an address that is not numeric) to `errors[i]` and its destination's
   * address words (see {@link BATCH_RECORD_FIELDS}) to `addressWords[4i…4i+3]`. One request's
   * failure does not stop the others.
   * @throws RangeError for a bad argument or an array shorter than `count`.
   */
  sendEchoes(
    socket: NativeSocket,
    type: number,
    identifier: number,
    payloadBytes: number,
    addresses: readonly string[],
    sequences: Int32Array,
    count: number,
    txMs: Float64Array,
    errors: Int32Array,
    addressWords: Float64Array,
  ): void;
  /** Delivers the packets queued on the socket now, synchronously. */
  receive(socket: NativeSocket): void;
  close(socket: NativeSocket): void;
  /** CLOCK_REALTIME now, ms since the epoch. */
  now(): number;
  /** Whole second of CLOCK_REALTIME the addon's millisecond times count from. */
  readonly epochSeconds: number;
};

/** ICMP message types of echo requests and replies (RFC 792, RFC 4443). */
export const ICMP_TYPES = {
  4: { request: 8, reply: 0 },
  6: { request: 128, reply: 129 },
} as const;

/** Where `npm ci` (node-gyp, from binding.gyp at the package root) puts the addon. */
export const ADDON_PATH = join(PACKAGE_ROOT, 'build', 'Release', 'outpost_icmp.node');

let loaded: IcmpAddon | undefined;

/**
 * Loads the native ICMP addon once.
 * @throws OutpostError `OUTPOST_ERR_ICMP_SOCKET` when it is not built or not supported on this OS.
 */
export function loadIcmpAddon(): IcmpAddon {
  if (loaded) return loaded;
  if (process.platform !== 'linux') {
    throw new OutpostError('OUTPOST_ERR_ICMP_SOCKET', `ICMP checks need Linux; this is ${process.platform}`);
  }
  try {
    loaded = createRequire(import.meta.url)(ADDON_PATH) as IcmpAddon;
    return loaded;
  } catch (err) {
    throw new OutpostError(
      'OUTPOST_ERR_ICMP_SOCKET',
      `the ICMP addon ${ADDON_PATH} cannot be loaded; build it with "npm rebuild" (needs python3, make and a C compiler)`,
      { cause: err },
    );
  }
}
