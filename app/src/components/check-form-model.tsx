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
  ICMP_ASSERTION_SOURCES,
  ICMP_FREQUENCIES,
  TCP_ASSERTION_SOURCES,
  URL_ASSERTION_SOURCES,
} from '../../../src/protocol/enums.js';
import type { Check, CheckType } from '../types.js';

/** The check types that can be created, in the order the type picker shows them. */
export const CREATABLE_TYPES = [
  'API',
  'URL',
  'TCP',
  'DNS',
  'ICMP',
  'BROWSER',
  'MULTI_STEP',
  'PLAYWRIGHT',
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
  ICMP: {
    label: 'ICMP monitor',
    noun: 'ICMP monitor',
    path: 'icmp',
    summary: 'Pings a host and measures packet loss and latency.',
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

/** Minutes between runs the type accepts; 0 is the sub-minute schedule (ICMP, TCP, API only). */
export function frequenciesOf(type: CheckType): readonly number[] {
  return type === 'ICMP' || type === 'TCP' || type === 'API' ? ICMP_FREQUENCIES : MINUTE_FREQUENCIES;
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
    case 'ICMP':
      return ICMP_ASSERTION_SOURCES;
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
  API: { degraded: 10_000, max: 20_000, limit: 30_000 },
};

/** Script checks: a script in a runtime instead of a `request`. */
export function isScriptType(type: CheckType): boolean {
  return type === 'BROWSER' || type === 'MULTI_STEP' || type === 'PLAYWRIGHT';
}

/** Longest run of a script check, seconds, and the default of `timeoutSeconds`. */
export function timeoutLimitOf(type: CheckType): number {
  return type === 'PLAYWRIGHT' ? 1800 : 240;
}

/** Fields the form has controls for on every type that runs on a schedule. */
const SCHEDULED_FIELDS = [
  'name',
  'description',
  'activated',
  'muted',
  'shouldFail',
  'frequency',
  'frequencyOffset',
  'locations',
  'privateLocations',
  'runParallel',
  'tags',
  'groupId',
  'retryStrategy',
  'alertChannelSubscriptions',
];

/** Top-level fields the form shows with controls, per type; the rest of a check goes to "Advanced (JSON)". */
export function controlledFields(type: CheckType): readonly string[] {
  const responseTimes = ['degradedResponseTime', 'maxResponseTime'];
  switch (type) {
    case 'ICMP':
      return [
        ...SCHEDULED_FIELDS,
        ...responseTimes,
        'request',
        'degradedPacketLossThreshold',
        'maxPacketLossThreshold',
      ];
    case 'DNS':
    case 'TCP':
    case 'URL':
      return [...SCHEDULED_FIELDS, ...responseTimes, 'request'];
    case 'API':
      return [
        ...SCHEDULED_FIELDS,
        ...responseTimes,
        'request',
        'runtimeId',
        'environmentVariables',
        'localSetupScript',
        'localTearDownScript',
        'setupSnippetId',
        'tearDownSnippetId',
      ];
    case 'BROWSER':
    case 'MULTI_STEP':
      return [
        ...SCHEDULED_FIELDS,
        'script',
        'runtimeId',
        'environmentVariables',
        'sslCheckDomain',
        'timeoutSeconds',
      ];
    case 'PLAYWRIGHT':
      return [
        ...SCHEDULED_FIELDS,
        'script',
        'scriptPath',
        'dependencies',
        'runtimeId',
        'environmentVariables',
        'sslCheckDomain',
        'timeoutSeconds',
      ];
    case 'HEARTBEAT':
      return [
        'name',
        'description',
        'activated',
        'muted',
        'tags',
        'groupId',
        'alertChannelSubscriptions',
        'heartbeat',
      ];
    default:
      return ['name', 'description', 'activated', 'muted', 'tags', 'groupId'];
  }
}

/**
 * Top-level fields neither shown nor offered in "Advanced (JSON)", sent back as they are: `heartbeat` and
 * `script`, which `PUT /v1/checks/{id}` requires for every type although only heartbeat and script checks use
 * them (docs/api.md, "Checks"), and, on a heartbeat monitor, the scheduling fields it stores but never uses.
 */
function hiddenFields(type: CheckType): readonly string[] {
  if (type === 'HEARTBEAT') {
    return [
      'script',
      'frequency',
      'frequencyOffset',
      'locations',
      'privateLocations',
      'runParallel',
      'retryStrategy',
      'shouldFail',
      'doubleCheck',
      'degradedResponseTime',
      'maxResponseTime',
      'runtimeId',
    ];
  }
  return isScriptType(type) ? ['heartbeat'] : ['heartbeat', 'script'];
}

/** Fields of `request` the form shows, per type; the rest goes to "Advanced (JSON)" under `request`. */
export function controlledRequestFields(type: CheckType): readonly string[] {
  switch (type) {
    case 'API':
      return [
        'method',
        'url',
        'headers',
        'queryParameters',
        'body',
        'bodyType',
        'basicAuth',
        'followRedirects',
        'skipSSL',
        'ipFamily',
        'assertions',
      ];
    case 'URL':
      return ['url', 'followRedirects', 'skipSSL', 'ipFamily', 'assertions'];
    case 'TCP':
      return ['hostname', 'port', 'data', 'ipFamily', 'assertions'];
    case 'DNS':
      return ['query', 'recordType', 'nameServer', 'port', 'protocol', 'assertions'];
    case 'ICMP':
      return ['hostname', 'ipFamily', 'pingCount', 'assertions'];
    default:
      return [];
  }
}

/**
 * Fields `PUT /v1/checks/{id}` takes (the service's UpdateCheckBody, strict): a loaded check is reduced to
 * these, so the answer's read-only fields (`id`, `created_at`, `alertChannels`, `pingUrl`, …) are not sent.
 * A field left out keeps its stored value (the update merges), so nothing is lost by this list.
 */
const UPDATE_FIELDS = [
  'name',
  'activated',
  'muted',
  'doubleCheck',
  'shouldFail',
  'locations',
  'tags',
  'alertSettings',
  'useGlobalAlertSettings',
  'groupId',
  'groupOrder',
  'runtimeId',
  'alertChannelSubscriptions',
  'retryStrategy',
  'triggerIncident',
  'runParallel',
  'description',
  'frequencyOffset',
  'scriptPath',
  'sslCheckDomain',
  'environmentVariables',
  'setupSnippetId',
  'tearDownSnippetId',
  'localSetupScript',
  'localTearDownScript',
  'privateLocations',
  'frequency',
  'request',
  'heartbeat',
  'script',
  'dependencies',
  'degradedResponseTime',
  'maxResponseTime',
  'timeoutSeconds',
  'degradedPacketLossThreshold',
  'maxPacketLossThreshold',
];

/** A plain JSON object. */
export type Json = Record<string, unknown>;

/** True for a plain object (not null, not an array). */
export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const STARTER_BROWSER_SCRIPT = `import { test, expect } from '@playwright/test';

test('home page loads', async ({ page }) => {
  const response = await page.goto('https://example.com');
  expect(response?.status()).toBeLessThan(400);
  await expect(page).toHaveTitle(/Example/);
});
`;

const STARTER_MULTI_STEP_SCRIPT = `import { test, expect } from '@playwright/test';

test('API journey', async ({ request }) => {
  await test.step('list', async () => {
    const response = await request.get('https://example.com/');
    expect(response.ok()).toBeTruthy();
  });
});
`;

const STARTER_PLAYWRIGHT_CONFIG = `import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: './tests',
  projects: [{ name: 'chromium', use: { browserName: 'chromium' } }],
});
`;

/** The fields of a new check of `type`: the service's defaults, made visible (docs/checks.md). */
export function newCheckBody(type: CreatableType): Json {
  const common: Json = {
    name: '',
    description: null,
    activated: true,
    muted: false,
    shouldFail: false,
    frequency: 10,
    frequencyOffset: null,
    locations: ['us-east-1'],
    privateLocations: [],
    runParallel: false,
    tags: [],
    groupId: null,
    retryStrategy: null,
  };
  const times = RESPONSE_TIME_DEFAULTS[type];
  const responseTimes = times ? { degradedResponseTime: times.degraded, maxResponseTime: times.max } : {};
  switch (type) {
    case 'API':
      return {
        ...common,
        ...responseTimes,
        runtimeId: null,
        environmentVariables: [],
        localSetupScript: null,
        localTearDownScript: null,
        setupSnippetId: null,
        tearDownSnippetId: null,
        request: {
          method: 'GET',
          url: '',
          headers: [],
          queryParameters: [],
          body: '',
          bodyType: 'NONE',
          basicAuth: null,
          followRedirects: true,
          skipSSL: false,
          ipFamily: 'IPv4',
          assertions: [{ source: 'STATUS_CODE', property: '', comparison: 'LESS_THAN', target: '400' }],
        },
      };
    case 'URL':
      return {
        ...common,
        ...responseTimes,
        request: {
          url: '',
          followRedirects: true,
          skipSSL: false,
          ipFamily: 'IPv4',
          assertions: [{ source: 'STATUS_CODE', property: '', comparison: 'LESS_THAN', target: '400' }],
        },
      };
    case 'TCP':
      return {
        ...common,
        ...responseTimes,
        request: { hostname: '', port: 443, data: null, ipFamily: 'IPv4', assertions: [] },
      };
    case 'DNS':
      return {
        ...common,
        ...responseTimes,
        request: { query: '', recordType: 'A', nameServer: null, port: 53, protocol: 'UDP', assertions: [] },
      };
    case 'ICMP':
      return {
        ...common,
        ...responseTimes,
        degradedPacketLossThreshold: 10,
        maxPacketLossThreshold: 20,
        request: { hostname: '', ipFamily: 'IPv4', pingCount: 10, assertions: [] },
        // Required on create by the compatible API, used by no ping (docs/checks.md, "ICMP").
        heartbeat: {},
        script: '',
      };
    case 'BROWSER':
    case 'MULTI_STEP':
      return {
        ...common,
        script: type === 'BROWSER' ? STARTER_BROWSER_SCRIPT : STARTER_MULTI_STEP_SCRIPT,
        runtimeId: null,
        environmentVariables: [],
        sslCheckDomain: null,
        timeoutSeconds: timeoutLimitOf(type),
      };
    case 'PLAYWRIGHT':
      return {
        ...common,
        script: null,
        scriptPath: 'tests/home.spec.ts',
        dependencies: [
          { path: 'package.json', content: '{\n  "name": "checks",\n  "private": true\n}\n' },
          { path: 'playwright.config.ts', content: STARTER_PLAYWRIGHT_CONFIG },
          { path: 'tests/home.spec.ts', content: STARTER_BROWSER_SCRIPT },
        ],
        runtimeId: null,
        environmentVariables: [],
        sslCheckDomain: null,
        timeoutSeconds: timeoutLimitOf(type),
      };
    case 'HEARTBEAT':
      return {
        name: '',
        description: null,
        activated: true,
        muted: false,
        tags: [],
        groupId: null,
        heartbeat: { period: 1, periodUnit: 'hours', grace: 10, graceUnit: 'minutes' },
      };
  }
}

/** A check split three ways for the form (see {@link splitCheck}). */
export type SplitCheck = {
  /** What the controls show and change. */
  form: Json;
  /** What "Advanced (JSON)" shows: every other field of the check (and of its `request`). */
  advanced: Json;
  /** Sent back unchanged, never shown. */
  hidden: Json;
};

/**
 * Splits a check's fields (a new check's body, or a loaded check reduced to what an update takes) into the
 * form's, the advanced section's and the hidden ones. A heartbeat monitor's `pingToken` is dropped (the
 * service keeps its own and ignores one sent back).
 */
export function splitCheck(type: CheckType, fields: Json): SplitCheck {
  const controlled = new Set(controlledFields(type));
  const hiddenNames = new Set(hiddenFields(type));
  const requestControlled = new Set(controlledRequestFields(type));
  const form: Json = {};
  const advanced: Json = {};
  const hidden: Json = {};
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (name === 'request' && controlled.has('request') && isObject(value)) {
      const shown: Json = {};
      const rest: Json = {};
      const hiddenRequest: Json = {};
      for (const [key, inner] of Object.entries(value)) {
        if (requestControlled.has(key)) shown[key] = inner;
        // A URL monitor's method can only be GET: sent back as it is, not offered.
        else if (type === 'URL' && key === 'method') hiddenRequest[key] = inner;
        else rest[key] = inner;
      }
      form.request = shown;
      if (Object.keys(hiddenRequest).length > 0) hidden.request = hiddenRequest;
      if (Object.keys(rest).length > 0) advanced.request = rest;
    } else if (name === 'heartbeat' && type === 'HEARTBEAT' && isObject(value)) {
      const { pingToken: _token, ...heartbeat } = value;
      form.heartbeat = heartbeat;
    } else if (controlled.has(name)) form[name] = value;
    else if (hiddenNames.has(name)) hidden[name] = value;
    else advanced[name] = value;
  }
  return { form, advanced, hidden };
}

/**
 * The fields of a loaded check an update takes, plus what `PUT /v1/checks/{id}` requires of every type:
 * `heartbeat` (an object) and `script` (a string or null).
 */
export function editableFields(check: Check): Json {
  const fields: Json = {};
  for (const name of UPDATE_FIELDS) if (check[name] !== undefined) fields[name] = check[name];
  if (!isObject(fields.heartbeat)) fields.heartbeat = {};
  if (fields.script === undefined) fields.script = null;
  return fields;
}

/**
 * The body to send: the hidden fields, then the form's, then the advanced section's (merged into
 * `request` field by field, so a key there adds to the form's request instead of replacing it).
 */
export function assembleBody(split: SplitCheck): Json {
  const body: Json = { ...split.hidden, ...split.form, ...split.advanced };
  const requests = [split.hidden.request, split.form.request, split.advanced.request].filter(isObject);
  if (requests.length > 0) body.request = Object.assign({}, ...requests);
  return body;
}

/**
 * Reads the advanced section's text: an empty text is `{}`.
 * @throws Error with a message for a person when it is not JSON or not an object.
 */
export function parseAdvanced(text: string): Json {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`Not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(value)) throw new Error('Must be a JSON object ({ "field": value, … }).');
  return value;
}

/** The top-level field names (and `request.<name>`) the advanced text holds, for placing errors there. */
export function advancedPaths(text: string): string[] {
  try {
    const value = parseAdvanced(text);
    const paths = Object.keys(value);
    if (isObject(value.request)) for (const key of Object.keys(value.request)) paths.push(`request.${key}`);
    return paths;
  } catch {
    return [];
  }
}

/** A path of the form's data as segments: `request.headers[0].key` → `['request', 'headers', 0, 'key']`. */
export function pathSegments(path: string): (string | number)[] {
  const segments: (string | number)[] = [];
  for (const part of path.split('.')) {
    const match = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    if (!match) {
      segments.push(part);
      continue;
    }
    if (match[1]) segments.push(match[1]);
    for (const index of (match[2] ?? '').matchAll(/\[(\d+)\]/g)) segments.push(Number(index[1]));
  }
  return segments;
}

/** The value at `path` of `data`, or undefined. */
export function getIn(data: unknown, path: string): unknown {
  let current: unknown = data;
  for (const segment of pathSegments(path)) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

/**
 * A copy of `data` with `value` at `path` (objects and arrays along the way copied, missing ones created);
 * `undefined` removes the field.
 */
export function setIn<T>(data: T, path: string, value: unknown): T {
  const segments = pathSegments(path);
  const write = (node: unknown, index: number): unknown => {
    const segment = segments[index]!;
    const last = index === segments.length - 1;
    if (typeof segment === 'number') {
      const array = Array.isArray(node) ? [...node] : [];
      if (last) {
        if (value === undefined) array.splice(segment, 1);
        else array[segment] = value;
      } else array[segment] = write(array[segment], index + 1);
      return array;
    }
    const object: Json = isObject(node) ? { ...node } : {};
    if (last) {
      if (value === undefined) delete object[segment];
      else object[segment] = value;
    } else object[segment] = write(object[segment], index + 1);
    return object;
  };
  return write(data, 0) as T;
}

/**
 * Where an error about `field` (a dotted path from the API, `request.assertions[0].target`) is shown: the
 * control whose path is the field itself or the longest path it lies under (`request.headers[2].locked` →
 * `request.headers[2]`); null when no control shows it (then it goes to the top of the form). Between
 * controls of the same path the later wins: the advanced section comes last, and a field given there
 * overrides the control's value, so the value refused is the one typed there.
 * @param controls the paths of the controls on the form now, in the form's order, the advanced section's last.
 * @param aliases fields shown by another field's control (`frequencyOffset` → `frequency`).
 */
export function controlForField(
  field: string,
  controls: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): string | null {
  const target = aliases[field] ?? field;
  let best: string | null = null;
  for (const path of controls) {
    const under = target === path || target.startsWith(`${path}.`) || target.startsWith(`${path}[`);
    if (under && (best === null || path.length >= best.length)) best = path;
  }
  return best;
}

/** One error to show: where (a control's path, or null for the top of the form) and what. */
export type ShownError = { field: string | null; message: string };

/** A check as the create and update routes answer it, with a heartbeat monitor's `pingUrl`. */
export type SavedCheck = Check & { pingUrl?: string };
