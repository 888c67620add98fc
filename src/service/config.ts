import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { FormatRegistry, type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { literals } from '../common/literals.js';
import { OutpostError } from '../common/errors.js';
import { LOG_LEVELS, type LogLevelName } from '../common/logger.js';
import { parseOutboundAllow } from './platform/http/outbound-policy.js';
import { parseSecretKey } from './platform/store/secret-box.js';

/** Service configuration, parsed once from the environment and frozen. Times in ms. */
export type ServiceConfig = Readonly<{
  port: number;
  host: string;
  dataDir: string;
  /** SQLite file inside `dataDir`, or ":memory:"; unused when `databaseUrl` is set. */
  databaseFile: string;
  /**
   * The PostgreSQL store (OUTPOST_DATABASE_URL, `postgres://user:password@host:5432/database`); undefined:
   * the embedded SQLite store `databaseFile`. Several service processes may share one PostgreSQL store.
   */
  databaseUrl: string | undefined;
  /** Replicas wake each other with LISTEN/NOTIFY (OUTPOST_DATABASE_NOTIFY, `on` by default; `off` polls). */
  databaseNotify: boolean;
  /**
   * Each connection to PostgreSQL prepares its statements once (OUTPOST_DATABASE_PREPARED_STATEMENTS, `on` by
   * default; `off` behind a transaction-pooling proxy that cannot carry named prepared statements).
   */
  databasePreparedStatements: boolean;
  leaseMs: number;
  queueExpiryMs: number;
  /** Days results and ended check sessions are kept (OUTPOST_RESULT_RETENTION_DAYS, default 90). */
  resultRetentionDays: number;
  /** Days artifact files are kept (OUTPOST_ARTIFACT_RETENTION_DAYS, default 30). */
  artifactRetentionDays: number;
  /** Days agents' error reports, and agents not seen, are kept (OUTPOST_AGENT_RETENTION_DAYS, default 30). */
  agentRetentionDays: number;
  /**
   * Hours a passing run's logs, HTTP bodies and most headers are kept (OUTPOST_PASSING_DETAIL_HOURS, 1–876 000,
   * default 24); then the runs module's retention drops them from the stored result. Failing and degraded runs
   * keep everything for `resultRetentionDays` (docs/architecture.md, "Store size").
   */
  passingDetailHours: number;
  appUrl: string;
  logLevel: LogLevelName;
  accountId: string | undefined;
  apiKey: string | undefined;
  /** Email of the first person (OWNER) made on a fresh store (`OUTPOST_ADMIN_EMAIL`, default admin@localhost). */
  adminEmail: string;
  /**
   * 32-byte key sealing secrets at rest, from `OUTPOST_ENCRYPTION_KEY`; undefined: the key file
   * `<dataDir>/encryption.key` (created with mode 0600 on first start) is used.
   */
  encryptionKey: Buffer | undefined;
  /**
   * Status-page custom domains that need no DNS verification (OUTPOST_STATUS_PAGE_DOMAINS), lower-case:
   * `.status.example.com` covers every name under it, `status.example.org` that name only. Default none.
   */
  statusPageDomains: readonly string[];
  /**
   * DNS servers the custom-domain TXT check asks (OUTPOST_DNS_SERVERS): `address` or `address:port`
   * (`[v6]:port`); undefined: the system's resolvers.
   */
  dnsServers: readonly string[] | undefined;
  /**
   * Outbound allow-list (OUTPOST_OUTBOUND_ALLOW): CIDR ranges, addresses and host names the URLs users give
   * (alert channels) may reach although the outbound policy would refuse them. Default none.
   */
  outboundAllow: readonly string[];
  /** Whether those URLs may reach private addresses (OUTPOST_OUTBOUND_PRIVATE); default `allow`. */
  outboundPrivate: 'allow' | 'deny';
  /**
   * How answers to API-key requests show stored credentials (OUTPOST_API_CREDENTIALS; docs/security.md,
   * "Credentials in answers"): `masked` (default) or `clear`.
   */
  apiCredentials: 'masked' | 'clear';
  /**
   * Where uploaded artifacts are kept (OUTPOST_ARTIFACT_STORE): `files` under `<dataDir>/artifacts`, or
   * `database`, rows of the store every replica shares. Default `database` on PostgreSQL, else `files`.
   */
  artifactStore: 'files' | 'database';
}>;

const URL_FORMAT = 'outpost-url';
if (!FormatRegistry.Has(URL_FORMAT)) FormatRegistry.Set(URL_FORMAT, (value) => URL.canParse(value));
const SECRET_KEY_FORMAT = 'outpost-secret-key';
if (!FormatRegistry.Has(SECRET_KEY_FORMAT)) {
  FormatRegistry.Set(SECRET_KEY_FORMAT, (value) => parseSecretKey(value) !== null);
}

const OUTBOUND_ALLOW_FORMAT = 'outpost-outbound-allow';
if (!FormatRegistry.Has(OUTBOUND_ALLOW_FORMAT)) {
  FormatRegistry.Set(OUTBOUND_ALLOW_FORMAT, (value) => parseOutboundAllow(value) !== null);
}

const DOMAIN_LIST_FORMAT = 'outpost-domain-list';
if (!FormatRegistry.Has(DOMAIN_LIST_FORMAT)) {
  FormatRegistry.Set(DOMAIN_LIST_FORMAT, (value) => parseDomainAllowList(value) !== null);
}
const DNS_SERVERS_FORMAT = 'outpost-dns-servers';
if (!FormatRegistry.Has(DNS_SERVERS_FORMAT)) {
  FormatRegistry.Set(DNS_SERVERS_FORMAT, (value) => parseDnsServers(value) !== null);
}

/** One DNS label (RFC 1123): letters, digits and hyphens, 1–63, no hyphen at either end. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** An address to listen on: an IP address, or a host name of RFC 1123 labels (`localhost`). */
const LISTEN_HOST_FORMAT = 'outpost-listen-host';
if (!FormatRegistry.Has(LISTEN_HOST_FORMAT)) {
  FormatRegistry.Set(LISTEN_HOST_FORMAT, (value) => {
    const host = value.trim().replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) !== 0) return true;
    const labels = host.toLowerCase().replace(/\.$/, '').split('.');
    return host.length <= 253 && labels.every((label) => LABEL.test(label));
  });
}
/** A URL with one of the given protocols and a host. */
const urlWith = (protocols: readonly string[]) => (value: string) => {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return protocols.includes(url.protocol) && url.hostname !== '';
};
/** An IANA time zone Intl knows (`Europe/Berlin`, `UTC`). */
const TIME_ZONE_FORMAT = 'outpost-time-zone';
if (!FormatRegistry.Has(TIME_ZONE_FORMAT)) {
  FormatRegistry.Set(TIME_ZONE_FORMAT, (value) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: value });
      return true;
    } catch {
      return false;
    }
  });
}
const SMTP_URL_FORMAT = 'outpost-smtp-url';
if (!FormatRegistry.Has(SMTP_URL_FORMAT)) FormatRegistry.Set(SMTP_URL_FORMAT, urlWith(['smtp:', 'smtps:']));
const POSTGRES_URL_FORMAT = 'outpost-postgres-url';
if (!FormatRegistry.Has(POSTGRES_URL_FORMAT))
  FormatRegistry.Set(POSTGRES_URL_FORMAT, urlWith(['postgres:', 'postgresql:']));
