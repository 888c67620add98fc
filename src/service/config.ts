import { resolve } from 'node:path';
import { FormatRegistry, type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { literals } from '../common/literals.js';
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

const URL_FORMAT = 'outpost-url';
if (!FormatRegistry.Has(URL_FORMAT)) FormatRegistry.Set(URL_FORMAT, (value) => URL.canParse(value));
const SECRET_KEY_FORMAT = 'outpost-secret-key';
if (!FormatRegistry.Has(SECRET_KEY_FORMAT)) {
  FormatRegistry.Set(SECRET_KEY_FORMAT, (value) => parseSecretKey(value) !== null);
}

const Integer = (minimum: number, maximum: number) => Type.Integer({ minimum, maximum });
const Days = Integer(1, 36_500);

/**
 * The one schema of the service's environment (docs/configuration.md), after the strings were
 * converted (integers parsed, `LOG_LEVEL` upper-cased, empty values dropped). Variables with a
 * default are required here: the default stands in when they are unset.
 */
const ServiceEnvSchema = Type.Object({
  PORT: Integer(0, 65_535),
  HOST: Type.String(),
  OUTPOST_DATA_DIR: Type.String(),
  OUTPOST_LEASE_SECONDS: Integer(1, 86_400),
  OUTPOST_QUEUE_EXPIRY_SECONDS: Integer(1, 86_400),
  OUTPOST_RESULT_RETENTION_DAYS: Days,
  OUTPOST_ARTIFACT_RETENTION_DAYS: Days,
  OUTPOST_AGENT_RETENTION_DAYS: Days,
  LOG_LEVEL: literals(Object.keys(LOG_LEVELS) as LogLevelName[]),
  OUTPOST_API_KEY: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{20,200}$' })),
  OUTPOST_ACCOUNT_ID: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })),
  OUTPOST_ENCRYPTION_KEY: Type.Optional(Type.String({ format: SECRET_KEY_FORMAT })),
  /** Unset: `http://localhost:<PORT>`, filled in once PORT is known to be valid. */
  OUTPOST_APP_URL: Type.Optional(Type.String({ format: URL_FORMAT })),
});
type ServiceEnv = Static<typeof ServiceEnvSchema>;
type VariableName = keyof ServiceEnv;

/** What each variable must be, for error messages; keyed like the schema. */
const REQUIREMENTS: Record<VariableName, string> = {
  PORT: 'an integer from 0 to 65535, 0 for an ephemeral port (default 3000)',
  HOST: 'the address to listen on (default 127.0.0.1)',
  OUTPOST_DATA_DIR: 'the folder of the store, or :memory: (default ./data)',
  OUTPOST_LEASE_SECONDS: 'an integer from 1 to 86400 (default 300)',
  OUTPOST_QUEUE_EXPIRY_SECONDS: 'an integer from 1 to 86400 (default 360)',
  OUTPOST_RESULT_RETENTION_DAYS: 'an integer from 1 to 36500 (default 90)',
  OUTPOST_ARTIFACT_RETENTION_DAYS: 'an integer from 1 to 36500 (default 30)',
  OUTPOST_AGENT_RETENTION_DAYS: 'an integer from 1 to 36500 (default 30)',
  LOG_LEVEL: `one of ${Object.keys(LOG_LEVELS).join(', ')} (default INFO)`,
  OUTPOST_API_KEY: '20 to 200 characters of A-Z, a-z, 0-9, "_" or "-"',
  OUTPOST_ACCOUNT_ID: '1 to 64 characters of A-Z, a-z, 0-9, "_" or "-"',
  OUTPOST_ENCRYPTION_KEY:
    'a 32-byte key as base64 (44 characters) or hex (64 characters) (make one with: openssl rand -base64 32)',
  OUTPOST_APP_URL: 'a URL (default http://localhost:<PORT>)',
};

const DEFAULTS: Partial<Record<VariableName, string>> = {
  PORT: '3000',
  HOST: '127.0.0.1',
  OUTPOST_DATA_DIR: './data',
  OUTPOST_LEASE_SECONDS: '300',
  OUTPOST_QUEUE_EXPIRY_SECONDS: '360',
  OUTPOST_RESULT_RETENTION_DAYS: '90',
  OUTPOST_ARTIFACT_RETENTION_DAYS: '30',
  OUTPOST_AGENT_RETENTION_DAYS: '30',
  LOG_LEVEL: 'INFO',
};

