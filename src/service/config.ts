import { resolve } from 'node:path';
import { OutpostError } from '../common/errors.js';
import { LOG_LEVELS, type LogLevelName } from '../common/logger.js';
import { parseSecretKey } from './store/secret-box.js';

/** Service configuration, parsed once from the environment and frozen. Times in ms. */
export type ServiceConfig = Readonly<{
  port: number;
  host: string;
  dataDir: string;
  /** SQLite file inside `dataDir`, or ":memory:". */
  databaseFile: string;
  leaseMs: number;
  queueExpiryMs: number;
  /** Days results and ended check sessions are kept (OUTPOST_RESULT_RETENTION_DAYS, default 90). */
  resultRetentionDays: number;
  /** Days artifact files are kept (OUTPOST_ARTIFACT_RETENTION_DAYS, default 30). */
  artifactRetentionDays: number;
  /** Days agents' error reports, and agents not seen, are kept (OUTPOST_AGENT_RETENTION_DAYS, default 30). */
  agentRetentionDays: number;
  appUrl: string;
  logLevel: LogLevelName;
  accountId: string | undefined;
  apiKey: string | undefined;
  /**
   * 32-byte key sealing secrets at rest, from `OUTPOST_ENCRYPTION_KEY`; undefined: the key file
   * `<dataDir>/encryption.key` (created with mode 0600 on first start) is used.
   */
  encryptionKey: Buffer | undefined;
}>;

/** Environment variables the service reads, with defaults; README's table is written from this. */
export const SERVICE_ENV = {
  PORT: ['3000', 'HTTP port of the service API'],
  HOST: ['127.0.0.1', 'Address the service listens on (0.0.0.0 in containers)'],
  OUTPOST_DATA_DIR: ['./data', 'Folder of the embedded SQLite store (outpost.db)'],
  OUTPOST_LEASE_SECONDS: [
    '300',
    'Lease of a claimed job; a job whose agent stops renewing is re-run after it',
  ],
  OUTPOST_QUEUE_EXPIRY_SECONDS: [
    '360',
    'How long a job waits for an agent before its session ends TIMED_OUT',
  ],
  OUTPOST_RESULT_RETENTION_DAYS: ['90', 'Days check results and ended check sessions are kept'],
  OUTPOST_ARTIFACT_RETENTION_DAYS: ['30', 'Days artifact files (traces, captures) are kept'],
  OUTPOST_AGENT_RETENTION_DAYS: ['30', "Days agents' error reports, and agents not seen, are kept"],
  OUTPOST_APP_URL: ['http://localhost:<PORT>', 'Base of the links in check sessions ({app_url})'],
  LOG_LEVEL: ['INFO', 'DEBUG, LOG, INFO, WARN or ERROR'],
  OUTPOST_ACCOUNT_ID: ['(random UUID)', 'Account id created on an empty store'],
  OUTPOST_API_KEY: ['(generated, printed once)', 'API key created on an empty store'],
  OUTPOST_ENCRYPTION_KEY: [
    '(key file in OUTPOST_DATA_DIR)',
    '32-byte key (base64 or hex) sealing secrets at rest; unset: encryption.key, mode 0600, made on first start',
  ],
} as const;

function integer(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
  bad: string[],
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    bad.push(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
    return fallback;
  }
  return n;
}

/**
 * Parses the service's environment (see SERVICE_ENV).
 * @throws OutpostError OUTPOST_ERR_CONFIG listing every bad variable.
 */
export function parseServiceConfig(env: NodeJS.ProcessEnv): ServiceConfig {
  const bad: string[] = [];
  const port = integer(env, 'PORT', 3000, 0, 65535, bad);
  const leaseSeconds = integer(env, 'OUTPOST_LEASE_SECONDS', 300, 1, 86_400, bad);
  const expirySeconds = integer(env, 'OUTPOST_QUEUE_EXPIRY_SECONDS', 360, 1, 86_400, bad);
  const resultRetentionDays = integer(env, 'OUTPOST_RESULT_RETENTION_DAYS', 90, 1, 36_500, bad);
  const artifactRetentionDays = integer(env, 'OUTPOST_ARTIFACT_RETENTION_DAYS', 30, 1, 36_500, bad);
  const agentRetentionDays = integer(env, 'OUTPOST_AGENT_RETENTION_DAYS', 30, 1, 36_500, bad);
  const logLevel = (env.LOG_LEVEL ?? 'INFO').toUpperCase();
  if (!(logLevel in LOG_LEVELS))
    bad.push(
      `LOG_LEVEL must be one of ${Object.keys(LOG_LEVELS).join(', ')}, got ${JSON.stringify(env.LOG_LEVEL)}`,
    );
  const apiKey = env.OUTPOST_API_KEY || undefined;
  if (apiKey !== undefined && !/^[A-Za-z0-9_-]{20,200}$/.test(apiKey)) {
    bad.push('OUTPOST_API_KEY must be 20 to 200 characters of A-Z, a-z, 0-9, "_" or "-"');
  }
  const accountId = env.OUTPOST_ACCOUNT_ID || undefined;
  if (accountId !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(accountId)) {
    bad.push(
      `OUTPOST_ACCOUNT_ID must be 1 to 64 characters of A-Z, a-z, 0-9, "_" or "-", got ${JSON.stringify(accountId)}`,
    );
  }
  const rawKey = env.OUTPOST_ENCRYPTION_KEY || undefined;
  const encryptionKey = rawKey === undefined ? undefined : (parseSecretKey(rawKey) ?? undefined);
  if (rawKey !== undefined && encryptionKey === undefined) {
    // Never echo the value: it is a key.
    bad.push(
      `OUTPOST_ENCRYPTION_KEY must be a 32-byte key as base64 (44 characters) or hex (64 characters), got ${rawKey.length} characters (make one with: openssl rand -base64 32)`,
    );
  }
  const appUrl = env.OUTPOST_APP_URL || `http://localhost:${port}`;
  if (!URL.canParse(appUrl)) bad.push(`OUTPOST_APP_URL must be a URL, got ${JSON.stringify(appUrl)}`);
  if (bad.length > 0)
    throw new OutpostError('OUTPOST_ERR_CONFIG', `invalid configuration:\n  ${bad.join('\n  ')}`);
  const dataDir = resolve(env.OUTPOST_DATA_DIR || './data');
  return Object.freeze({
    port,
    host: env.HOST || '127.0.0.1',
    dataDir,
    databaseFile: env.OUTPOST_DATA_DIR === ':memory:' ? ':memory:' : resolve(dataDir, 'outpost.db'),
    leaseMs: leaseSeconds * 1000,
    queueExpiryMs: expirySeconds * 1000,
    resultRetentionDays,
    artifactRetentionDays,
    agentRetentionDays,
    appUrl,
    logLevel: logLevel as LogLevelName,
    accountId,
    apiKey,
    encryptionKey,
  });
}