const HTTP_URL_FORMAT = 'outpost-http-url';
if (!FormatRegistry.Has(HTTP_URL_FORMAT)) FormatRegistry.Set(HTTP_URL_FORMAT, urlWith(['http:', 'https:']));
/** A sender: `alerts@example.com` or `Outpost <alerts@example.com>`. */
const MAIL_FROM_FORMAT = 'outpost-mail-from';
if (!FormatRegistry.Has(MAIL_FROM_FORMAT)) {
  FormatRegistry.Set(MAIL_FROM_FORMAT, (value) =>
    /^(?:[^<>]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/.test(value.trim()),
  );
}

/**
 * Parses OUTPOST_STATUS_PAGE_DOMAINS: comma-separated entries, each a host name (that name only) or a host
 * name after a dot (`.status.example.com`: every name under it, not the name itself). Spaces around entries
 * and empty entries are ignored; compared without case, so the result is lower-case.
 * @returns the entries, or null when one is not a host name (at most 253 characters).
 */
export function parseDomainAllowList(text: string): string[] | null {
  const entries = text
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .map((entry) => (entry.length > 1 ? entry.replace(/\.$/, '') : entry))
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    const name = entry.startsWith('.') ? entry.slice(1) : entry;
    if (name === '' || name.length > 253 || !name.split('.').every((label) => LABEL.test(label))) return null;
  }
  return entries;
}

