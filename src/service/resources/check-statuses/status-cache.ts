// store.ts uses this class and this file its constants, read only when a method runs: the cycle is harmless.
import { HOUR_MS, type HourSums, STATUS_HOURS } from './store.js';

/**
 * Most checks whose hourly sums one store's cache keeps (all accounts): about 0.7 KB of sums and 0.5 KB of JSON
 * each, so 50,000 checks hold about 60 MB. Past it, the accounts read longest ago are dropped whole; an account
 * with more checks than that has only as many kept.
 */
export const MAX_CACHED_CHECKS = 50_000;

/** A check's hourly sums as read at one version of its rollups, and its last status entry as JSON. */
type Entry = {
  /** The version of the check's rollups the sums were read at (see {@link StatusCache}). */
  version: string;
  /** Start of the hour of slot 0, epoch ms. */
  fromHourMs: number;
  /** Sums by slot from `fromHourMs`, as HourSums. */
  sums: HourSums;
  /** The check's entry of the list as JSON, and the key of everything it was made from (see {@link StatusCache.json}). */
  json?: { key: string; text: string } | undefined;
};

/**
 * What a service keeps of each check's status between reads of `GET /v1/check-statuses`, per account: the hourly
 * sums of its last STATUS_HOURS hours (HourSums), so that a read after one new result reads the rollups of that
 * one check again, not of the account's 10,000 (240,000 rows, 170 ms on SQLite); and its entry of the list as
 * JSON, written again only when something it is made of changed.
 *
 * A check's sums are kept under a version of its rollups: its `check_last_results` row's `revision`, which the
 * transaction that writes its `check_stats_hourly` rows moves (every FINAL result, older ones too), with the
 * row's `result_id` (a row deleted with its check and made again starts its revision over, never with the same
 * result). The caller reads the versions first and the sums after, so sums kept under a version are at least as
 * new as it: a result stored between the two reads moves the version, and the next read reads the sums again.
 * Replicas keep their own; every one reads the versions from the store, so none answers from sums older than the
 * store's. Sums kept from an earlier hour serve a later one shifted by the hours between (the rows of a newer
 * hour come with a result, which moves the version).
 */
export class StatusCache {
  readonly #accounts = new Map<string, Map<string, Entry>>();
  readonly #maxChecks: number;
  #size = 0;

  /** @param maxChecks most checks kept over every account (default MAX_CACHED_CHECKS). */
  constructor(maxChecks = MAX_CACHED_CHECKS) {
    this.#maxChecks = maxChecks;
  }

  /** Checks kept, over every account. */
  get size(): number {
    return this.#size;
  }

  /**
   * The sums of `checkId` at `version` for the hours from `fromHourMs` (slot 0; an hour's start, epoch ms);
   * undefined when none are kept at that version from that hour or before. The array is the cache's own: read
   * it, never write it. Sums kept from an earlier hour are shifted once, and kept shifted.
   */
  read(accountId: string, checkId: string, version: string, fromHourMs: number): HourSums | undefined {
    const entry = this.#accounts.get(accountId)?.get(checkId);
    if (!entry || entry.version !== version || entry.fromHourMs > fromHourMs) return undefined;
    if (entry.fromHourMs < fromHourMs) {
      const shift = Math.round((fromHourMs - entry.fromHourMs) / HOUR_MS);
      const shifted: HourSums = new Float64Array(3 * STATUS_HOURS);
      if (shift < STATUS_HOURS) shifted.set(entry.sums.subarray(3 * shift, 3 * STATUS_HOURS), 0);
      entry.sums = shifted;
      entry.fromHourMs = fromHourMs;
      entry.json = undefined;
    }
    return entry.sums;
  }

  /**
   * The JSON of `checkId`'s entry kept under `key` (the caller's key of everything the entry is made of), or
   * undefined. Only a check with sums kept has one.
   */
  json(accountId: string, checkId: string, key: string): string | undefined {
    const json = this.#accounts.get(accountId)?.get(checkId)?.json;
    return json?.key === key ? json.text : undefined;
  }

  /** Keeps `text`, the JSON of `checkId`'s entry under `key`, if the check's sums are kept; else nothing. */
  keepJson(accountId: string, checkId: string, key: string, text: string): void {
    const entry = this.#accounts.get(accountId)?.get(checkId);
    if (entry) entry.json = { key, text };
  }

  /** Keeps `sums` (slot 0 at `fromHourMs`) of `checkId` at `version`; the array is kept as it is, not copied. */
  keep(accountId: string, checkId: string, version: string, fromHourMs: number, sums: HourSums): void {
    let checks = this.#accounts.get(accountId);
    if (checks) {
      // Most recently used last: the eviction below drops from the front.
      this.#accounts.delete(accountId);
    } else {
      checks = new Map();
    }
    this.#accounts.set(accountId, checks);
    if (!checks.has(checkId)) {
      for (const [oldest, kept] of this.#accounts) {
        if (this.#size < this.#maxChecks || oldest === accountId) break;
        this.#accounts.delete(oldest);
        this.#size -= kept.size;
      }
      // Still full: this account alone holds the bound, and its other checks are read from the store each time.
      if (this.#size >= this.#maxChecks) return;
      this.#size += 1;
    }
    checks.set(checkId, { version, fromHourMs, sums });
  }

  /**
   * Drops the entries of `accountId`'s checks that are not in `present` (deleted checks), after a read of every
   * check of the account.
   */
  retainOnly(accountId: string, present: ReadonlySet<string>): void {
    const checks = this.#accounts.get(accountId);
    if (!checks || checks.size <= present.size) return;
    for (const checkId of checks.keys()) {
      if (present.has(checkId)) continue;
      checks.delete(checkId);
      this.#size -= 1;
    }
  }
}
