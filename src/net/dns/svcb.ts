import { fqdn, genericRdata, ipv4Text, ipv6Text, quoteCharacterString } from './presentation.js';

/** SvcParamKey mnemonics (RFC 9460 §14.3.2). */
const SVC_PARAM_KEYS = [
  'mandatory',
  'alpn',
  'no-default-alpn',
  'port',
  'ipv4hint',
  'ech',
  'ipv6hint',
  'dohpath',
];

function keyName(key: number): string {
  return SVC_PARAM_KEYS[key] ?? `key${key}`;
}

/** An uncompressed domain name (RFC 9460 §2.2 forbids compression of TargetName). */
function readName(rdata: Buffer, start: number): { name: string; end: number } {
  const labels: string[] = [];
  let offset = start;
  for (;;) {
    const length = rdata[offset];
    if (length === undefined || offset + 1 + length > rdata.length)
      throw new Error('TargetName overruns the record');
    offset += 1;
    if (length === 0) break;
    if (length > 63) throw new Error('compressed or invalid label in TargetName');
    labels.push(rdata.toString('latin1', offset, offset + length).replace(/[.\\]/g, '\\$&'));
    offset += length;
  }
  return { name: fqdn(labels.join('.')), end: offset };
}

function listOf(value: Buffer, size: number, render: (bytes: Buffer, offset: number) => string): string {
  if (value.length % size !== 0) throw new Error(`value length ${value.length} is not a multiple of ${size}`);
  const items: string[] = [];
  for (let offset = 0; offset < value.length; offset += size) items.push(render(value, offset));
  return items.join(',');
}

function paramText(key: number, value: Buffer): string {
  const name = keyName(key);
  switch (name) {
    case 'mandatory':
      return `${name}=${listOf(value, 2, (b, o) => keyName(b.readUInt16BE(o)))}`;
    case 'alpn': {
      const ids: string[] = [];
      for (let offset = 0; offset < value.length; ) {
        const length = value[offset] ?? 0;
        ids.push(value.toString('latin1', offset + 1, offset + 1 + length).replace(/[,\\]/g, '\\$&'));
        offset += 1 + length;
      }
      return `${name}=${quoteCharacterString(Buffer.from(ids.join(','), 'latin1'))}`;
    }
    case 'no-default-alpn':
      return name;
    case 'port':
      return `${name}=${value.readUInt16BE(0)}`;
    case 'ipv4hint':
      return `${name}=${listOf(value, 4, ipv4Text)}`;
    case 'ipv6hint':
      return `${name}=${listOf(value, 16, ipv6Text)}`;
    case 'ech':
      return `${name}=${value.toString('base64')}`;
    default:
      return `${name}=${quoteCharacterString(value)}`;
  }
}

/**
 * The presentation format of SVCB / HTTPS record data (RFC 9460 §2.1), as dig prints it:
 * `1 . alpn="h2,h3" ipv4hint=192.0.2.1 port=8443`; AliasMode is `0 target.`. Data that does
 * not parse falls back to RFC 3597's `\# <length> <hex>`.
 */
export function svcbText(rdata: Buffer): string {
  try {
    if (rdata.length < 3) throw new Error('too short');
    const priority = rdata.readUInt16BE(0);
    const { name, end } = readName(rdata, 2);
    const parts = [String(priority), name];
    for (let offset = end; offset < rdata.length; ) {
      if (offset + 4 > rdata.length) throw new Error('truncated SvcParam');
      const key = rdata.readUInt16BE(offset);
      const length = rdata.readUInt16BE(offset + 2);
      if (offset + 4 + length > rdata.length) throw new Error('SvcParam value overruns the record');
      parts.push(paramText(key, rdata.subarray(offset + 4, offset + 4 + length)));
      offset += 4 + length;
    }
    return parts.join(' ');
  } catch {
    return genericRdata(rdata);
  }
}
