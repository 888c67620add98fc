/**
 * Numeric DNS codes and their names (IANA "Domain Name System (DNS) Parameters").
 * dns-packet names record types itself; it does not know SVCB (64) or HTTPS (65), which it
 * calls `UNKNOWN_64` / `UNKNOWN_65`, and it reads only the 4 header bits of a return code.
 */

/** RR type numbers by mnemonic: the types dns-packet decodes, plus SVCB and HTTPS (RFC 9460). */
export const RR_TYPE_NUMBERS: Readonly<Record<string, number>> = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  NULL: 10,
  HINFO: 13,
  PTR: 12,
  MX: 15,
  TXT: 16,
  RP: 17,
  AFSDB: 18,
  SIG: 24,
  KEY: 25,
  AAAA: 28,
  LOC: 29,
  SRV: 33,
  NAPTR: 35,
  KX: 36,
  CERT: 37,
  DNAME: 39,
  OPT: 41,
  APL: 42,
  DS: 43,
  SSHFP: 44,
  IPSECKEY: 45,
  RRSIG: 46,
  NSEC: 47,
  DNSKEY: 48,
  DHCID: 49,
  NSEC3: 50,
  NSEC3PARAM: 51,
  TLSA: 52,
  HIP: 55,
  CDS: 59,
  CDNSKEY: 60,
  SVCB: 64,
  HTTPS: 65,
  SPF: 99,
  TKEY: 249,
  TSIG: 250,
  IXFR: 251,
  AXFR: 252,
  ANY: 255,
  URI: 256,
  CAA: 257,
  TA: 32768,
  DLV: 32769,
};

const RR_TYPE_NAMES = new Map(Object.entries(RR_TYPE_NUMBERS).map(([name, number]) => [number, name]));

/** Types dns-packet cannot encode or decode by name: they travel as `UNKNOWN_<n>`. */
const UNKNOWN_TO_DNS_PACKET = new Set(['SVCB', 'HTTPS', 'URI']);

/** The RR type number of a mnemonic or of dns-packet's `UNKNOWN_<n>`; null when unknown. */
export function rrTypeNumber(type: string): number | null {
  const upper = type.toUpperCase();
  const known = RR_TYPE_NUMBERS[upper];
  if (known !== undefined) return known;
  const match = /^(?:UNKNOWN_|TYPE)(\d+)$/.exec(upper);
  return match ? Number(match[1]) : null;
}

/** The mnemonic of an RR type as dig prints it (`HTTPS`, or `TYPE<n>` per RFC 3597 when unknown). */
export function rrTypeName(type: string): string {
  const number = rrTypeNumber(type);
  if (number === null) return type.toUpperCase();
  return RR_TYPE_NAMES.get(number) ?? `TYPE${number}`;
}

/** The type name dns-packet expects in a question: `UNKNOWN_65` for HTTPS, the mnemonic otherwise. */
export function dnsPacketTypeName(type: string): string {
  const upper = type.toUpperCase();
  return UNKNOWN_TO_DNS_PACKET.has(upper) ? `UNKNOWN_${RR_TYPE_NUMBERS[upper]}` : upper;
}

const RCODE_NAMES = [
  'NOERROR',
  'FORMERR',
  'SERVFAIL',
  'NXDOMAIN',
  'NOTIMP',
  'REFUSED',
  'YXDOMAIN',
  'YXRRSET',
  'NXRRSET',
  'NOTAUTH',
  'NOTZONE',
  'DSOTYPENI',
] as const;
/** Extended return codes (12 bits with EDNS, RFC 6891 §6.1.3), from 16 on. */
const EXTENDED_RCODE_NAMES = [
  'BADVERS',
  'BADKEY',
  'BADTIME',
  'BADMODE',
  'BADNAME',
  'BADALG',
  'BADTRUNC',
  'BADCOOKIE',
];

/** The name of a (possibly extended) return code: 0 → NOERROR, 3 → NXDOMAIN, 16 → BADVERS, else `RCODE<n>`. */
export function rcodeName(rcode: number): string {
  const name = rcode < 16 ? RCODE_NAMES[rcode] : EXTENDED_RCODE_NAMES[rcode - 16];
  return name ?? `RCODE${rcode}`;
}

/** The numeric return code of a name (`NXDOMAIN` → 3, `RCODE12` → 12); null when unknown. */
export function rcodeNumber(name: string): number | null {
  const upper = name.toUpperCase();
  const basic = (RCODE_NAMES as readonly string[]).indexOf(upper);
  if (basic >= 0) return basic;
  const extended = EXTENDED_RCODE_NAMES.indexOf(upper);
  if (extended >= 0) return extended + 16;
  const match = /^RCODE_?(\d+)$/.exec(upper);
  return match ? Number(match[1]) : null;
}