/**
 * Parses OUTPOST_DNS_SERVERS: comma-separated IP addresses, each optionally with a port (`192.0.2.53`,
 * `192.0.2.53:5353`, `2001:db8::53`, `[2001:db8::53]:5353`), in the form node:dns `setServers` takes.
 * @returns the servers, or null when one is not an address (or a port is not 1–65535) or none is given.
 */
export function parseDnsServers(text: string): string[] | null {
  const servers = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const portOk = (port: string) => /^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65_535;
  for (const server of servers) {
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(server);
    if (bracketed) {
      if (isIP(bracketed[1]!) !== 6 || (bracketed[2] !== undefined && !portOk(bracketed[2]))) return null;
      continue;
    }
    if (isIP(server) !== 0) continue;
    const colon = server.lastIndexOf(':');
    if (colon < 0 || isIP(server.slice(0, colon)) !== 4 || !portOk(server.slice(colon + 1))) return null;
  }
  return servers.length > 0 ? servers : null;
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
  HOST: Type.String({ format: LISTEN_HOST_FORMAT }),
  OUTPOST_DATA_DIR: Type.String(),
  OUTPOST_DATABASE_URL: Type.Optional(Type.String({ format: POSTGRES_URL_FORMAT })),
  OUTPOST_DATABASE_NOTIFY: literals(['on', 'off'] as const),
  OUTPOST_DATABASE_PREPARED_STATEMENTS: literals(['on', 'off'] as const),
  OUTPOST_LEASE_SECONDS: Integer(1, 86_400),
  OUTPOST_QUEUE_EXPIRY_SECONDS: Integer(1, 86_400),
  OUTPOST_RESULT_RETENTION_DAYS: Days,
  OUTPOST_ARTIFACT_RETENTION_DAYS: Days,
  OUTPOST_AGENT_RETENTION_DAYS: Days,
  OUTPOST_PASSING_DETAIL_HOURS: Integer(1, 876_000),
  LOG_LEVEL: literals(Object.keys(LOG_LEVELS) as LogLevelName[]),
  OUTPOST_API_KEY: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{20,200}$' })),
  OUTPOST_ACCOUNT_ID: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })),
  OUTPOST_ADMIN_EMAIL: Type.Optional(
    Type.String({ minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$' }),
  ),
  OUTPOST_ENCRYPTION_KEY: Type.Optional(Type.String({ format: SECRET_KEY_FORMAT })),
  /** Unset: `http://localhost:<PORT>`, filled in once PORT is known to be valid. */
  OUTPOST_APP_URL: Type.Optional(Type.String({ format: URL_FORMAT })),
  OUTPOST_STATUS_PAGE_DOMAINS: Type.Optional(Type.String({ format: DOMAIN_LIST_FORMAT })),
  OUTPOST_DNS_SERVERS: Type.Optional(Type.String({ format: DNS_SERVERS_FORMAT })),
  OUTPOST_OUTBOUND_ALLOW: Type.Optional(Type.String({ format: OUTBOUND_ALLOW_FORMAT })),
  OUTPOST_OUTBOUND_PRIVATE: literals(['allow', 'deny'] as const),
  OUTPOST_API_CREDENTIALS: literals(['masked', 'clear'] as const),
  /** Unset: `database` with OUTPOST_DATABASE_URL, else `files`. */
  OUTPOST_ARTIFACT_STORE: Type.Optional(literals(['files', 'database'] as const)),
  // Read by the alert providers (src/service/alerting/channels/providers.ts); checked here so that a
  // typo stops the start instead of failing every notification later.
  OUTPOST_SMTP_URL: Type.Optional(Type.String({ format: SMTP_URL_FORMAT })),
  OUTPOST_SMTP_FROM: Type.Optional(Type.String({ format: MAIL_FROM_FORMAT })),
  OUTPOST_TIME_ZONE: Type.Optional(Type.String({ format: TIME_ZONE_FORMAT, maxLength: 64 })),
  OUTPOST_PAGERDUTY_URL: Type.Optional(Type.String({ format: HTTP_URL_FORMAT })),
  OUTPOST_OPSGENIE_URL: Type.Optional(Type.String({ format: HTTP_URL_FORMAT })),
  OUTPOST_OPSGENIE_EU_URL: Type.Optional(Type.String({ format: HTTP_URL_FORMAT })),
  OUTPOST_TWILIO_URL: Type.Optional(Type.String({ format: HTTP_URL_FORMAT })),
});
type ServiceEnv = Static<typeof ServiceEnvSchema>;
type VariableName = keyof ServiceEnv;

