import { LINK_TYPES } from './format.js';

/** Where a captured packet's TCP payload is, and what orders it within its stream. */
export type TcpSegment = {
  /** Source address and port → destination address and port: one direction of one connection. */
  flow: string;
  /** Sequence number of the first payload byte (RFC 9293). */
  sequence: number;
  /** Payload bounds within the packet's captured bytes; `payloadEnd` may fall short of the wire's. */
  payloadStart: number;
  payloadEnd: number;
  /** The whole payload was captured (the snaplen did not cut it). */
  complete: boolean;
};

const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_IPV6 = 0x86dd;
const ETHERTYPE_VLAN = new Set([0x8100, 0x88a8, 0x9100]);
const PROTOCOL_TCP = 6;
/** IPv6 extension headers walked past to reach TCP (RFC 8200 §4): hop-by-hop, routing, destination options. */
const IPV6_SKIPPABLE = new Set([0, 43, 60]);
const IPV6_AUTHENTICATION = 51;
/** BSD loopback (LINKTYPE_NULL / LOOP) address family values meaning IPv4 or IPv6. */
const NULL_FAMILY_IPV4 = 2;
const NULL_FAMILY_IPV6 = new Set([10, 24, 28, 30]);

/** Offset and ethertype-like protocol of the IP packet in a captured frame, or null when not IP. */
function ipStart(linkType: number, data: Buffer): { offset: number; version: 4 | 6 } | null {
  let offset: number;
  let ethertype: number | null = null;
  switch (linkType) {
    case LINK_TYPES.ETHERNET: {
      offset = 14;
      if (data.length < offset) return null;
      ethertype = data.readUInt16BE(12);
      while (ETHERTYPE_VLAN.has(ethertype) && data.length >= offset + 4) {
        ethertype = data.readUInt16BE(offset + 2);
        offset += 4;
      }
      break;
    }
    case LINK_TYPES.LINUX_SLL:
      if (data.length < 16) return null;
      offset = 16;
      ethertype = data.readUInt16BE(14);
      break;
    case LINK_TYPES.LINUX_SLL2:
      if (data.length < 20) return null;
      offset = 20;
      ethertype = data.readUInt16BE(0);
      break;
    case LINK_TYPES.NULL:
    case LINK_TYPES.LOOP: {
      if (data.length < 4) return null;
      offset = 4;
      // NULL holds the family in the capturing host's byte order, LOOP in network order.
      const family = Math.min(data.readUInt32BE(0), data.readUInt32LE(0));
      if (family === NULL_FAMILY_IPV4) return { offset, version: 4 };
      if (NULL_FAMILY_IPV6.has(family)) return { offset, version: 6 };
      return null;
    }
    case LINK_TYPES.RAW:
    case LINK_TYPES.IPV4:
    case LINK_TYPES.IPV6:
      offset = 0;
      break;
    default:
      return null;
  }
  if (ethertype === ETHERTYPE_IPV4) return { offset, version: 4 };
  if (ethertype === ETHERTYPE_IPV6) return { offset, version: 6 };
  if (ethertype !== null || data.length <= offset) return null;
  const version = (data[offset] ?? 0) >> 4;
  return version === 4 || version === 6 ? { offset, version } : null;
}

/**
 * Finds the TCP payload of a captured packet of link type `linkType` (Ethernet with VLAN tags,
 * Linux cooked v1/v2, BSD loopback, raw IP). Null when the packet is not TCP over IPv4/IPv6,
 * is an IP fragment, or is cut before its TCP header ends.
 */
