import { isIP } from 'node:net';

/** The 16 bytes of an IPv6 address as four 32-bit hex words, for BPF comparisons. */
function ipv6Words(address: string): string[] {
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