/** What each variable must be, for error messages; keyed like the schema. */
const REQUIREMENTS: Record<VariableName, string> = {
  PORT: 'an integer from 0 to 65535, 0 for an ephemeral port (default 3000)',
  HOST: 'an IP address or a host name to listen on (default 127.0.0.1)',
  OUTPOST_DATA_DIR: 'the folder of the store, or :memory: (default ./data)',
  OUTPOST_DATABASE_URL:
    'a postgres:// or postgresql:// URL with a host (postgres://outpost:pass@db:5432/outpost)',
  OUTPOST_DATABASE_NOTIFY: 'on or off',
  OUTPOST_DATABASE_PREPARED_STATEMENTS: 'on or off',
  OUTPOST_LEASE_SECONDS: 'an integer from 1 to 86400 (default 300)',
  OUTPOST_QUEUE_EXPIRY_SECONDS: 'an integer from 1 to 86400 (default 360)',
  OUTPOST_RESULT_RETENTION_DAYS: 'an integer from 1 to 36500 (default 90)',
  OUTPOST_ARTIFACT_RETENTION_DAYS: 'an integer from 1 to 36500 (default 30)',
  OUTPOST_AGENT_RETENTION_DAYS: 'an integer from 1 to 36500 (default 30)',
  OUTPOST_PASSING_DETAIL_HOURS: 'an integer number of hours from 1 to 876000 (default 24)',
  LOG_LEVEL: `one of ${Object.keys(LOG_LEVELS).join(', ')} (default INFO)`,
  OUTPOST_API_KEY: '20 to 200 characters of A-Z, a-z, 0-9, "_" or "-"',
  OUTPOST_ACCOUNT_ID: '1 to 64 characters of A-Z, a-z, 0-9, "_" or "-"',
  OUTPOST_ADMIN_EMAIL: 'an email address (default admin@localhost)',
  OUTPOST_ENCRYPTION_KEY:
    'a 32-byte key as base64 (44 characters) or hex (64 characters) (make one with: openssl rand -base64 32)',
  OUTPOST_APP_URL: 'a URL (default http://localhost:<PORT>)',
  OUTPOST_STATUS_PAGE_DOMAINS:
    'comma-separated host names, each a name or a suffix starting with "." (.status.example.com)',
  OUTPOST_DNS_SERVERS:
    'comma-separated IP addresses, each optionally with a port (192.0.2.53:5353, [::1]:53)',
  OUTPOST_OUTBOUND_ALLOW:
    'comma-separated CIDR ranges, addresses and host names (10.0.0.0/8,127.0.0.1,hooks.internal)',
  OUTPOST_OUTBOUND_PRIVATE: 'allow or deny (default allow)',
  OUTPOST_API_CREDENTIALS: 'masked or clear (default masked): how API-key answers show stored credentials',
  OUTPOST_ARTIFACT_STORE:
    'files or database (default database with OUTPOST_DATABASE_URL, else files): where uploaded artifacts are kept',
  OUTPOST_SMTP_URL: 'an smtp:// or smtps:// URL with a host (smtp://user:pass@mail.example.com:587)',
  OUTPOST_SMTP_FROM: 'a sender address (alerts@example.com or Outpost <alerts@example.com>)',
  OUTPOST_TIME_ZONE: 'an IANA time zone such as Europe/Berlin (default UTC): the times of alert mails',
  OUTPOST_PAGERDUTY_URL: 'an http:// or https:// URL',
  OUTPOST_OPSGENIE_URL: 'an http:// or https:// URL',
  OUTPOST_OPSGENIE_EU_URL: 'an http:// or https:// URL',
  OUTPOST_TWILIO_URL: 'an http:// or https:// URL',
};

