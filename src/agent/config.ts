import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { type Static, Type } from '@sinclair/typebox';
import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  type CheckType,
  jobClassOf,
  type Location,
  LOCATIONS,
  MAX_CLAIM_WAIT_SECONDS,
} from '../protocol/index.js';
import { literals } from '../common/literals.js';
import { secretVariable } from '../common/secret-file.js';
import { OutpostError } from '../common/errors.js';
import { LOG_LEVELS } from '../common/logger.js';
import { REDACTED } from '../common/redaction.js';

const HTTP_URL_FORMAT = 'outpost-http-url';
if (!FormatRegistry.Has(HTTP_URL_FORMAT)) {
  FormatRegistry.Set(HTTP_URL_FORMAT, (value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
    } catch {
      return false;
    }
  });
}

const HttpUrl = Type.String({ format: HTTP_URL_FORMAT });
const Integer = (minimum: number, maximum: number) => Type.Integer({ minimum, maximum });

/** Agent profiles: `full` claims every job class, `uptime` only the uptime class (ICMP, DNS, TCP, URL, SSL, TRACEROUTE and gRPC). */
export const AGENT_PROFILES = ['full', 'uptime'] as const;
/** `AGENT_PROFILE`: which job classes the agent claims. */
export type AgentProfile = (typeof AGENT_PROFILES)[number];

/** True when an agent of `profile` runs (loads, advertises and claims) checks of `checkType`. */
export function profileRuns(profile: AgentProfile, checkType: CheckType): boolean {
  return profile === 'full' || jobClassOf(checkType) === 'uptime';
}

/**
 * The one schema of the agent's environment, after the strings were converted
 * (numbers parsed, enumerations upper- or lower-cased, empty values dropped).
 */
/** A comma-separated list of data-center location names (LOCATIONS), spaces allowed around commas. */
const LOCATION_LIST_PATTERN = `^\\s*(${LOCATIONS.join('|')})(\\s*,\\s*(${LOCATIONS.join('|')}))*\\s*$`;

/** One DNS label (RFC 1123): letters, digits and hyphens, 1–63, no hyphen at either end. */
const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** An address to listen on (AGENT_HEALTH_HOST): an IP address, or a host name of RFC 1123 labels (`localhost`). */
const HEALTH_HOST_FORMAT = 'outpost-agent-health-host';
if (!FormatRegistry.Has(HEALTH_HOST_FORMAT)) {
  FormatRegistry.Set(HEALTH_HOST_FORMAT, (value) => {
    const host = value.trim().replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) !== 0) return true;
    const labels = host.toLowerCase().replace(/\.$/, '').split('.');
    return host.length <= 253 && labels.every((label) => HOST_LABEL.test(label));
  });
}

const AgentEnvSchema = Type.Object({
  API_KEY: Type.String({ minLength: 1, pattern: '^[\\x21-\\x7e]+$' }),
  SERVICE_URL: HttpUrl,
  JOB_CONCURRENCY: Integer(1, 1000),
  LOG_LEVEL: literals(Object.keys(LOG_LEVELS) as (keyof typeof LOG_LEVELS)[]),
  AGENT_HEALTH_PORT: Integer(0, 65_535),
  AGENT_HEALTH_HOST: Type.String({ format: HEALTH_HOST_FORMAT }),
  EXTERNAL_OBSERVABILITY: literals(['on', 'off'] as const),
  HTTPS_PROXY: Type.Optional(HttpUrl),
  HTTP_PROXY: Type.Optional(HttpUrl),
  NO_PROXY: Type.Optional(Type.String()),
  AGENT_PROFILE: literals(AGENT_PROFILES),
  AGENT_SHUTDOWN_GRACE_SECONDS: Integer(0, 3600),
  AGENT_CLAIM_WAIT_SECONDS: Integer(0, MAX_CLAIM_WAIT_SECONDS),
  USE_OS_DNS_RESOLVER: literals(['true', 'false'] as const),
  NETWORK_TRACES: literals(['on', 'off'] as const),
  BROWSER_CONCURRENCY: Integer(1, 64),
  BROWSER_MEMORY_PER_CHECK_MIB: Integer(64, 65_536),
  CHROMIUM_PATH: Type.String({ minLength: 1, pattern: '^/' }),
  AGENT_LOCATIONS: Type.Optional(Type.String({ pattern: LOCATION_LIST_PATTERN })),
});
type AgentEnv = Static<typeof AgentEnvSchema>;
type VariableName = keyof AgentEnv;

