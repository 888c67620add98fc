import { constants, createWriteStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { inflateRawSync } from 'node:zlib';
import yauzl from 'yauzl';
import yazl from 'yazl';

/**
 * Reading artifact files and ZIP archives (traces) bounded, and writing archives back. Everything
 * read is untrusted: files are opened without following links and every size is bounded.
 */

/** Largest artifact file read, bytes: four times the upload budget. */
export const MAX_ARTIFACT_BYTES = 600_000_000;
/** Largest trace entry once decompressed, bytes. */
export const MAX_ENTRY_BYTES = 256 * 1024 * 1024;
/** Most bytes all entries of one trace decompress to (a zip bomb is refused, not read). */
export const MAX_TRACE_UNCOMPRESSED_BYTES = 1024 * 1024 * 1024;
/** Most entries of one trace archive. */
export const MAX_TRACE_ENTRIES = 200_000;

/** One file of a ZIP archive, decompressed; `compressed` when it was stored deflated. */
export type ZipEntry = { name: string; data: Buffer; mtime: Date; compressed: boolean };

/**
 * Reads a regular file of at most `maxBytes` without following a link at its last component. It is
 * opened non-blocking: a FIFO or device a surviving process of the run swapped in is refused by the
 * `fstat` after the open, instead of blocking a libuv thread forever on the open or the read.
 *
 * @param ownerUid when given, the file must be owned by that uid (the run user that wrote it).
 * @throws Error when it is a link, not a regular file, has another owner, or is larger than
 *   `maxBytes`.
 */
export async function readArtifactFile(
  path: string,
  maxBytes = MAX_ARTIFACT_BYTES,
  ownerUid?: number,
): Promise<Buffer> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new Error('not a regular file');
    // A file of the agent's or of another run, linked or swapped in, has another owner.
    if (ownerUid !== undefined && stat.uid !== ownerUid)
      throw new Error(`owned by uid ${stat.uid}, not the run's ${ownerUid}`);
    if (stat.size > maxBytes) throw new Error(`${stat.size} bytes, more than the ${maxBytes} read`);
    const data = Buffer.allocUnsafe(stat.size);
    let at = 0;
    while (at < data.length) {
      const { bytesRead } = await handle.read(data, at, data.length - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return data.subarray(0, at);
  } finally {
    await handle.close();
  }
}

/**
 * The entries of a ZIP archive, decompressed, bounded: at most {@link MAX_TRACE_ENTRIES} entries,
 * each at most {@link MAX_ENTRY_BYTES}, together {@link MAX_TRACE_UNCOMPRESSED_BYTES}. Directory
 * entries are skipped.
 * @throws Error when the archive is broken, encrypted, names a path outside itself, or is too large.
 */
export async function readZip(zip: Buffer): Promise<ZipEntry[]> {
  const file = await yauzl.fromBufferPromise(zip, { lazyEntries: true, validateEntrySizes: true });
  if (file.entryCount > MAX_TRACE_ENTRIES) {
    throw new Error(`the archive has ${file.entryCount} entries, more than ${MAX_TRACE_ENTRIES}`);
  }
  const entries: ZipEntry[] = [];
  let total = 0;
  for await (const entry of file.eachEntry()) {
    if (entry.fileName.endsWith('/')) continue;
    if (entry.uncompressedSize > MAX_ENTRY_BYTES) {
      throw new Error(`an entry of ${entry.uncompressedSize} bytes is more than ${MAX_ENTRY_BYTES}`);
    }
    total += entry.uncompressedSize;
    if (total > MAX_TRACE_UNCOMPRESSED_BYTES) {
      throw new Error(`the archive decompresses to more than ${MAX_TRACE_UNCOMPRESSED_BYTES} bytes`);
    }
    if (entry.isEncrypted()) throw new Error(`entry ${entry.fileName} is encrypted`);
    if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
      throw new Error(`entry ${entry.fileName} uses compression method ${entry.compressionMethod}`);
    }
    // The entry's bytes straight from the archive, inflated in one native call bounded by the
    // size its header states (no stream of small chunks to gather).
    const { fileDataStart } = await file.readLocalFileHeaderPromise(entry, { minimal: true });
    const raw = zip.subarray(fileDataStart, fileDataStart + entry.compressedSize);
    if (raw.length !== entry.compressedSize) throw new Error(`entry ${entry.fileName} is cut short`);
    const data =
      entry.compressionMethod === 0
        ? raw
        : inflateRawSync(raw, { maxOutputLength: Math.max(1, entry.uncompressedSize) });
    if (data.length !== entry.uncompressedSize) {
      throw new Error(`entry ${entry.fileName} is not the size its header states`);
    }
    entries.push({
      name: entry.fileName,
      data,
      mtime: entry.getLastModDate(),
      compressed: entry.compressionMethod !== 0,
    });
  }
  return entries;
}

/**
 * Already-compressed content (images, video, fonts, archives): stored, not deflated again.
 * Deflating a screencast frame costs more time than anything else in a scrub, and saves much
 * only on frames of a nearly blank page, which are a few kilobytes anyway.
 */
function isCompressedFormat(data: Buffer): boolean {
  return kindOfBinary(data) !== null;
}

/** The name of a known compressed binary format by its magic bytes, or null. */
export function kindOfBinary(data: Buffer): string | null {
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'JPEG';
  if (data.length >= 8 && data.readUInt32BE(0) === 0x89504e47) return 'PNG';
  if (data.length >= 6 && data.toString('latin1', 0, 4) === 'GIF8') return 'GIF';
  if (data.length >= 12 && data.toString('latin1', 0, 4) === 'RIFF') return 'RIFF';
  if (data.length >= 4 && data.readUInt32BE(0) === 0x1a45dfa3) return 'WebM';
  if (data.length >= 4 && data.toString('latin1', 0, 4) === 'wOF2') return 'WOFF2';
  if (data.length >= 4 && data.readUInt32BE(0) === 0x504b0304) return 'ZIP';
  if (data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b) return 'gzip';
  return null;
}

/**
 * Writes `entries` as a ZIP archive at `path` (created with mode 0600; replaced when it exists):
 * each entry deflated when it was before, except already-compressed formats, which are stored.
 */
export async function writeZip(entries: ZipEntry[], path: string): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const entry of entries) {
    zip.addBuffer(entry.data, entry.name, {
      mtime: entry.mtime,
      compress: entry.compressed && !isCompressedFormat(entry.data),
    });
  }
  zip.end();
  await writeStream(zip.outputStream, path);
}

/** Pipes `source` into a new file at `path` (mode 0600; an existing one is removed first). */
async function writeStream(source: NodeJS.ReadableStream, path: string): Promise<void> {
  await rm(path, { force: true });
  const out = createWriteStream(path, { flags: 'wx', mode: 0o600 });
  await new Promise<void>((resolve, reject) => {
    source.on('error', reject);
    out.on('error', reject);
    out.on('close', resolve);
    source.pipe(out);
  });
}