/** Variables a provider needs together (docs/configuration.md, alert providers). */
const PROVIDER_GROUPS: readonly (readonly string[])[] = [
  ['OUTPOST_SMTP_URL', 'OUTPOST_SMTP_FROM'],
  ['OUTPOST_TWILIO_ACCOUNT_SID', 'OUTPOST_TWILIO_AUTH_TOKEN', 'OUTPOST_TWILIO_FROM'],
];

const DEFAULTS: Partial<Record<VariableName, string>> = {
  PORT: '3000',
  HOST: '127.0.0.1',
  OUTPOST_DATA_DIR: './data',
  OUTPOST_LEASE_SECONDS: '300',
  OUTPOST_QUEUE_EXPIRY_SECONDS: '360',
  OUTPOST_RESULT_RETENTION_DAYS: '90',
  OUTPOST_ARTIFACT_RETENTION_DAYS: '30',
  OUTPOST_AGENT_RETENTION_DAYS: '30',
  OUTPOST_PASSING_DETAIL_HOURS: '24',
  LOG_LEVEL: 'INFO',
  OUTPOST_OUTBOUND_PRIVATE: 'allow',
  OUTPOST_DATABASE_NOTIFY: 'on',
  OUTPOST_DATABASE_PREPARED_STATEMENTS: 'on',
  OUTPOST_API_CREDENTIALS: 'masked',
};

const INTEGER_VARIABLES = new Set<VariableName>([
  'PORT',
  'OUTPOST_LEASE_SECONDS',
  'OUTPOST_QUEUE_EXPIRY_SECONDS',
  'OUTPOST_RESULT_RETENTION_DAYS',
  'OUTPOST_ARTIFACT_RETENTION_DAYS',
  'OUTPOST_AGENT_RETENTION_DAYS',
  'OUTPOST_PASSING_DETAIL_HOURS',
]);
/** Keys: their values are never echoed, only their length. */
const SECRET_VARIABLES = new Set<VariableName>([
  'OUTPOST_API_KEY',
  'OUTPOST_ENCRYPTION_KEY',
  // They may carry a password (smtp://user:pass@host).
  'OUTPOST_SMTP_URL',
  'OUTPOST_DATABASE_URL',
]);

