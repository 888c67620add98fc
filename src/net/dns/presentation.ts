/** Pieces of the DNS presentation format (RFC 1035 §5.1) as dig prints them. */

/** A domain name fully qualified with a trailing dot; the root is `.`. */
export function fqdn(name: string): string {
  if (name === '' || name === '.') return '.';
  return name.endsWith('.') ? name : `${name}.`;
}

/**
 * One character-string in quotes (RFC 1035 §5.1): `"` and `\` escaped with a backslash, bytes
 * outside printable ASCII as `\DDD` (decimal), as dig prints TXT and CAA values.
 */
export function quoteCharacterString(bytes: Uint8Array | string, extraEscapes = ''): string {
  const buffer = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  let text = '"';
  for (const byte of buffer) {
    const char = String.fromCharCode(byte);
    if (byte < 0x20 || byte > 0x7e) text += `\\${String(byte).padStart(3, '0')}`;
    else if (char === '"' || char === '\\' || extraEscapes.includes(char)) text += `\\${char}`;
    else text += char;
  }
  return `${text}"`;
}

/** An IPv4 address from 4 bytes at `offset`. */
export function ipv4Text(bytes: Uint8Array, offset = 0): string {
  return Array.from(bytes.subarray(offset, offset + 4)).join('.');
}

/** An IPv6 address from 16 bytes at `offset`, compressed per RFC 5952 (`2001:db8::1`). */
export function ipv6Text(bytes: Uint8Array, offset = 0): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) {
    groups.push((((bytes[offset + i] ?? 0) << 8) | (bytes[offset + i + 1] ?? 0)).toString(16));
  }
  // The WHATWG URL serializer compresses IPv6 exactly as RFC 5952 asks (longest zero run, ≥ 2 groups).
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}

/** Record data of a type without a known format, per RFC 3597 §5: `\# <length> <hex>`. */
export function genericRdata(bytes: Uint8Array): string {
  return bytes.length === 0
    ? '\\# 0'
    : `\\# ${bytes.length} ${Buffer.from(bytes).toString('hex').toUpperCase()}`;
}
