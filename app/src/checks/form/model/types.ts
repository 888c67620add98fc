/**
 * The model of the check form: which fields each check type has, the body of a new check, how a stored
 * check is split into what the form shows, what the "Advanced (JSON)" section shows and what is sent back
 * unchanged, how the body is put together again, and where an API error is shown. No rendering here.
 *
 * The enumerations come from the very module the service validates with (src/protocol/enums.ts: constants
 * only), so the form offers exactly the values the API accepts.
 */
import {
  API_ASSERTION_SOURCES,
  DNS_ASSERTION_SOURCES,
  GRPC_ASSERTION_SOURCES,
  ICMP_ASSERTION_SOURCES,
  ICMP_FREQUENCIES,
  TCP_ASSERTION_SOURCES,
  URL_ASSERTION_SOURCES,
  SSL_ASSERTION_SOURCES,
  TRACEROUTE_ASSERTION_SOURCES,
} from '../../../../../src/protocol/enums.js';
import type { CheckType } from '../../../api/schemas.js';

/** The check types that can be created, in the order the type picker shows them. */
export const CREATABLE_TYPES = [
  'API',
  'URL',
  'TCP',
  'DNS',
  'GRPC',
  'ICMP',
  'SSL',
  'TRACEROUTE',
  'BROWSER',
  'MULTI_STEP',
  'PLAYWRIGHT',
  'AGENTIC',
  'HEARTBEAT',
] as const satisfies readonly CheckType[];
/** A check type that has a create route (`POST /v1/checks/{path}`). */
export type CreatableType = (typeof CREATABLE_TYPES)[number];

/** What the type picker and the page title say about each type. */
export const TYPE_INFO: Record<
  CreatableType,
  {
    /** As a heading of its own: `API check`, `Browser check`. */
    label: string;
    /** Within a sentence or title: `API check`, `browser check`. */
    noun: string;
    /** Last segment of `POST /v1/checks/{path}`. */
    path: string;
    summary: string;
  }
> = {
  API: {
    label: 'API check',
    noun: 'API check',
    path: 'api',
    summary: 'Any HTTP request, with headers, a body, scripts and assertions on the answer.',
  },
  URL: {
    label: 'URL monitor',
    noun: 'URL monitor',
    path: 'url',
    summary: 'A plain GET of one page: is it up, how fast, what status.',
  },
  TCP: {
    label: 'TCP monitor',
    noun: 'TCP monitor',
    path: 'tcp',
    summary: 'Opens a TCP connection, optionally sends data and reads the reply.',
  },
  DNS: {
    label: 'DNS monitor',
    noun: 'DNS monitor',
    path: 'dns',
    summary: 'Sends one query to a name server and checks its answer.',
  },
  GRPC: {
    label: 'gRPC monitor',
    noun: 'gRPC monitor',
    path: 'grpc',
    summary: 'Calls a gRPC method with a JSON message, or asks the standard health check.',
  },
  ICMP: {
    label: 'ICMP monitor',
    noun: 'ICMP monitor',
    path: 'icmp',
    summary: 'Pings a host and measures packet loss and latency.',
  },
  SSL: {
    label: 'SSL monitor',
    noun: 'SSL monitor',
    path: 'ssl',
    summary: 'One TLS handshake: the certificate chain, days until expiry, the name, protocol and cipher.',
  },
  TRACEROUTE: {
    label: 'Traceroute monitor',
    noun: 'traceroute monitor',
    path: 'traceroute',
    summary: 'The route to a host hop by hop: each hop’s address, loss and round-trip time.',
  },
  BROWSER: {
    label: 'Browser check',
    noun: 'browser check',
    path: 'browser',
    summary: 'A Playwright script driving Chromium through your pages.',
  },
  MULTI_STEP: {
    label: 'Multi-step check',
    noun: 'multi-step check',
    path: 'multistep',
    summary: 'A Playwright spec chaining API requests in timed steps.',
  },
  PLAYWRIGHT: {
    label: 'Playwright check suite',
    noun: 'Playwright check suite',
    path: 'playwright',
    summary: 'A whole Playwright project (config, specs, helpers) run with playwright test.',
  },
  AGENTIC: {
    label: 'Agentic check',
    noun: 'agentic check',
    path: 'agentic',
    summary:
      'A goal in words: the agent writes a Playwright script once, replays it, and repairs it when it breaks.',
  },
  HEARTBEAT: {
    label: 'Heartbeat monitor',
    noun: 'heartbeat monitor',
    path: 'heartbeat',
    summary: 'Your cron job or service pings a URL; an alert when a ping is late.',
  },
};