function convert(name: VariableName, value: string): string | number {
  if (INTEGER_VARIABLES.has(name)) {
    const n = Number(value);
    return Number.isInteger(n) ? n : value;
  }
  if (
    name === 'OUTPOST_OUTBOUND_PRIVATE' ||
    name === 'OUTPOST_API_CREDENTIALS' ||
    name === 'OUTPOST_ARTIFACT_STORE' ||
    name === 'OUTPOST_DATABASE_NOTIFY' ||
    name === 'OUTPOST_DATABASE_PREPARED_STATEMENTS'
  )
    return value.trim().toLowerCase();
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
  const lines = [...bad].map(
    (name) => `- ${name} must be ${REQUIREMENTS[name]}; ${describe(name, given[name] ?? '')}`,
  );
  // A provider needs all of its variables: one of them alone would silently leave its channels failing.
  for (const group of PROVIDER_GROUPS) {
    const set = group.filter((name) => (env[name] ?? '') !== '');
    if (set.length > 0 && set.length < group.length) {
      const missing = group.filter((name) => !set.includes(name));
      lines.push(
        `- ${missing.join(' and ')} must be set with ${set.join(' and ')}; ${missing.length > 1 ? 'they are' : 'it is'} not set`,
      );
    }
  }
  // Replicas on one PostgreSQL store must seal secrets with one key: a key file each would lock each
  // replica out of what the others sealed.
  if ((env.OUTPOST_DATABASE_URL ?? '') !== '' && (env.OUTPOST_ENCRYPTION_KEY ?? '') === '') {
    lines.push(
      '- OUTPOST_ENCRYPTION_KEY must be set with OUTPOST_DATABASE_URL (every service process sharing the ' +
        'store seals secrets with it: openssl rand -base64 32); it is not set',
    );
  }
  if (lines.length > 0) {
    throw new OutpostError('OUTPOST_ERR_CONFIG', `invalid service configuration:\n${lines.join('\n')}`);
  }

  const parsed = candidate as ServiceEnv;
  const dataDir = resolve(parsed.OUTPOST_DATA_DIR);
  return Object.freeze({
    port: parsed.PORT,
    host: parsed.HOST,
    dataDir,
    databaseFile: parsed.OUTPOST_DATA_DIR === ':memory:' ? ':memory:' : resolve(dataDir, 'outpost.db'),
    databaseUrl: parsed.OUTPOST_DATABASE_URL,
    databaseNotify: parsed.OUTPOST_DATABASE_NOTIFY === 'on',
    databasePreparedStatements: parsed.OUTPOST_DATABASE_PREPARED_STATEMENTS === 'on',
    leaseMs: parsed.OUTPOST_LEASE_SECONDS * 1000,
    queueExpiryMs: parsed.OUTPOST_QUEUE_EXPIRY_SECONDS * 1000,
    resultRetentionDays: parsed.OUTPOST_RESULT_RETENTION_DAYS,
    artifactRetentionDays: parsed.OUTPOST_ARTIFACT_RETENTION_DAYS,
    agentRetentionDays: parsed.OUTPOST_AGENT_RETENTION_DAYS,
    passingDetailHours: parsed.OUTPOST_PASSING_DETAIL_HOURS,
    appUrl: parsed.OUTPOST_APP_URL ?? `http://localhost:${parsed.PORT}`,
    logLevel: parsed.LOG_LEVEL,
    accountId: parsed.OUTPOST_ACCOUNT_ID,
    apiKey: parsed.OUTPOST_API_KEY,
    adminEmail: parsed.OUTPOST_ADMIN_EMAIL ?? 'admin@localhost',
    encryptionKey:
      parsed.OUTPOST_ENCRYPTION_KEY === undefined
        ? undefined
        : (parseSecretKey(parsed.OUTPOST_ENCRYPTION_KEY) ?? undefined),
    statusPageDomains: Object.freeze(
      parsed.OUTPOST_STATUS_PAGE_DOMAINS === undefined
        ? []
        : (parseDomainAllowList(parsed.OUTPOST_STATUS_PAGE_DOMAINS) ?? []),
    ),
    dnsServers:
      parsed.OUTPOST_DNS_SERVERS === undefined
        ? undefined
        : Object.freeze(parseDnsServers(parsed.OUTPOST_DNS_SERVERS) ?? []),
    outboundAllow: Object.freeze(
      (parsed.OUTPOST_OUTBOUND_ALLOW ?? '')
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ''),
    ),
    outboundPrivate: parsed.OUTPOST_OUTBOUND_PRIVATE,
    apiCredentials: parsed.OUTPOST_API_CREDENTIALS,
    artifactStore: parsed.OUTPOST_ARTIFACT_STORE ?? (parsed.OUTPOST_DATABASE_URL ? 'database' : 'files'),
  });
}
