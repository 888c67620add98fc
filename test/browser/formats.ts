import { inflateRawSync, inflateSync } from 'node:zlib';

/**
 * The files of a ZIP archive (such as Playwright's trace.zip), by name, decompressed. Reads the
 * central directory (PKWARE APPNOTE 4.3.12), so entries written with data descriptors work;
 * stored (0) and deflated (8) entries only.
 * @throws Error when `zip` is not a ZIP archive, is ZIP64, or holds another compression method.
 */
export function unzip(zip: Buffer): Map<string, Buffer> {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error('not a ZIP archive: no end of central directory record');
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  if (at === 0xffffffff) throw new Error('ZIP64 archives are not read');
  const files = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`ZIP central directory entry ${i} is broken`);
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, start + compressedSize);
    if (method === 0) files.set(name, data);
    else if (method === 8) files.set(name, inflateRawSync(data));
    else throw new Error(`ZIP entry ${name} uses compression method ${method}`);
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return files;
}

/** A decoded image: `width` × `height` pixels, `rgba` 4 bytes per pixel, rows top to bottom. */
export type Image = { width: number; height: number; rgba: Buffer };

/**
 * Decodes a PNG (W3C PNG, 2nd edition) of 8-bit RGB or RGBA, not interlaced: what Chromium's
 * screenshots are.
 * @throws Error for another PNG kind or a file that is not a PNG.
 */
export function decodePng(png: Buffer): Image {
  if (!png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    throw new Error('not a PNG: bad signature');
  }
  let width = 0;
  let height = 0;
  let channels = 0;
  const data: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const body = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const [depth, colour, , , interlace] = body.subarray(8, 13);
      if (depth !== 8 || (colour !== 2 && colour !== 6) || interlace !== 0) {
        throw new Error(`PNG kind not read: depth ${depth}, colour type ${colour}, interlace ${interlace}`);
      }
      channels = colour === 6 ? 4 : 3;
    } else if (type === 'IDAT') data.push(body);
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const rows = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const row = rows.subarray(y * stride, (y + 1) * stride);
    const previous = y > 0 ? rows.subarray((y - 1) * stride, y * stride) : Buffer.alloc(stride);
    for (let x = 0; x < stride; x++) {
      const value = raw[y * (stride + 1) + 1 + x]!;
      const left = x >= channels ? row[x - channels]! : 0;
      const up = previous[x]!;
      const upLeft = x >= channels ? previous[x - channels]! : 0;
      let predictor = 0;
      if (filter === 1) predictor = left;
      else if (filter === 2) predictor = up;
      else if (filter === 3) predictor = (left + up) >> 1;
      else if (filter === 4) {
        const p = left + up - upLeft;
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)];
        predictor = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
      }
      row[x] = (value + predictor) & 0xff;
    }
  }
  const rgba = Buffer.alloc(width * height * 4, 0xff);
  for (let i = 0; i < width * height; i++) rows.copy(rgba, i * 4, i * channels, i * channels + channels);
  return { width, height, rgba };
}

/**
 * The distinct colours (`#rrggbbaa`) of the pixels of `image` inside the rectangle
 * `x`, `y`, `width`, `height` (pixels, clipped to the image).
 */
export function coloursIn(
  image: Image,
  rect: { x: number; y: number; width: number; height: number },
): Set<string> {
  const colours = new Set<string>();
  for (let y = Math.max(0, rect.y); y < Math.min(image.height, rect.y + rect.height); y++) {
    for (let x = Math.max(0, rect.x); x < Math.min(image.width, rect.x + rect.width); x++) {
      const at = (y * image.width + x) * 4;
      colours.add(`#${image.rgba.subarray(at, at + 4).toString('hex')}`);
    }
  }
  return colours;
}