/** What each variable must be, for error messages; keyed like the schema. */
const REQUIREMENTS: Record<VariableName, string> = {
  API_KEY: 'a non-empty key of printable characters without spaces (required)',
  SERVICE_URL: 'an http:// or https:// URL of the Outpost service (required)',
  JOB_CONCURRENCY: 'an integer from 1 to 1000 (default 10)',
  LOG_LEVEL: 'one of DEBUG, LOG, INFO, WARN, ERROR (default INFO)',
  AGENT_HEALTH_PORT: 'an integer port from 0 to 65535, 0 for an ephemeral port (default 8081)',
  AGENT_HEALTH_HOST:
    'an IP address or a host name the health server listens on (default 127.0.0.1; 0.0.0.0 for Kubernetes probes)',
  EXTERNAL_OBSERVABILITY: 'on or off (default on)',
  HTTPS_PROXY: 'an http:// or https:// proxy URL',
  HTTP_PROXY: 'an http:// or https:// proxy URL',
  NO_PROXY: 'a comma-separated list of hosts',
  AGENT_PROFILE: 'full or uptime (default full)',
  AGENT_SHUTDOWN_GRACE_SECONDS: 'an integer number of seconds from 0 to 3600 (default 120)',
  AGENT_CLAIM_WAIT_SECONDS: `an integer number of seconds from 0 to ${MAX_CLAIM_WAIT_SECONDS} (default 20)`,
  USE_OS_DNS_RESOLVER: 'true or false (default false)',
  NETWORK_TRACES:
    'on or off (default on): route trace and packet capture on network failures of API and URL checks',
  BROWSER_CONCURRENCY: 'an integer from 1 to 64 (default: the number of cores)',
  BROWSER_MEMORY_PER_CHECK_MIB: 'an integer number of MiB from 64 to 65536 (default 300)',
  CHROMIUM_PATH: 'an absolute path of a Chromium executable (default /usr/bin/chromium)',
  AGENT_LOCATIONS:
    'a comma-separated list of data-center location names (us-east-1, eu-west-1, …) an agent with an account API key serves (default: every one; ignored with a private-location key)',
};

const DEFAULTS: Partial<Record<VariableName, string>> = {
  JOB_CONCURRENCY: '10',
  LOG_LEVEL: 'INFO',
  AGENT_HEALTH_PORT: '8081',
  AGENT_HEALTH_HOST: '127.0.0.1',
  EXTERNAL_OBSERVABILITY: 'on',
  AGENT_PROFILE: 'full',
  AGENT_SHUTDOWN_GRACE_SECONDS: '120',
  AGENT_CLAIM_WAIT_SECONDS: String(MAX_CLAIM_WAIT_SECONDS),
  USE_OS_DNS_RESOLVER: 'false',
  NETWORK_TRACES: 'on',
  BROWSER_CONCURRENCY: String(availableParallelism()),
  BROWSER_MEMORY_PER_CHECK_MIB: '300',
  CHROMIUM_PATH: '/usr/bin/chromium',
};

const INTEGER_VARIABLES = new Set<VariableName>([
  'JOB_CONCURRENCY',
  'AGENT_HEALTH_PORT',
  'AGENT_SHUTDOWN_GRACE_SECONDS',
  'AGENT_CLAIM_WAIT_SECONDS',
  'BROWSER_CONCURRENCY',
  'BROWSER_MEMORY_PER_CHECK_MIB',
]);
const UPPER_CASE_VARIABLES = new Set<VariableName>(['LOG_LEVEL']);
const LOWER_CASE_VARIABLES = new Set<VariableName>([
  'EXTERNAL_OBSERVABILITY',
  'AGENT_PROFILE',
  'USE_OS_DNS_RESOLVER',
  'NETWORK_TRACES',
]);
/** Proxy variables are also read in their lower-case spelling, as curl and undici do; upper case wins. */
const LOWER_CASE_ALIASES = new Set<VariableName>(['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY']);

