import type { Answer, DecodedPacket } from 'dns-packet';
import type { DnsJsonAnswer } from '../../protocol/dns-result.js';
import { rrTypeName, rrTypeNumber } from './codes.js';
import { fqdn, genericRdata, quoteCharacterString } from './presentation.js';
import { svcbText } from './svcb.js';

type Fields = Record<string, unknown>;

const num = (value: unknown): string => String(typeof value === 'number' ? value : 0);
const name = (value: unknown): string => fqdn(typeof value === 'string' ? value : '');
const bytesOf = (value: unknown): Buffer =>
  Buffer.isBuffer(value) ? value : Buffer.from(typeof value === 'string' ? value : '');
const base64 = (value: unknown): string => bytesOf(value).toString('base64');
const hex = (value: unknown): string => bytesOf(value).toString('hex').toUpperCase();

/** TXT data as dns-packet gives it: one Buffer, or an array of character-strings. */
function txtStrings(data: unknown): Buffer[] {
  return (Array.isArray(data) ? data : [data]).map(bytesOf);
}

/** Data of the structured types dns-packet decodes into objects, in dig's presentation format. */
function structuredText(type: string, d: Fields): string | null {
  switch (type) {
    case 'MX':
      return `${num(d.preference)} ${name(d.exchange)}`;
    case 'SOA':
      return [
        name(d.mname),
        name(d.rname),
        num(d.serial),
        num(d.refresh),
        num(d.retry),
        num(d.expire),
        num(d.minimum),
      ].join(' ');
    case 'SRV':
      return `${num(d.priority)} ${num(d.weight)} ${num(d.port)} ${name(d.target)}`;
    case 'CAA':
      return `${num(d.flags)} ${String(d.tag)} ${quoteCharacterString(String(d.value ?? ''))}`;
    case 'HINFO':
      return `${quoteCharacterString(String(d.cpu ?? ''))} ${quoteCharacterString(String(d.os ?? ''))}`;
    case 'RP':
      return `${name(d.mbox)} ${name(d.txt)}`;
    case 'NAPTR':
      return [
        num(d.order),
        num(d.preference),
        quoteCharacterString(String(d.flags ?? '')),
        quoteCharacterString(String(d.services ?? '')),
        quoteCharacterString(String(d.regexp ?? '')),
        name(d.replacement),
      ].join(' ');
    case 'DS':
      return `${num(d.keyTag)} ${num(d.algorithm)} ${num(d.digestType)} ${hex(d.digest)}`;
    case 'DNSKEY':
      return `${num(d.flags)} 3 ${num(d.algorithm)} ${base64(d.key)}`;
    case 'TLSA':
      return `${num(d.usage)} ${num(d.selector)} ${num(d.matchingType)} ${hex(d.certificate)}`;
    case 'SSHFP':
      return `${num(d.algorithm)} ${num(d.hash)} ${String(d.fingerprint ?? '').toUpperCase()}`;
    case 'NSEC':
      return `${name(d.nextDomain)} ${Array.isArray(d.rrtypes) ? d.rrtypes.join(' ') : ''}`.trim();
    default:
      return null;
  }
}

/**
 * The record data of one resource record in presentation format, as dig prints it:
 * `10 mail.example.` (MX), `"v=spf1 -all" "more"` (TXT), `0 issue "ca.example"` (CAA),
 * `1 . alpn="h2" ipv4hint=192.0.2.1` (HTTPS), RFC 3597 `\# 4 0A000001` for unknown types.
 */
export function recordDataText(record: Answer): string {
  const type = rrTypeName(record.type);
  const data: unknown = 'data' in record ? record.data : undefined;
  if (type === 'TXT' || type === 'SPF')
    return txtStrings(data)
      .map((s) => quoteCharacterString(s))
      .join(' ');
  if (typeof data === 'string') return ['CNAME', 'NS', 'PTR', 'DNAME'].includes(type) ? fqdn(data) : data;
  if (Buffer.isBuffer(data)) return type === 'HTTPS' || type === 'SVCB' ? svcbText(data) : genericRdata(data);
  if (typeof data === 'object' && data !== null) {
    const text = structuredText(type, data as Fields);
    if (text !== null) return text;
  }
  return JSON.stringify(data) ?? '';
}

/**
 * The record data as DoH JSON carries it: the presentation format, except TXT whose
 * character-strings are joined without quotes or separators (so a TXT split into 255-byte
 * chunks reads as one string, RFC 7208 §3.3).
 */
export function recordDataJson(record: Answer): string {
  const type = rrTypeName(record.type);
  if ((type === 'TXT' || type === 'SPF') && 'data' in record) {
    return txtStrings(record.data)
      .map((s) => s.toString('utf8'))
      .join('');
  }
  return recordDataText(record);
}

function isRecord(record: Answer): boolean {
  return record.type !== 'OPT';
}

function ttlOf(record: Answer): number {
  return 'ttl' in record && typeof record.ttl === 'number' ? record.ttl : 0;
}

function classOf(record: Answer): string {
  const value = 'class' in record ? String(record.class ?? 'IN') : 'IN';
  return value.replace(/^UNKNOWN_/, 'CLASS');
}

/**
 * The answer section as dig prints it: one `name. TTL CLASS TYPE data` line per record,
 * fields separated by a tab, lines by `\n`; the empty string when there is no answer.
 */
export function answerText(packet: DecodedPacket): string {
  return (packet.answers ?? [])
    .filter(isRecord)
    .map((r) => [fqdn(r.name), ttlOf(r), classOf(r), rrTypeName(r.type), recordDataText(r)].join('\t'))
    .join('\n');
}

function jsonRecords(records: Answer[] | undefined): DnsJsonAnswer['Answer'] {
  return (records ?? []).filter(isRecord).map((r) => ({
    name: fqdn(r.name),
    type: rrTypeNumber(r.type) ?? 0,
    TTL: ttlOf(r),
    data: recordDataJson(r),
  }));
}

/**
 * The response as DoH-style JSON (`application/dns-json` as Google and Cloudflare serve it):
 * `{Status, TC, RD, RA, AD, CD, Question[{name,type}], Answer[{name,type,TTL,data}]}` with
 * numeric types, plus `Authority` when the server sent records there.
 * @param rcode - the full return code (EDNS extended bits included), numeric.
 */
export function toDohJson(packet: DecodedPacket, rcode: number): DnsJsonAnswer {
  const json: DnsJsonAnswer = {
    Status: rcode,
    TC: packet.flag_tc,
    RD: packet.flag_rd,
    RA: packet.flag_ra,
    AD: packet.flag_ad,
    CD: packet.flag_cd,
    Question: (packet.questions ?? []).map((q) => ({ name: fqdn(q.name), type: rrTypeNumber(q.type) ?? 0 })),
    Answer: jsonRecords(packet.answers),
  };
  const authority = jsonRecords(packet.authorities);
  if (authority.length > 0) json.Authority = authority;
  return json;
}
