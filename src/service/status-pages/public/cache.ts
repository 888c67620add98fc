import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';

/**
 * A bounded least-recently-used map: reading an entry makes it the newest; setting one past `maxEntries`
 * drops the oldest.
 */
export class LruMap<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #max: number;
  /** @param maxEntries at least 1. */
  constructor(maxEntries: number) {
    this.#max = Math.max(1, maxEntries);
  }

  /** The entry of `key`, made the newest; undefined when absent. */
  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  /** Sets `key`'s entry as the newest, dropping the oldest entries past the bound. */
  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    while (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value as K);
  }

  /** Removes `key`'s entry. */
  delete(key: K): void {
    this.#entries.delete(key);
  }

  /** How many entries are kept. */
  get size(): number {
    return this.#entries.size;
  }
}

/** A rendering kept by {@link VersionedCache}. */
export type CachedValue<T> = {
  /** The version of the data it was made from (`PageReader.version`, page-reader.ts). */
  version: string;
  /** Until when (epoch ms) the clock alone leaves it right (`modelFreshUntil`). */
  freshUntilMs: number;
  value: T;
};

/**
 * A bounded LRU cache of values made from versioned data: a value is served while its `version` is the
 * current one and `nowMs < freshUntilMs`; otherwise it is made again, once for any number of concurrent
 * requests of the same key (they share the one promise).
 */
export class VersionedCache<T> {
  readonly #entries: LruMap<string, CachedValue<T>>;
  readonly #making = new Map<string, Promise<CachedValue<T>>>();

  /** @param maxEntries the bound (default 200). */
  constructor(maxEntries = 200) {
    this.#entries = new LruMap(maxEntries);
  }

  /**
   * The value of `key` for `version` at `nowMs`: the cached one when still good, else `make()`'s (stored).
   * @throws whatever `make` throws (nothing is stored then).
   */
  async get(
    key: string,
    version: string,
    nowMs: number,
    make: () => Promise<{ value: T; freshUntilMs: number }>,
  ): Promise<CachedValue<T>> {
    const cached = this.#entries.get(key);
    if (cached && cached.version === version && nowMs < cached.freshUntilMs) return cached;
    const flightKey = `${key}\n${version}`;
    const inFlight = this.#making.get(flightKey);
    if (inFlight) return inFlight;
    const promise = (async () => {
      try {
        const made = await make();
        const entry = { version, freshUntilMs: made.freshUntilMs, value: made.value };
        this.#entries.set(key, entry);
        return entry;
      } finally {
        this.#making.delete(flightKey);
      }
    })();
    this.#making.set(flightKey, promise);
    return promise;
  }

  /** How many values are kept. */
  get size(): number {
    return this.#entries.size;
  }
}

/** A rendered page as it is served: its bytes, gzipped once, and a strong ETag for each. */
export type RenderedPage = {
  body: Buffer;
  /** `body` gzipped (served to clients that accept gzip; the service has no compression of its own). */
  gzip: Buffer;
  /** A strong ETag (quoted) of `body`: a hash of the view's key, the data's version and the bytes. */
  etag: string;
  /** The strong ETag of `gzip` (another representation: `etag` with `-gz` inside the quotes). */
  gzipEtag: string;
};

/**
 * The bytes and strong ETags of a rendering: the ETag hashes the view, the version and the bytes, so it
 * changes whenever the bytes do (also when only the clock moved them, e.g. today's uptime).
 */
export function renderedPage(view: string, version: string, html: string): RenderedPage {
  const body = Buffer.from(html, 'utf8');
  const tag = createHash('sha256')
    .update(`${view}\n${version}\n`)
    .update(body)
    .digest('base64url')
    .slice(0, 27);
  return { body, gzip: gzipSync(body, { level: 6 }), etag: `"${tag}"`, gzipEtag: `"${tag}-gz"` };
}

/** Whether an `Accept-Encoding` header accepts gzip (listed, or `*`, without `q=0`). */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false;
  let gzip: boolean | undefined;
  let any = false;
  for (const part of acceptEncoding.toLowerCase().split(',')) {
    const [coding, ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const accepted = q === undefined || Number(q.slice(2)) > 0;
    if (coding === 'gzip' || coding === 'x-gzip') gzip = accepted;
    else if (coding === '*') any = accepted;
  }
  return gzip ?? any;
}

/**
 * Whether an `If-None-Match` header matches one of `etags` (RFC 9110 §13.1.2: `*`, or any listed tag
 * compared weakly, so `W/"x"` matches `"x"`): a client holding either encoding of the same bytes is
 * up to date.
 */
export function etagMatches(ifNoneMatch: string | undefined, ...etags: string[]): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => etags.includes(tag.trim().replace(/^W\//, '')));
}
