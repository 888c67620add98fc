/**
 * The body of a new check of each type: the service's defaults made visible, with starter scripts.
 */
import type { Json } from './paths.js';
import { RESPONSE_TIME_DEFAULTS } from './types.js';
import type { CreatableType } from './types.js';
import { timeoutLimitOf } from './types.js';

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

/**
 * Minutes between runs of a new uptime monitor (URL, TCP, ICMP, DNS): every minute, the shortest schedule
 * all four accept (docs/checks.md, "Frequency"), so an outage is seen within a minute. Other types start at
 * the service's default, every 10 minutes.
 */
export const UPTIME_FREQUENCY = 1;

/** The fields every scheduled check starts with. */
function commonFields(): Json {
  return {
    name: '',
    description: null,
    activated: true,
    muted: false,
    shouldFail: false,
    frequency: 10,
    frequencyOffset: null,
    // Where agents are: the form fills these in from the locations it loads (model/locations.ts).
    locations: [],
    privateLocations: [],
    runParallel: false,
    tags: [],
    groupId: null,
    retryStrategy: null,
  };
}

/** An API check's own fields: no scripts, no variables, a GET whose status must be under 400. */
function apiFields(): Json {
  return {
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
}

/** A browser, multi-step or Playwright check's own fields: its starter script (or files) and time limit. */
function scriptFields(type: 'BROWSER' | 'MULTI_STEP' | 'PLAYWRIGHT'): Json {
  const script: Json =
    type === 'PLAYWRIGHT'
      ? {
          script: null,
          scriptPath: 'tests/home.spec.ts',
          dependencies: [
            { path: 'package.json', content: '{\n  "name": "checks",\n  "private": true\n}\n' },
            { path: 'playwright.config.ts', content: STARTER_PLAYWRIGHT_CONFIG },
            { path: 'tests/home.spec.ts', content: STARTER_BROWSER_SCRIPT },
          ],
        }
      : { script: type === 'BROWSER' ? STARTER_BROWSER_SCRIPT : STARTER_MULTI_STEP_SCRIPT };
  return {
    ...script,
    runtimeId: null,
    environmentVariables: [],
    sslCheckDomain: null,
    timeoutSeconds: timeoutLimitOf(type),
  };
}

/** The fields of a new check of `type`: the service's defaults, made visible (docs/checks.md). */
export function newCheckBody(type: CreatableType): Json {
  if (type === 'HEARTBEAT') {
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
  const common = commonFields();
  const times = RESPONSE_TIME_DEFAULTS[type];
  const responseTimes = times ? { degradedResponseTime: times.degraded, maxResponseTime: times.max } : {};
  // The uptime monitors' own schedule and thresholds, over the common fields.
  const uptime = { ...responseTimes, frequency: UPTIME_FREQUENCY };
  switch (type) {
    case 'API':
      return {
        ...common,
        ...apiFields(),
      };
    case 'URL':
      return {
        ...common,
        ...uptime,
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
        ...uptime,
        request: { hostname: '', port: 443, data: null, ipFamily: 'IPv4', assertions: [] },
      };
    case 'GRPC':
      return {
        ...common,
        ...uptime,
        request: {
          url: '',
          port: 443,
          ipFamily: 'IPv4',
          skipSSL: false,
          timeout: 10,
          grpcConfig: {
            mode: 'HEALTH',
            tls: true,
            metadata: [],
            serviceDefinition: '',
            method: '',
            protoContent: '',
            message: '',
            service: '',
          },
          assertions: [],
        },
      };
    case 'DNS':
      return {
        ...common,
        ...uptime,
        request: { query: '', recordType: 'A', nameServer: null, port: 53, protocol: 'UDP', assertions: [] },
      };
    case 'SSL':
      return {
        ...common,
        ...uptime,
        request: {
          sslConfig: {
            hostname: '',
            port: 443,
            serverName: null,
            ipFamily: 'IPv4',
            skipChainValidation: false,
            handshakeTimeoutMs: 10_000,
            alertDaysBeforeExpiry: 20,
          },
          assertions: [],
        },
      };
    case 'TRACEROUTE':
      return {
        ...common,
        ...uptime,
        request: {
          url: '',
          protocol: 'ICMP',
          port: null,
          ipFamily: 'IPv4',
          maxHops: 30,
          maxUnknownHops: 15,
          ptrLookup: true,
          timeout: 10,
          assertions: [],
        },
      };
    case 'ICMP':
      return {
        ...common,
        ...uptime,
        degradedPacketLossThreshold: 10,
        maxPacketLossThreshold: 20,
        request: { hostname: '', ipFamily: 'IPv4', pingCount: 10, assertions: [] },
        // Required on create by the compatible API, used by no ping (docs/checks.md, "ICMP").
        heartbeat: {},
        script: '',
      };
    case 'BROWSER':
    case 'MULTI_STEP':
    case 'PLAYWRIGHT':
      return { ...common, ...scriptFields(type) };
    case 'AGENTIC':
      // The service's defaults (docs/api.md, "Agentic checks"): every 30 minutes, repairs applied.
      return {
        ...common,
        frequency: 30,
        prompt: '',
        agentRuntime: { skills: [] },
        repairMode: 'AUTO',
        runtimeId: null,
        environmentVariables: [],
        timeoutSeconds: timeoutLimitOf(type),
      };
  }
}
