import { existsSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutpostError } from '../../common/errors.js';
import { PACKAGE_ROOT } from '../../common/paths.js';
import { readHeadroom } from '../memory.js';
import type { BrowserPoolOptions, PooledRunner } from './types.js';

/** Bytes in a MiB. */
export const MIB = 1024 * 1024;

/**
 * {@link BrowserPoolOptions} with every default applied and every bound checked. Sizes in bytes
 * (the options give MiB), times in milliseconds.
 */
export type PoolSettings = {
  /** Folder holding one `<runtimeId>/` per runtime. */
  runtimesDir: string;
  /** Folder of the hosts' and runners' private temp dirs; an existing one. */
  tmpRoot: string;
  /** Chromium's executable; undefined: the host's default. */
  chromiumPath: string | undefined;
  /** Browser checks running at once, all runtimes together. */
  concurrency: number;
  /** Runners kept started and waiting per runtime in use. */
  spareRunners: number;
  memoryPerCheckBytes: number;
  memoryReserveBytes: number;
  memorySettleMs: number;
  memoryRetryMs: number;
  /** Reads the memory headroom, bytes; null: unknown. */
  readHeadroom: () => Promise<number | null>;
  maxHostPssBytes: number;
  maxChecksPerHost: number;
  pssIntervalMs: number;
  healthIntervalMs: number;
  healthTimeoutMs: number;
  hostStartTimeoutMs: number;
  compatibilityTimeoutMs: number;
  maxHosts: number;
  hostIdleMs: number;
};

/**
 * An integer option, or its default when it is not given.
 *
 * @throws OutpostError OUTPOST_ERR_CONFIG naming the option when it is not an integer from `min` to `max`.
 */
function integerOption(name: string, value: number | undefined, fallback: number, min: number, max: number) {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new OutpostError(
      'OUTPOST_ERR_CONFIG',
      `BrowserPool option ${name} must be an integer from ${min} to ${max}, got ${String(value)}`,
    );
  }
  return value;
}

/**
 * The pool's settings from its options: defaults (documented on {@link BrowserPoolOptions})
 * applied, MiB turned into bytes. Options are checked in the order they are documented.
 *
 * @throws OutpostError OUTPOST_ERR_CONFIG naming the first option out of range.
 */
export function poolSettings<R extends PooledRunner>(options: BrowserPoolOptions<R>): PoolSettings {
  const concurrency = integerOption(
    'browserConcurrency',
    options.browserConcurrency,
    availableParallelism(),
    1,
    1024,
  );
  return {
    runtimesDir: options.runtimesDir ?? join(PACKAGE_ROOT, 'runtimes'),
    tmpRoot: options.tmpRoot ?? tmpdir(),
    chromiumPath: options.chromiumPath,
    concurrency,
    spareRunners: integerOption('spareRunners', options.spareRunners, concurrency, 1, 64),
    memoryPerCheckBytes:
      integerOption('memoryPerCheckMiB', options.memoryPerCheckMiB, 300, 0, 1_048_576) * MIB,
    memoryReserveBytes: integerOption('memoryReserveMiB', options.memoryReserveMiB, 256, 0, 1_048_576) * MIB,
    memorySettleMs: integerOption('memorySettleMs', options.memorySettleMs, 5_000, 0, 600_000),
    memoryRetryMs: integerOption('memoryRetryMs', options.memoryRetryMs, 1_000, 10, 600_000),
    readHeadroom: options.readHeadroom ?? (() => readHeadroom()),
    maxHostPssBytes: integerOption('maxHostPssMiB', options.maxHostPssMiB, 1024, 1, 1_048_576) * MIB,
    maxChecksPerHost: integerOption('maxChecksPerHost', options.maxChecksPerHost, 200, 1, 1_000_000),
    pssIntervalMs: integerOption('pssIntervalMs', options.pssIntervalMs, 10_000, 100, 3_600_000),
    healthIntervalMs: integerOption('healthIntervalMs', options.healthIntervalMs, 2_000, 50, 600_000),
    healthTimeoutMs: integerOption('healthTimeoutMs', options.healthTimeoutMs, 2_500, 50, 600_000),
    hostStartTimeoutMs: integerOption(
      'hostStartTimeoutMs',
      options.hostStartTimeoutMs,
      45_000,
      1_000,
      600_000,
    ),
    compatibilityTimeoutMs: integerOption(
      'compatibilityTimeoutMs',
      options.compatibilityTimeoutMs,
      20_000,
      1_000,
      600_000,
    ),
    maxHosts: integerOption('maxHosts', options.maxHosts, 4, 1, 256),
    hostIdleMs: integerOption('hostIdleMs', options.hostIdleMs, 60_000, 10, 86_400_000),
  };
}

/**
 * Checks that `tmpRoot` exists (checked after the uid range, as the pool always did).
 *
 * @throws OutpostError OUTPOST_ERR_CONFIG when it does not.
 */
export function checkTmpRoot(tmpRoot: string): void {
  if (!existsSync(tmpRoot)) {
    throw new OutpostError(
      'OUTPOST_ERR_CONFIG',
      `BrowserPool option tmpRoot must be an existing folder, got ${tmpRoot}`,
    );
  }
}
