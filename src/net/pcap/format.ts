/**
 * The classic libpcap file format (draft-ietf-opsawg-pcap): a 24-byte file header, then
 * records of a 16-byte header and the captured bytes. The magic number tells the byte order
 * of every header field and whether the second fraction counts microseconds or nanoseconds.
 */

/** Bytes of the file header. */
export const PCAP_HEADER_BYTES = 24;
/** Bytes of a record header. */
export const RECORD_HEADER_BYTES = 16;
/** Magic numbers, as read in the file's own byte order. */
const MAGIC_MICROSECONDS = 0xa1b2c3d4;
const MAGIC_NANOSECONDS = 0xa1b23c4d;
const MAGIC_PCAPNG = 0x0a0d0d0a;
/**
 * A record longer than this is corruption, not a packet: libpcap caps snapshots at 262144
 * bytes (its MAXIMUM_SNAPLEN); the margin admits other writers.
 */
const MAX_RECORD_BYTES = 16 * 1024 * 1024;

/** Link-layer header types (LINKTYPE_*, tcpdump.org/linktypes.html) a capture on Linux yields. */
export const LINK_TYPES = {
  NULL: 0,
  ETHERNET: 1,
  RAW: 101,
  LOOP: 108,
  LINUX_SLL: 113,
  IPV4: 228,
  IPV6: 229,
  LINUX_SLL2: 276,
} as const;

/** The file header. */
export type PcapHeader = {
  /** Byte order of the header fields: `BE` or `LE`. */
  byteOrder: 'BE' | 'LE';
  /** Timestamps count nanoseconds (magic 0xa1b23c4d) instead of microseconds. */
  nanosecond: boolean;
  versionMajor: number;
  versionMinor: number;
  /** Largest number of bytes captured per packet. */
  snaplen: number;
  /** LINKTYPE_* of every record (the low 16 bits of the field; the rest holds FCS flags). */
  linkType: number;
};

/** One captured packet. */
export type PcapRecord = {
  /** Capture time: whole seconds since the Unix epoch. */
  tsSec: number;
  /** Capture time: microseconds past `tsSec` (nanosecond files: rounded down). */
  tsUsec: number;
  /** Capture time: nanoseconds past `tsSec` (microsecond files: tsUsec × 1000). */
  tsNsec: number;
  /** Bytes of the packet in the file, at most the snaplen. */
  capturedLength: number;
  /** Bytes the packet had on the wire. */
  originalLength: number;
  /** The captured bytes: a view into the buffer read, not a copy. */
  data: Buffer;
  /** Where the packet's bytes start in the buffer read. */
  dataOffset: number;
};

/** A whole pcap file. */
export type PcapFile = PcapHeader & {
  records: PcapRecord[];
  /**
   * Bytes after the last whole record: a record cut short (a capture stopped mid-write).
   * They are not in `records`.
   */
  trailingBytes: number;
};

/** Reads the file header; throws an Error naming what is wrong when `buffer` does not start with one. */
export function readPcapHeader(buffer: Buffer): PcapHeader {
  if (buffer.length < PCAP_HEADER_BYTES) {
    throw new Error(
      `not a pcap file: ${buffer.length} bytes, shorter than the ${PCAP_HEADER_BYTES}-byte header`,
    );
  }
  const big = buffer.readUInt32BE(0);
  const little = buffer.readUInt32LE(0);
  let byteOrder: 'BE' | 'LE';
  let nanosecond: boolean;
  if (big === MAGIC_MICROSECONDS || big === MAGIC_NANOSECONDS) {
    byteOrder = 'BE';
    nanosecond = big === MAGIC_NANOSECONDS;
  } else if (little === MAGIC_MICROSECONDS || little === MAGIC_NANOSECONDS) {
    byteOrder = 'LE';
    nanosecond = little === MAGIC_NANOSECONDS;
  } else if (big === MAGIC_PCAPNG) {
    throw new Error('a pcapng file: only the classic pcap format is read (tcpdump -w writes it)');
  } else {
    throw new Error(`not a pcap file: magic number 0x${big.toString(16).padStart(8, '0')}`);
  }
  const u16 = (at: number) => (byteOrder === 'BE' ? buffer.readUInt16BE(at) : buffer.readUInt16LE(at));
  const u32 = (at: number) => (byteOrder === 'BE' ? buffer.readUInt32BE(at) : buffer.readUInt32LE(at));
  return {
    byteOrder,
    nanosecond,
    versionMajor: u16(4),
    versionMinor: u16(6),
    snaplen: u32(16),
    linkType: u32(20) & 0xffff,
  };
}

