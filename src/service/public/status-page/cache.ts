import { createHash } from 'node:crypto';

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
  /** The version of the data it was made from (`pageVersion`). */
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

/** A rendered page as it is served: its bytes and strong ETag. */
export type RenderedPage = {
  body: Buffer;
  /** A strong ETag (quoted): a hash of the view's key, the data's version and the bytes. */
  etag: string;
};

/**
 * The bytes and strong ETag of a rendering: the ETag hashes the view, the version and the bytes, so it
 * changes whenever the bytes do (also when only the clock moved them, e.g. today's uptime).
 */
export function renderedPage(view: string, version: string, html: string): RenderedPage {
  const body = Buffer.from(html, 'utf8');
  const etag = `"${createHash('sha256').update(`${view}\n${version}\n`).update(body).digest('base64url').slice(0, 27)}"`;
  return { body, etag };
}

/**
 * Whether an `If-None-Match` header matches `etag` (RFC 9110 §13.1.2: `*`, or any listed tag compared
 * weakly, so `W/"x"` matches `"x"`).
 */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
