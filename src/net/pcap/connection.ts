import { isIP } from 'node:net';
import { packetFlow } from './decode.js';
import { type Endpoint, ipv6Words } from './filter.js';
import { PCAP_HEADER_BYTES, RECORD_HEADER_BYTES, readPcap } from './format.js';

/** An address's bytes as lower-case hex, as decode.ts writes flows. */
function addressHex(host: string): string {
  const address = host.split('%')[0] ?? host;
  const family = isIP(address);
  if (family === 4) return Buffer.from(address.split('.').map(Number)).toString('hex');
  if (family === 6)
    return ipv6Words(address.toLowerCase())
      .map((word) => word.slice(2))
      .join('');
  throw new RangeError(`address must be a numeric IPv4 or IPv6 address; got ${JSON.stringify(host)}`);
}

/** A classic pcap file's records, kept and dropped. */
export type ConnectionOnly = { file: Buffer; kept: number; dropped: number };

/**
 * Keeps only the packets of ONE TCP connection in a classic pcap file: TCP packets from `local`
 * to `remote` and back, and ICMP/ICMPv6 errors quoting a packet of it. Every other record is
 * dropped (the file header and the kept records are copied as they are), so the file holds
 * nothing of another flow even if the capture filter let something through. A record cut
 * short at the end of the input is dropped too.
 * @throws Error (from readPcap) when `buffer` is not a classic pcap file; RangeError for an
 *   address that is not numeric.
 */
export function keepConnection(buffer: Buffer, local: Endpoint, remote: Endpoint): ConnectionOnly {
  const l = addressHex(local.address);
  const r = addressHex(remote.address);
  const outbound = `${l}:${local.port}>${r}:${remote.port}`;
  const inbound = `${r}:${remote.port}>${l}:${local.port}`;
  const pcap = readPcap(buffer);
  const parts: Buffer[] = [buffer.subarray(0, PCAP_HEADER_BYTES)];
  let dropped = 0;
  for (const record of pcap.records) {
    const packet = packetFlow(pcap.linkType, record.data);
    const ours =
      packet !== null && (packet.flow === outbound || (packet.kind === 'tcp' && packet.flow === inbound));
    if (ours)
      parts.push(
        buffer.subarray(record.dataOffset - RECORD_HEADER_BYTES, record.dataOffset + record.data.length),
      );
    else dropped += 1;
  }
  return { file: Buffer.concat(parts), kept: pcap.records.length - dropped, dropped };
}