export function tcpSegment(linkType: number, data: Buffer): TcpSegment | null {
  const ip = ipStart(linkType, data);
  if (ip === null) return null;
  let at = ip.offset;
  let ipEnd: number;
  let source: string;
  let destination: string;
  if (ip.version === 4) {
    if (data.length < at + 20 || (data[at] ?? 0) >> 4 !== 4) return null;
    const headerBytes = ((data[at] ?? 0) & 0x0f) * 4;
    // More fragments, or a fragment offset: the payload is not a whole segment.
    if (data[at + 9] !== PROTOCOL_TCP || (data.readUInt16BE(at + 6) & 0x3fff) !== 0 || headerBytes < 20)
      return null;
    ipEnd = at + data.readUInt16BE(at + 2);
    source = data.toString('hex', at + 12, at + 16);
    destination = data.toString('hex', at + 16, at + 20);
    at += headerBytes;
  } else {
    if (data.length < at + 40 || (data[at] ?? 0) >> 4 !== 6) return null;
    ipEnd = at + 40 + data.readUInt16BE(at + 4);
    source = data.toString('hex', at + 8, at + 24);
    destination = data.toString('hex', at + 24, at + 40);
    let next = data[at + 6] ?? -1;
    at += 40;
    while (next !== PROTOCOL_TCP) {
      if (data.length < at + 2) return null;
      if (IPV6_SKIPPABLE.has(next)) {
        const length = ((data[at + 1] ?? 0) + 1) * 8;
        next = data[at] ?? -1;
        at += length;
      } else if (next === IPV6_AUTHENTICATION) {
        const length = ((data[at + 1] ?? 0) + 2) * 4;
        next = data[at] ?? -1;
        at += length;
      } else {
        return null; // a fragment (44), ESP, or no TCP at all
      }
    }
  }
  if (data.length < at + 20) return null;
  const headerBytes = ((data[at + 12] ?? 0) >> 4) * 4;
  const payloadStart = at + headerBytes;
  if (headerBytes < 20 || payloadStart > ipEnd || payloadStart > data.length) return null;
  return {
    flow: `${source}:${data.readUInt16BE(at)}>${destination}:${data.readUInt16BE(at + 2)}`,
    sequence: data.readUInt32BE(at + 4),
    payloadStart,
    payloadEnd: Math.min(ipEnd, data.length),
    complete: data.length >= ipEnd,
  };
}

const PROTOCOL_ICMP = 1;
const PROTOCOL_ICMPV6 = 58;
/** ICMP Destination Unreachable and Time Exceeded (RFC 792), and their ICMPv6 kin (RFC 4443). */
const ICMP_ERRORS = new Set([3, 11]);
const ICMPV6_ERRORS = new Set([1, 3]);

/** What a captured packet belongs to: a TCP flow, or the TCP flow an ICMP error quotes. */
export type PacketFlow = { kind: 'tcp' | 'icmp-error'; flow: string };

/** `source:port>destination:port` of the TCP header at `tcp` below IP addresses `source`/`destination` (hex). */
function flowAt(data: Buffer, tcp: number, source: string, destination: string): string | null {
  if (data.length < tcp + 4) return null;
  return `${source}:${data.readUInt16BE(tcp)}>${destination}:${data.readUInt16BE(tcp + 2)}`;
}

/**
 * The TCP flow a captured packet belongs to, in {@link TcpSegment.flow}'s form (hex addresses):
 * its own for a TCP packet; for an ICMP or ICMPv6 error (Destination Unreachable, Time
 * Exceeded) the flow of the TCP packet it quotes. Null for anything else, or when the bytes
 * needed were not captured. IPv6 extension headers before ICMPv6 are not followed.
 */
export function packetFlow(linkType: number, data: Buffer): PacketFlow | null {
  const segment = tcpSegment(linkType, data);
  if (segment !== null) return { kind: 'tcp', flow: segment.flow };
  const ip = ipStart(linkType, data);
  if (ip === null) return null;
  const at = ip.offset;
  if (ip.version === 4) {
    if (data.length < at + 20 || data[at + 9] !== PROTOCOL_ICMP) return null;
    const icmp = at + ((data[at] ?? 0) & 0x0f) * 4;
    if (data.length < icmp + 8 + 20 || !ICMP_ERRORS.has(data[icmp] ?? -1)) return null;
    const quoted = icmp + 8;
    if ((data[quoted] ?? 0) >> 4 !== 4 || data[quoted + 9] !== PROTOCOL_TCP) return null;
    const tcp = quoted + ((data[quoted] ?? 0) & 0x0f) * 4;
    const flow = flowAt(
      data,
      tcp,
      data.toString('hex', quoted + 12, quoted + 16),
      data.toString('hex', quoted + 16, quoted + 20),
    );
    return flow === null ? null : { kind: 'icmp-error', flow };
  }
  if (data.length < at + 40 || data[at + 6] !== PROTOCOL_ICMPV6) return null;
  const icmp = at + 40;
  if (data.length < icmp + 8 + 40 || !ICMPV6_ERRORS.has(data[icmp] ?? -1)) return null;
  const quoted = icmp + 8;
  if ((data[quoted] ?? 0) >> 4 !== 6 || data[quoted + 6] !== PROTOCOL_TCP) return null;
  const flow = flowAt(
    data,
    quoted + 40,
    data.toString('hex', quoted + 8, quoted + 24),
    data.toString('hex', quoted + 24, quoted + 40),
  );
  return flow === null ? null : { kind: 'icmp-error', flow };
}
