import { randomInt } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { type DecodedPacket, encode, type Packet, RECURSION_DESIRED, type RecordType } from 'dns-packet';
import type { DnsJsonAnswer } from '../../protocol/dns-result.js';
import { OutpostError } from '../../common/errors.js';
import { dnsPacketTypeName, rcodeName, rrTypeNumber } from './codes.js';
import { DnsQueryError } from './errors.js';
import { answerText, toDohJson } from './render.js';
import { type Exchange, type ExchangeRequest, exchangeTcp, exchangeUdp } from './transport.js';

/** Transport of a DNS query. */
export type DnsTransport = 'UDP' | 'TCP';

/** What to ask, whom, and how. */
export type DnsQueryOptions = {
  /** Name to look up. For PTR an IP address is turned into its reverse name (`dig -x`). */
  query: string;
  /** RR type mnemonic: A, AAAA, CNAME, MX, TXT, SOA, NS, PTR, SRV, CAA, HTTPS, … */
  recordType: string;
  /** Name server: an IP address, or a host name resolved with the OS resolver first (not timed). */
  nameServer: string;
  /** Port, 1–65535. Default 53. */
  port?: number;
  /** Default `UDP`; a truncated UDP answer is retried over TCP (RFC 7766 §5). */
  protocol?: DnsTransport;
  /** Limit of the whole query (name server lookup and TCP retry included), ms. Default 5000. */
  timeoutMs?: number;
  /** Aborts the query; it then rejects with OUTPOST_ERR_ABORTED. */
  signal?: AbortSignal;
  /** EDNS0 UDP payload size advertised, bytes (RFC 6891). Default 1232 (DNS flag day 2020). */
  udpPayloadSizeBytes?: number;
  /** Set the RD (recursion desired) bit. Default true, as dig. */
  recursionDesired?: boolean;
};

/** An answer of a name server, whatever its return code. */
export type DnsQueryResponse = {
  packet: DecodedPacket;
  /** Full return code, EDNS extended bits included (RFC 6891 §6.1.3). */
  rcode: number;
  /** `rcode` by name: NOERROR, NXDOMAIN, SERVFAIL, REFUSED, … */
  returnCode: string;
  /** The answer section as dig prints it (see answerText). */
  answer: string;
  /** The response as DoH-style JSON (see toDohJson). */
  json: DnsJsonAnswer;
  /**
   * From just before the query was sent to the answer's arrival, ms, as dig's "Query time".
   * After a TC retry: from the UDP send to the TCP answer (the TCP connect included).
   */
  responseTimeMs: number;
  /** Transport that carried this answer. */
  protocol: DnsTransport;
  /** The UDP answer was truncated and the query was repeated over TCP. */
  truncatedRetriedOverTcp: boolean;
  /** IP address the query went to. */
  address: string;
  /** Size of the answer, bytes. */
  sizeBytes: number;
};

/** Default limit of a query, ms. */
export const DEFAULT_DNS_TIMEOUT_MS = 5000;
/** Default EDNS0 UDP payload size, bytes. */
export const DEFAULT_UDP_PAYLOAD_SIZE_BYTES = 1232;

/** The reverse-lookup name of an IP address (RFC 1035 §3.5, RFC 3596 §2.5); null for a non-IP. */
export function reverseName(ip: string): string | null {
  const family = isIP(ip);
  if (family === 4) return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
  if (family !== 6) return null;
  const [head = '', tail = ''] = ip.includes('::') ? ip.split('::') : [ip, ''];
  // An embedded IPv4 tail (`::ffff:192.0.2.1`) is two 16-bit groups.
  const groups = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [g];
          const [a = 0, b = 0, c = 0, d = 0] = g.split('.').map(Number);
          return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
        });
  const fill = 8 - groups(head).length - groups(tail).length;
  const all = [...groups(head), ...Array<string>(Math.max(0, fill)).fill('0'), ...groups(tail)];
  return `${[...all.map((g) => g.padStart(4, '0')).join('')].reverse().join('.')}.ip6.arpa`;
}

/** Why `name` cannot be asked (RFC 1035 §2.3.4: labels ≤ 63 bytes, name ≤ 253); null when it can. */
export function queryNameProblem(name: string): string | null {
  const bare = name.replace(/\.$/, '');
  if (bare === '') return null;
  if (Buffer.byteLength(bare) > 253) return `query name is longer than 253 bytes`;
  const labels = bare.split('.');
  if (labels.some((label) => label === '')) return `query name ${JSON.stringify(name)} has an empty label`;
  if (labels.some((label) => Buffer.byteLength(label) > 63))
    return `query name has a label longer than 63 bytes`;
  return null;
}

const sameName = (a: string, b: string) =>
  a.replace(/\.$/, '').toLowerCase() === b.replace(/\.$/, '').toLowerCase();

function fullRcode(packet: DecodedPacket): number {
  const opt = packet.additionals?.find((record) => record.type === 'OPT');
  const extended = opt && 'extendedRcode' in opt ? opt.extendedRcode : 0;
  return (extended << 4) | ((packet.flags ?? 0) & 0xf);
}