const INTEGER_VARIABLES = new Set<VariableName>([
  'PORT',
  'OUTPOST_LEASE_SECONDS',
  'OUTPOST_QUEUE_EXPIRY_SECONDS',
  'OUTPOST_RESULT_RETENTION_DAYS',
  'OUTPOST_ARTIFACT_RETENTION_DAYS',
  'OUTPOST_AGENT_RETENTION_DAYS',
]);
/** Keys: their values are never echoed, only their length. */
const SECRET_VARIABLES = new Set<VariableName>(['OUTPOST_API_KEY', 'OUTPOST_ENCRYPTION_KEY']);

function convert(name: VariableName, value: string): string | number {
  if (INTEGER_VARIABLES.has(name)) {
    const n = Number(value);
    return Number.isInteger(n) ? n : value;
  }
  return name === 'LOG_LEVEL' ? value.toUpperCase() : value;
}

function describe(name: VariableName, value: string): string {
  if (SECRET_VARIABLES.has(name)) return `it was a value of ${value.length} characters (not shown)`;
  return `it was ${JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value)}`;
}

/**
 * Parses and validates the service's environment once (docs/configuration.md). Empty variables
 * count as unset; `LOG_LEVEL` is case-insensitive.
 * @returns the frozen configuration; `OUTPOST_DATA_DIR` resolved to an absolute path.
 * @throws OutpostError `OUTPOST_ERR_CONFIG` naming every bad variable, what it must be and what it
 *   was (the values of `OUTPOST_API_KEY` and `OUTPOST_ENCRYPTION_KEY` are never included).
 */
export function parseServiceConfig(env: NodeJS.ProcessEnv): ServiceConfig {
  const given: Partial<Record<VariableName, string>> = {};
  const candidate: Record<string, string | number> = {};
  for (const name of Object.keys(REQUIREMENTS) as VariableName[]) {
    const value = env[name] === '' ? undefined : env[name];
    if (value !== undefined) given[name] = value;
    const effective = value ?? DEFAULTS[name];
    if (effective !== undefined) candidate[name] = convert(name, effective);
  }

  const bad = new Set<VariableName>();
  for (const error of Value.Errors(ServiceEnvSchema, candidate)) {
    const name = error.path.split('/')[1] as VariableName | undefined;
    if (name !== undefined && name in REQUIREMENTS) bad.add(name);
  }
  if (bad.size > 0) {
    const lines = [...bad].map(
      (name) => `- ${name} must be ${REQUIREMENTS[name]}; ${describe(name, given[name] ?? '')}`,
    );
    throw new OutpostError('OUTPOST_ERR_CONFIG', `invalid service configuration:\n${lines.join('\n')}`);
  }

  const parsed = candidate as ServiceEnv;
  const dataDir = resolve(parsed.OUTPOST_DATA_DIR);
  return Object.freeze({
    port: parsed.PORT,
    host: parsed.HOST,
    dataDir,
    databaseFile: parsed.OUTPOST_DATA_DIR === ':memory:' ? ':memory:' : resolve(dataDir, 'outpost.db'),
    leaseMs: parsed.OUTPOST_LEASE_SECONDS * 1000,
    queueExpiryMs: parsed.OUTPOST_QUEUE_EXPIRY_SECONDS * 1000,
    resultRetentionDays: parsed.OUTPOST_RESULT_RETENTION_DAYS,
    artifactRetentionDays: parsed.OUTPOST_ARTIFACT_RETENTION_DAYS,
    agentRetentionDays: parsed.OUTPOST_AGENT_RETENTION_DAYS,
    appUrl: parsed.OUTPOST_APP_URL ?? `http://localhost:${parsed.PORT}`,
    logLevel: parsed.LOG_LEVEL,
    accountId: parsed.OUTPOST_ACCOUNT_ID,
    apiKey: parsed.OUTPOST_API_KEY,
    encryptionKey:
      parsed.OUTPOST_ENCRYPTION_KEY === undefined
        ? undefined
        : (parseSecretKey(parsed.OUTPOST_ENCRYPTION_KEY) ?? undefined),
  });
}