/** The type a `?type=` query names (`API`, `api`, `multistep`), or null for none or an unknown one. */
export function typeFromQuery(value: string | undefined): CreatableType | null {
  if (!value) return null;
  const upper = value.toUpperCase().replace(/-/g, '_');
  if ((CREATABLE_TYPES as readonly string[]).includes(upper)) return upper as CreatableType;
  const byPath = CREATABLE_TYPES.find((t) => TYPE_INFO[t].path === value.toLowerCase());
  return byPath ?? null;
}

/** Minutes between runs every type but ICMP, TCP and API accepts (docs/checks.md, "Frequency"). */
const MINUTE_FREQUENCIES: readonly number[] = ICMP_FREQUENCIES.filter((f) => f !== 0);

/** The seconds of the sub-minute schedule (`frequency: 0`, `frequencyOffset` 10, 20 or 30). */
export const SUB_MINUTE_OFFSETS = [10, 20, 30] as const;

/** Minutes between runs of an AGENTIC check: 5 minutes at the least (docs/api.md, "Agentic checks"). */
const AGENTIC_FREQUENCIES: readonly number[] = MINUTE_FREQUENCIES.filter((f) => f >= 5);

/** Minutes between runs the type accepts; 0 is the sub-minute schedule (ICMP, TCP, API only). */
export function frequenciesOf(type: CheckType): readonly number[] {
  if (type === 'AGENTIC') return AGENTIC_FREQUENCIES;
  return type === 'ICMP' || type === 'TCP' || type === 'API' || type === 'TRACEROUTE'
    ? ICMP_FREQUENCIES
    : MINUTE_FREQUENCIES;
}

/** `Every 10 seconds`, `Every minute`, `Every 5 minutes`, `Every hour`, `Every 12 hours`. */
export function frequencyLabel(minutes: number, offsetSeconds?: number | null): string {
  if (minutes === 0) return `Every ${offsetSeconds ?? 10} seconds`;
  if (minutes === 1) return 'Every minute';
  if (minutes < 60 || minutes % 60 !== 0) return `Every ${minutes} minutes`;
  if (minutes === 60) return 'Every hour';
  return `Every ${minutes / 60} hours`;
}

/**
 * Whether `offset` (a `frequencyOffset` of a frequency other than 0) is allowed with `frequency` minutes:
 * 1 to `frequency × 10` up to 60 minutes, 1 to `ceil(frequency / 60)` above (docs/api.md, "frequencyOffset").
 */
export function offsetFits(frequency: number, offset: number): boolean {
  const max = frequency <= 60 ? Math.floor(frequency * 10) : Math.ceil(frequency / 60);
  return offset >= 1 && offset <= max;
}

/** Assertion sources of each type (docs/checks.md, table at the top); none for script and heartbeat checks. */
export function assertionSourcesOf(type: CheckType): readonly string[] {
  switch (type) {
    case 'API':
      return API_ASSERTION_SOURCES;
    case 'URL':
      return URL_ASSERTION_SOURCES;
    case 'TCP':
      return TCP_ASSERTION_SOURCES;
    case 'DNS':
      return DNS_ASSERTION_SOURCES;
    case 'GRPC':
      return GRPC_ASSERTION_SOURCES;
    case 'ICMP':
      return ICMP_ASSERTION_SOURCES;
    case 'SSL':
      return SSL_ASSERTION_SOURCES;
    case 'TRACEROUTE':
      return TRACEROUTE_ASSERTION_SOURCES;
    default:
      return [];
  }
}

/** The types with `degradedResponseTime` / `maxResponseTime`, and their defaults and most, ms (docs/checks.md). */
export const RESPONSE_TIME_DEFAULTS: Partial<
  Record<CheckType, { degraded: number; max: number; limit: number }>
> = {
  ICMP: { degraded: 10_000, max: 20_000, limit: 300_000 },
  DNS: { degraded: 500, max: 1000, limit: 300_000 },
  TCP: { degraded: 4000, max: 5000, limit: 300_000 },
  URL: { degraded: 3000, max: 5000, limit: 300_000 },
  GRPC: { degraded: 3000, max: 5000, limit: 300_000 },
  API: { degraded: 10_000, max: 20_000, limit: 30_000 },
  SSL: { degraded: 3000, max: 10_000, limit: 30_000 },
  TRACEROUTE: { degraded: 3000, max: 5000, limit: 30_000 },
};

/** Script checks: a script in a runtime instead of a `request`. */
export function isScriptType(type: CheckType): boolean {
  return type === 'BROWSER' || type === 'MULTI_STEP' || type === 'PLAYWRIGHT';
}

/** Longest run of a script check, seconds, and the default of `timeoutSeconds`. */
export function timeoutLimitOf(type: CheckType): number {
  if (type === 'AGENTIC') return 600;
  return type === 'PLAYWRIGHT' ? 1800 : 240;
}