/** The agent's configuration: parsed once from the environment, validated, frozen. */
export type AgentConfig = Readonly<{
  /** `API_KEY`: private-location key or account API key, sent as `Authorization: Bearer`. */
  apiKey: string;
  /**
   * `AGENT_LOCATIONS`: the data-center locations an account-key agent serves; null: every one. A
   * private-location key serves its location whatever this says (docs/protocol.md, "Run locations").
   */
  locations: readonly Location[] | null;
  /** `SERVICE_URL` without trailing slashes, e.g. `https://outpost.example.com`. */
  serviceUrl: string;
  /** `JOB_CONCURRENCY`: jobs run at once per job class (uptime and main), 1–1000, default 10. */
  jobConcurrency: number;
  /** `LOG_LEVEL`, default INFO. */
  logLevel: keyof typeof LOG_LEVELS;
  /** `AGENT_HEALTH_PORT`, default 8081; 0 binds an ephemeral port. */
  healthPort: number;
  /**
   * `AGENT_HEALTH_HOST`: the address the health server listens on, default `127.0.0.1` (loopback, like the
   * service's `HOST`). The images and the Kubernetes manifest set `0.0.0.0`, for the kubelet's probes
   * (docs/configuration.md).
   */
  healthHost: string;
  /** `EXTERNAL_OBSERVABILITY` is not `off`: error reports go to `POST /v1/agent/events`. */
  externalObservability: boolean;
  /** `HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY` for the agent's traffic to the service; null when unset. */
  httpsProxy: string | null;
  httpProxy: string | null;
  noProxy: string | null;
  /** `AGENT_PROFILE`: `full` (default) or `uptime` (claims only ICMP, DNS, TCP, URL, gRPC). */
  profile: AgentProfile;
  /** `AGENT_SHUTDOWN_GRACE_SECONDS` in milliseconds: how long running jobs may finish on stop, default 120 000. */
  shutdownGraceMs: number;
  /** `AGENT_CLAIM_WAIT_SECONDS`: how long one claim long-polls, 0–20 s, default 20. */
  claimWaitSeconds: number;
  /** `USE_OS_DNS_RESOLVER=true`: TCP and URL checks resolve with getaddrinfo (/etc/hosts, search domains). */
  useOsDnsResolver: boolean;
  /**
   * `NETWORK_TRACES` is not `off`: a route trace and a packet capture are recorded and uploaded
   * when an API or URL run fails on a network error (src/agent/network-diagnostics.ts).
   */
  networkTraces: boolean;
  /**
   * `BROWSER_CONCURRENCY`: browser and multi-step checks run at once, 1–64, default the number of
   * cores; within `jobConcurrency` main slots (docs/configuration.md, "`outpost agent`").
   */
  browserConcurrency: number;
  /**
   * `BROWSER_MEMORY_PER_CHECK_MIB`: free memory (MemAvailable, or the cgroup's limit less its use)
   * a browser check needs before it is admitted, MiB, default 300.
   */
  browserMemoryPerCheckMiB: number;
  /** `CHROMIUM_PATH`: the Chromium runtime 2026.04's Playwright drives, default `/usr/bin/chromium`. */
  chromiumPath: string;
}>;

/** `env` with `API_KEY` read from the file `API_KEY_FILE` names, when that is set (see secretVariable). */
function withKeyFromFile(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const file = env.API_KEY_FILE?.trim();
  if (file === undefined || file === '') return env;
  return { ...env, API_KEY: secretVariable(env, 'API_KEY') ?? '' };
}

function rawValue(env: NodeJS.ProcessEnv, name: VariableName): string | undefined {
  const value = env[name] ?? (LOWER_CASE_ALIASES.has(name) ? env[name.toLowerCase()] : undefined);
  const trimmed = value?.trim();
  // An empty variable (`JOB_CONCURRENCY=` in a compose file) means "unset".
  return trimmed === '' ? undefined : trimmed;
}

function convert(name: VariableName, value: string): string | number {
  if (INTEGER_VARIABLES.has(name)) return /^[0-9]{1,10}$/.test(value) ? Number(value) : value;
  if (UPPER_CASE_VARIABLES.has(name)) return value.toUpperCase();
  if (LOWER_CASE_VARIABLES.has(name)) return value.toLowerCase();
  return value;
}

