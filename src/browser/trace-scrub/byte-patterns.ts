/** Searching bytes for many patterns at once (the final scan of a scrub). */

/** Positions apart that the strided scan of {@link BytePatterns} reads a 3-byte key at. */
const STRIDE = 6;
/** Patterns at least this long are found by the strided scan; shorter ones by Buffer.indexOf. */
const STRIDED_MIN_LENGTH = STRIDE + 2;

/**
 * Byte patterns (each at least 3 bytes) searched for in one pass over the data, whatever their
 * number. The scan reads a 3-byte key every {@link STRIDE} bytes: a pattern of
 * {@link STRIDED_MIN_LENGTH} bytes or more, wherever it starts, covers one such position, so each
 * of its first STRIDE keys is marked (a bit per possible key) and a marked key is checked against
 * the patterns it may belong to. Shorter patterns, and a handful of patterns, are searched with
 * Buffer.indexOf (native, faster per pattern).
 */
export class BytePatterns {
  readonly #short: Buffer[] = [];
  readonly #long: Buffer[] = [];
  readonly #bits = new Uint32Array(1 << 19);
  readonly #byKey = new Map<number, Array<{ pattern: Buffer; offset: number }>>();

  /** @param patterns strings (as UTF-8) or bytes; those shorter than 3 bytes, and repeats, are left out. */
  constructor(patterns: Iterable<string | Buffer>) {
    const seen = new Set<string>();
    for (const pattern of patterns) {
      const bytes = Buffer.isBuffer(pattern) ? pattern : Buffer.from(pattern);
      const key = bytes.toString('latin1');
      if (bytes.length < 3 || seen.has(key)) continue;
      seen.add(key);
      if (bytes.length < STRIDED_MIN_LENGTH) {
        this.#short.push(bytes);
        continue;
      }
      this.#long.push(bytes);
      for (let offset = 0; offset < STRIDE; offset++) {
        const start = (bytes[offset]! << 16) | (bytes[offset + 1]! << 8) | bytes[offset + 2]!;
        this.#bits[start >>> 5]! |= 1 << (start & 31);
        const list = this.#byKey.get(start);
        if (list === undefined) this.#byKey.set(start, [{ pattern: bytes, offset }]);
        else list.push({ pattern: bytes, offset });
      }
    }
  }

  /** Number of distinct patterns. */
  get size(): number {
    return this.#short.length + this.#long.length;
  }

  /** True when `data` holds any pattern. */
  foundIn(data: Buffer): boolean {
    if (data.length < 3) return false;
    for (const pattern of this.#short) if (data.includes(pattern)) return true;
    if (this.#long.length <= 4) return this.#long.some((pattern) => data.includes(pattern));
    const bits = this.#bits;
    // A plain Uint8Array view: indexed reads of it stay on V8's fast path.
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.length);
    const n = bytes.length;
    for (let i = 0; i + 2 < n; i += STRIDE) {
      const key = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
      if ((bits[key >>> 5]! & (1 << (key & 31))) === 0) continue;
      for (const { pattern, offset } of this.#byKey.get(key) ?? []) {
        const start = i - offset;
        if (start < 0 || start + pattern.length > n) continue;
        if (data.compare(pattern, 0, pattern.length, start, start + pattern.length) === 0) return true;
      }
    }
    return false;
  }
}