async function resolveNameServer(
  nameServer: string,
  signal: AbortSignal,
): Promise<{ address: string; family: 4 | 6 }> {
  const family = isIP(nameServer.replace(/%.*$/, ''));
  if (family !== 0) return { address: nameServer, family: family === 6 ? 6 : 4 };
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const found = await Promise.race([lookup(nameServer), aborted]);
    return { address: found.address, family: found.family === 6 ? 6 : 4 };
  } catch (err) {
    if (signal.aborted) throw err;
    const code = (err as { code?: string }).code ?? 'ENOTFOUND';
    throw new DnsQueryError(code, `${code}: cannot resolve the name server ${nameServer}`, { cause: err });
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

function buildQuery(options: DnsQueryOptions, name: string): { id: number; message: Buffer } {
  const id = randomInt(0, 0x10000);
  const packet: Packet = {
    type: 'query',
    id,
    flags: options.recursionDesired === false ? 0 : RECURSION_DESIRED,
    questions: [{ type: dnsPacketTypeName(options.recordType) as RecordType, name, class: 'IN' }],
    additionals: [
      {
        type: 'OPT',
        name: '.',
        udpPayloadSize: options.udpPayloadSizeBytes ?? DEFAULT_UDP_PAYLOAD_SIZE_BYTES,
        extendedRcode: 0,
        ednsVersion: 0,
        flags: 0,
        flag_do: false,
        options: [],
      },
    ],
  };
  return { id, message: encode(packet) };
}

/** A deadline and the caller's signal as one signal, without AbortSignal.any (it leaks on Node 20). */
function deadlineSignal(timeoutMs: number, outer: AbortSignal | undefined) {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DnsQueryError('ETIMEOUT', `DNS query timed out after ${timeoutMs} ms`)),
    timeoutMs,
  );
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  const dispose = () => {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  };
  return { signal: controller.signal, dispose };
}

/**
 * Asks `nameServer` for `recordType` records of `query` (RFC 1035) over UDP or TCP, with a
 * random 16-bit id, RD set and an EDNS0 OPT record (RFC 6891). The answer must carry our id
 * and question (others are ignored as late or spoofed). A truncated UDP answer is asked again
 * over TCP. Any return code is an answer: NXDOMAIN resolves, it does not reject.
 * @throws DnsQueryError — ETIMEOUT after `timeoutMs`, EBADNAME for an impossible name,
 *   EBADRESP for a malformed answer, or the socket's system code (ECONNREFUSED, …).
 * @throws OutpostError OUTPOST_ERR_ABORTED when `signal` aborts.
 */
export async function queryDns(options: DnsQueryOptions): Promise<DnsQueryResponse> {
  const name =
    (options.recordType.toUpperCase() === 'PTR' ? reverseName(options.query) : null) ?? options.query;
  const problem = queryNameProblem(name);
  if (problem !== null) throw new DnsQueryError('EBADNAME', problem);
  const typeNumber = rrTypeNumber(options.recordType);
  if (typeNumber === null) throw new DnsQueryError('EBADQUERY', `unknown record type ${options.recordType}`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_DNS_TIMEOUT_MS;
  const deadline = deadlineSignal(timeoutMs, options.signal);
  try {
    const { address, family } = await resolveNameServer(options.nameServer, deadline.signal);
    const matches = (packet: DecodedPacket) => {
      const questions = packet.questions ?? [];
      // Some servers drop the question from error answers (FORMERR, REFUSED): accept those by id.
      if (questions.length === 0) return ((packet.flags ?? 0) & 0xf) !== 0;
      const question = questions[0];
      return (
        questions.length === 1 &&
        !!question &&
        sameName(question.name, name) &&
        rrTypeNumber(question.type) === typeNumber
      );
    };
    const request = (): ExchangeRequest => {
      const { id, message } = buildQuery(options, name);
      return { address, family, port: options.port ?? 53, message, id, matches, signal: deadline.signal };
    };
    const protocol = options.protocol ?? 'UDP';
    let exchange: Exchange = await (protocol === 'TCP' ? exchangeTcp : exchangeUdp)(request());
    let truncatedRetriedOverTcp = false;
    let responseTimeMs = exchange.responseTimeMs;
    if (protocol === 'UDP' && exchange.packet.flag_tc) {
      const udp = exchange;
      exchange = await exchangeTcp(request()).catch((err: unknown) => {
        if (!(err instanceof DnsQueryError) || err.code === 'ETIMEOUT') throw err;
        throw new DnsQueryError(err.code, `UDP answer truncated and the TCP retry failed: ${err.message}`, {
          cause: err,
        });
      });
      truncatedRetriedOverTcp = true;
      responseTimeMs = exchange.arrivedAt - udp.sentAt;
    }
    const rcode = fullRcode(exchange.packet);
    return {
      packet: exchange.packet,
      rcode,
      returnCode: rcodeName(rcode),
      answer: answerText(exchange.packet),
      json: toDohJson(exchange.packet, rcode),
      responseTimeMs,
      protocol: truncatedRetriedOverTcp ? 'TCP' : protocol,
      truncatedRetriedOverTcp,
      address,
      sizeBytes: exchange.sizeBytes,
    };
  } catch (err) {
    if (options.signal?.aborted) {
      throw new OutpostError('OUTPOST_ERR_ABORTED', 'DNS query aborted', { cause: options.signal.reason });
    }
    throw err;
  } finally {
    deadline.dispose();
  }
}