function describe(name: VariableName, value: string | undefined): string {
  if (value === undefined) return 'it is not set';
  // Never echo the key, not even in part: its length is enough to spot a truncation.
  if (name === 'API_KEY') return `it was a value of ${value.length} characters (not shown)`;
  return `it was ${JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value)}`;
}

/**
 * Parses and validates the agent's environment once.
 *
 * Empty variables count as unset; `LOG_LEVEL`, `EXTERNAL_OBSERVABILITY`, `AGENT_PROFILE`
 * and `USE_OS_DNS_RESOLVER` are case-insensitive; proxy variables are also read in lower case.
 *
 * @returns the frozen configuration.
 * @throws OutpostError `OUTPOST_ERR_CONFIG` naming every bad variable, what it must be
 *   and what it was (the value of `API_KEY` is never included).
 */
export function parseAgentConfig(environment: NodeJS.ProcessEnv): AgentConfig {
  const env = withKeyFromFile(environment);
  const given: Partial<Record<VariableName, string>> = {};
  const candidate: Record<string, string | number> = {};
  for (const name of Object.keys(REQUIREMENTS) as VariableName[]) {
    const value = rawValue(env, name);
    if (value !== undefined) given[name] = value;
    const effective = value ?? DEFAULTS[name];
    if (effective !== undefined) candidate[name] = convert(name, effective);
  }

  const bad = new Set<VariableName>();
  for (const error of Value.Errors(AgentEnvSchema, candidate)) {
    const name = error.path.split('/')[1] as VariableName | undefined;
    if (name !== undefined && name in REQUIREMENTS) bad.add(name);
  }
  if (bad.size > 0) {
    const lines = [...bad].map(
      (name) => `- ${name} must be ${REQUIREMENTS[name]}; ${describe(name, given[name])}`,
    );
    throw new OutpostError('OUTPOST_ERR_CONFIG', `invalid agent configuration:\n${lines.join('\n')}`);
  }

  const parsed = candidate as AgentEnv;
  return Object.freeze({
    apiKey: parsed.API_KEY,
    serviceUrl: parsed.SERVICE_URL.replace(/\/+$/, ''),
    jobConcurrency: parsed.JOB_CONCURRENCY,
    logLevel: parsed.LOG_LEVEL,
    healthPort: parsed.AGENT_HEALTH_PORT,
    healthHost: parsed.AGENT_HEALTH_HOST.trim().replace(/^\[(.*)\]$/, '$1'),
    externalObservability: parsed.EXTERNAL_OBSERVABILITY !== 'off',
    httpsProxy: parsed.HTTPS_PROXY ?? null,
    httpProxy: parsed.HTTP_PROXY ?? null,
    noProxy: parsed.NO_PROXY ?? null,
    profile: parsed.AGENT_PROFILE,
    shutdownGraceMs: parsed.AGENT_SHUTDOWN_GRACE_SECONDS * 1000,
    claimWaitSeconds: parsed.AGENT_CLAIM_WAIT_SECONDS,
    useOsDnsResolver: parsed.USE_OS_DNS_RESOLVER === 'true',
    networkTraces: parsed.NETWORK_TRACES !== 'off',
    browserConcurrency: parsed.BROWSER_CONCURRENCY,
    browserMemoryPerCheckMiB: parsed.BROWSER_MEMORY_PER_CHECK_MIB,
    chromiumPath: parsed.CHROMIUM_PATH,
    locations: parsed.AGENT_LOCATIONS
      ? ([...new Set(parsed.AGENT_LOCATIONS.split(',').map((l) => l.trim()))] as Location[])
      : null,
  });
}

function redactUrl(value: string | null): string | null {
  if (value === null) return null;
  try {
    const url = new URL(value);
    if (url.password === '') return value;
    url.password = REDACTED;
    return url.toString();
  } catch {
    return REDACTED;
  }
}

/**
 * The configuration as it may be logged: `apiKey` replaced by {@link REDACTED}, proxy
 * passwords replaced by it, the service URL's credentials (if any) too.
 */
export function redactAgentConfig(config: AgentConfig): Record<string, unknown> {
  return {
    ...config,
    apiKey: REDACTED,
    serviceUrl: redactUrl(config.serviceUrl),
    httpsProxy: redactUrl(config.httpsProxy),
    httpProxy: redactUrl(config.httpProxy),
  };
}
