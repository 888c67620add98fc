import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import negotiate from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { COMPRESS_THRESHOLD_BYTES, COMPRESSED_ENCODINGS, type CompressedEncoding } from './compression.js';

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** Encodes `body` as the compression plugin would (brotli at quality 4, gzip at zlib's default level), off the event loop. */
function encode(body: Buffer, encoding: CompressedEncoding): Promise<Buffer> {
  return encoding === 'br'
    ? brotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } })
    : gzipped(body);
}

/**
 * The encoding the compression plugin (compression.ts) would pick for `acceptEncoding` (the request's
 * `accept-encoding`), by the same negotiation: `*` and `x-gzip` stand for gzip; null for none or `identity`.
 */
export function negotiatedEncoding(acceptEncoding: string | undefined): CompressedEncoding | null {
  if (acceptEncoding === undefined) return null;
  return negotiate(acceptEncoding.toLowerCase().replace(/\*|x-gzip/gu, 'gzip'), [...COMPRESSED_ENCODINGS]);
}

/** One kept answer: its ETag, its JSON bytes and the encodings of them made so far. */
type KeptAnswer = {
  etag: string;
  body: Buffer;
  encoded: Map<CompressedEncoding, Promise<Buffer>>;
  /** Bytes of `body` and of the encodings made, counted against KeptAnswers' bound. */
  sizeBytes: number;
};

/**
 * A replica's last serialized answers of a list route, each under a key (the account and the query string) and
 * the `ETag` it was made for: an answer is sent again only to a request whose freshly computed ETag is the same,
 * so it is exactly as fresh as the ETag's inputs, which come from the store (one replica's change moves every
 * replica's ETag, and the kept answer of the old one is never sent again). Kept in memory up to `maxBytes`
 * (JSON and its brotli and gzip encodings together), the least recently sent answers dropped first; an
 * answer larger than the bound is not kept. Requests for the same key and ETag while the answer is being made
 * wait for that one making.
 */
export class KeptAnswers {
  readonly #maxBytes: number;
  /** By key, least recently used first (a Map keeps insertion order; a hit moves its entry to the end). */
  readonly #entries = new Map<string, KeptAnswer>();
  readonly #making = new Map<string, Promise<Buffer>>();
  #sizeBytes = 0;

  /** @param maxBytes bound of the answers kept, bytes (JSON and encodings). */
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Bytes kept now (JSON and encodings), at most the bound. */
  get sizeBytes(): number {
    return this.#sizeBytes;
  }

  /**
   * Sends on `reply` the answer kept for `key` under `etag`, or the one `make` returns (JSON bytes), which is
   * kept: JSON as `application/json`, or (when `request`'s `accept-encoding` negotiates brotli or gzip, as the
   * compression plugin would; not with `x-no-compression`, nor for JSON under COMPRESS_THRESHOLD_BYTES) its
   * kept encoding with `content-encoding` and `vary`, made once and kept too.
   * @throws what `make` throws (nothing is kept then).
   */
  async send(
    request: FastifyRequest,
    reply: FastifyReply,
    key: string,
    etag: string,
    make: () => Promise<Buffer>,
  ): Promise<FastifyReply> {
    const kept = this.#hit(key, etag) ?? (await this.#make(key, etag, make));
    reply.type('application/json; charset=utf-8');
    const encoding =
      kept.body.length < COMPRESS_THRESHOLD_BYTES || request.headers['x-no-compression'] !== undefined
        ? null
        : negotiatedEncoding(request.headers['accept-encoding']);
    if (encoding === null) return reply.send(kept.body);
    const bytes = await this.#encoded(key, kept, encoding);
    return reply
      .header('content-encoding', encoding)
      .header('vary', 'accept-encoding')
      .header('content-length', bytes.length)
      .send(bytes);
  }

  #hit(key: string, etag: string): KeptAnswer | undefined {
    const entry = this.#entries.get(key);
    if (!entry || entry.etag !== etag) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry;
  }

  async #make(key: string, etag: string, make: () => Promise<Buffer>): Promise<KeptAnswer> {
    const making = `${etag} ${key}`;
    let body = this.#making.get(making);
    if (!body) {
      body = make();
      this.#making.set(making, body);
      body.then(
        (made) => {
          this.#making.delete(making);
          this.#keep(key, { etag, body: made, encoded: new Map(), sizeBytes: made.length });
        },
        () => this.#making.delete(making),
      );
    }
    const made = await body;
    return this.#hit(key, etag) ?? { etag, body: made, encoded: new Map(), sizeBytes: made.length };
  }

  async #encoded(key: string, entry: KeptAnswer, encoding: CompressedEncoding): Promise<Buffer> {
    let bytes = entry.encoded.get(encoding);
    if (!bytes) {
      bytes = encode(entry.body, encoding);
      entry.encoded.set(encoding, bytes);
      bytes.then(
        (made) => {
          if (this.#entries.get(key) !== entry) return;
          entry.sizeBytes += made.length;
          this.#sizeBytes += made.length;
          this.#evict();
        },
        () => entry.encoded.delete(encoding),
      );
    }
    return bytes;
  }

  #keep(key: string, entry: KeptAnswer): void {
    this.#drop(key);
    if (entry.sizeBytes > this.#maxBytes) return;
    this.#entries.set(key, entry);
    this.#sizeBytes += entry.sizeBytes;
    this.#evict();
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#sizeBytes -= entry.sizeBytes;
  }

  /** Drops the least recently sent answers until the bound holds. */
  #evict(): void {
    for (const key of this.#entries.keys()) {
      if (this.#sizeBytes <= this.#maxBytes) return;
      this.#drop(key);
    }
  }
}
