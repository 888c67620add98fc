import { isIP } from 'node:net';

/** The 16 bytes of an IPv6 address as four 32-bit hex words, for BPF comparisons. */
export function ipv6Words(address: string): string[] {
  let [head = '', tail = ''] = address.includes('::') ? address.split('::') : [address, ''];
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  // An embedded IPv4 tail (::ffff:192.0.2.1) is two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/;
  const fix = (part: string) =>
    part.replace(dotted, (_, a, b, c, d) =>
      [((Number(a) << 8) | Number(b)).toString(16), ((Number(c) << 8) | Number(d)).toString(16)].join(':'),
    );
  head = fix(head);
  tail = fix(tail);
  const left = groups(head);
  const right = groups(tail);
  const all = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const words: string[] = [];
  for (let i = 0; i < 8; i += 2) {
    words.push(`0x${all[i]!.padStart(4, '0')}${all[i + 1]!.padStart(4, '0')}`);
  }
  return words;
}

/** One end of a TCP connection: a numeric address and a port. */
export type Endpoint = { address: string; port: number };

function ipv4Hex(address: string): string {
  return `0x${address
    .split('.')
    .map((octet) => Number(octet).toString(16).padStart(2, '0'))
    .join('')}`;
}

function numeric(what: string, host: string): { address: string; family: 4 | 6 } {
  const address = host.split('%')[0] ?? host;
  const family = isIP(address);
  if (family === 0)
    throw new RangeError(`${what} must be a numeric IPv4 or IPv6 address; got ${JSON.stringify(host)}`);
  return { address: family === 6 ? address.toLowerCase() : address, family: family as 4 | 6 };
}

function checkPort(what: string, port: number): number {
  if (!(Number.isInteger(port) && port >= 1 && port <= 65_535)) {
    throw new RangeError(`${what} must be an integer from 1 to 65535; got ${String(port)}`);
  }
  return port;
}

/**
 * The BPF filter of ONE TCP connection, both directions: packets from `local` to `remote` and
 * back, and nothing else: not another connection to the same address and port (it has another
 * local port or address), not the reversed pair of ports. Also the ICMP/ICMPv6 errors
 * (Destination Unreachable, Time Exceeded) that quote a TCP packet of exactly this connection
 * (quoted source and destination address and port), since a router on the way sends those from
 * its own address and they tell why the connection failed; errors quoting anyone else's
 * packets (which carry up to 576 bytes of them) stay out.
 * @throws RangeError when an address is not a numeric IP, the families differ, or a port is
 *   not 1–65535.
 */
export function connectionFilter(local: Endpoint, remote: Endpoint): string {
  const l = numeric('local address', local.address);
  const r = numeric('host', remote.address);
  const lp = checkPort('local port', local.port);
  const rp = checkPort('port', remote.port);
  if (l.family !== r.family) {
    throw new RangeError(`local address ${l.address} and host ${r.address} are of different IP families`);
  }
  const out = `src host ${l.address} and src port ${lp} and dst host ${r.address} and dst port ${rp}`;
  const back = `src host ${r.address} and src port ${rp} and dst host ${l.address} and dst port ${lp}`;
  const tcp = `(tcp and ((${out}) or (${back})))`;
  if (r.family === 4) {
    // The quoted IP header starts 8 bytes into the ICMP message: protocol at 17, source at 20,
    // destination at 24; the quoted TCP ports right after its own header length.
    const quoted =
      `icmp[17] = 6 and icmp[20:4] = ${ipv4Hex(l.address)} and icmp[24:4] = ${ipv4Hex(r.address)}` +
      ` and icmp[8 + ((icmp[8] & 0xf) << 2):2] = ${lp} and icmp[8 + ((icmp[8] & 0xf) << 2) + 2:2] = ${rp}`;
    return `${tcp} or (icmp and (icmp[icmptype] = icmp-unreach or icmp[icmptype] = icmp-timxceed) and ${quoted})`;
  }
  // ICMPv6 right after the fixed header: type at 40, the quoted IPv6 header at 48 (next header
  // at 54, source at 56, destination at 72), the quoted TCP ports at 88 and 90.
  const source = ipv6Words(l.address).map((word, i) => `ip6[${56 + 4 * i}:4] = ${word}`);
  const destination = ipv6Words(r.address).map((word, i) => `ip6[${72 + 4 * i}:4] = ${word}`);
  const quoted = [...source, ...destination, `ip6[88:2] = ${lp}`, `ip6[90:2] = ${rp}`].join(' and ');
  return `${tcp} or (icmp6 and (ip6[40] = 1 or ip6[40] = 3) and ip6[54] = 6 and ${quoted})`;
}

/**
 * The BPF filter of a capture: the traffic to and from `host` (on `port`), plus the ICMP
 * errors (Destination Unreachable, Time Exceeded) that quote a packet sent to `host` (a TCP or
 * UDP one to `port`, when given), since a router on the way sends those from its own address
 * and they tell why a connection failed. With a port, the errors answering a concurrent route
 * trace's probes (ICMP, or UDP to other ports) stay out.
 */
export function captureFilter(host: string, port?: number): string {
  const address = host.split('%')[0] ?? host;
  const family = isIP(address);
  if (family === 0)
    throw new RangeError(`host must be a numeric IPv4 or IPv6 address; got ${JSON.stringify(host)}`);
  const traffic = port === undefined ? `host ${address}` : `host ${address} and port ${port}`;
  if (family === 4) {
    const hex = `0x${address
      .split('.')
      .map((octet) => Number(octet).toString(16).padStart(2, '0'))
      .join('')}`;
    // The quoted IP header starts 8 bytes into the ICMP message: its protocol at 17, its
    // destination at 24, and the quoted TCP/UDP destination port 2 bytes after its own length.
    const quotedPort =
      port === undefined
        ? ''
        : ` and (icmp[17] = 6 or icmp[17] = 17) and icmp[8 + ((icmp[8] & 0xf) << 2) + 2:2] = ${port}`;
    return `(${traffic}) or (icmp and (icmp[icmptype] = icmp-unreach or icmp[icmptype] = icmp-timxceed) and icmp[24:4] = ${hex}${quotedPort})`;
  }
  // ICMPv6 right after the fixed header: type at 40, quoted IPv6 header at 48 (its next header
  // at 54, destination at 72), the quoted TCP/UDP header at 88 (extension headers not followed).
  const words = ipv6Words(address.toLowerCase());
  const quoted = words.map((word, i) => `ip6[${72 + 4 * i}:4] = ${word}`).join(' and ');
  const quotedPort = port === undefined ? '' : ` and (ip6[54] = 6 or ip6[54] = 17) and ip6[90:2] = ${port}`;
  return `(${traffic}) or (icmp6 and (ip6[40] = 1 or ip6[40] = 3) and ${quoted}${quotedPort})`;
}