/** Reads the record header at `offset`; null when fewer than 16 bytes are left. */
function readRecordHeader(
  buffer: Buffer,
  offset: number,
  header: PcapHeader,
): { tsSec: number; fraction: number; capturedLength: number; originalLength: number } | null {
  if (buffer.length - offset < RECORD_HEADER_BYTES) return null;
  const u32 = (at: number) =>
    header.byteOrder === 'BE' ? buffer.readUInt32BE(offset + at) : buffer.readUInt32LE(offset + at);
  const capturedLength = u32(8);
  if (capturedLength > MAX_RECORD_BYTES) {
    throw new Error(`corrupt pcap file: a record of ${capturedLength} bytes at offset ${offset}`);
  }
  return { tsSec: u32(0), fraction: u32(4), capturedLength, originalLength: u32(12) };
}

/**
 * Parses a classic pcap file (both byte orders, microsecond and nanosecond timestamps).
 * A record cut short at the end is left out and counted in `trailingBytes`.
 * @throws Error naming the problem for a pcapng file, a bad magic number, or a corrupt record length.
 */
export function readPcap(buffer: Buffer): PcapFile {
  const header = readPcapHeader(buffer);
  const records: PcapRecord[] = [];
  let offset = PCAP_HEADER_BYTES;
  for (;;) {
    const record = readRecordHeader(buffer, offset, header);
    if (record === null) break;
    const dataOffset = offset + RECORD_HEADER_BYTES;
    if (dataOffset + record.capturedLength > buffer.length) break;
    records.push({
      tsSec: record.tsSec,
      tsUsec: header.nanosecond ? Math.floor(record.fraction / 1000) : record.fraction,
      tsNsec: header.nanosecond ? record.fraction : record.fraction * 1000,
      capturedLength: record.capturedLength,
      originalLength: record.originalLength,
      data: buffer.subarray(dataOffset, dataOffset + record.capturedLength),
      dataOffset,
    });
    offset = dataOffset + record.capturedLength;
  }
  return { ...header, records, trailingBytes: buffer.length - offset };
}

/**
 * Splits a pcap byte stream (tcpdump -w -) arriving in arbitrary chunks into the file header
 * and whole records, so a writer can stop between two records and leave a valid file.
 */
export class PcapStreamSplitter {
  #pending: Buffer = Buffer.alloc(0);
  #header: PcapHeader | null = null;

  /** The file header, once its 24 bytes have arrived. */
  get header(): PcapHeader | null {
    return this.#header;
  }

  /** Bytes received that do not yet make a whole header or record. */
  get pendingBytes(): number {
    return this.#pending.length;
  }

  /**
   * Takes the next chunk; returns the complete pieces it finished, in order: first the
   * header's 24 bytes, then each record (its header and data) as one Buffer.
   * @throws Error when the stream is not a classic pcap file.
   */
  push(chunk: Buffer): Buffer[] {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const pieces: Buffer[] = [];
    let offset = 0;
    if (this.#header === null) {
      if (this.#pending.length < PCAP_HEADER_BYTES) return pieces;
      this.#header = readPcapHeader(this.#pending);
      pieces.push(this.#pending.subarray(0, PCAP_HEADER_BYTES));
      offset = PCAP_HEADER_BYTES;
    }
    for (;;) {
      const record = readRecordHeader(this.#pending, offset, this.#header);
      if (record === null) break;
      const end = offset + RECORD_HEADER_BYTES + record.capturedLength;
      if (end > this.#pending.length) break;
      pieces.push(this.#pending.subarray(offset, end));
      offset = end;
    }
    // Copy the rest: the pieces handed out keep referring to the old buffer.
    this.#pending = Buffer.from(this.#pending.subarray(offset));
    return pieces;
  }
}
