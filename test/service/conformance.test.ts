import { randomUUID } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret, TOTP } from 'otpauth';
import { PROTOCOL_VERSION } from '../../src/protocol/index.js';
import { resourceOf } from '../../src/service/audit-log/resources.js';
import { Users } from '../../src/service/users/index.js';
import { SERVICE_ERROR_CODES } from '../../src/service/platform/http/error-codes.js';
import { startTestProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { createTestCa } from '../helpers/test-ca.js';
import { icmpBody, type TestService, testService } from '../helpers/service.js';

/**
 * Every route's actual responses validate against the OpenAPI document the
 * service serves, and every operation of the document is exercised with a success.
 */
type Doc = {
  paths: Record<string, Record<string, { responses?: Record<string, any> }>>;
  components?: unknown;
};

let svc: TestService;
let doc: Doc;
let provider: TestProvider;
const ajv = addFormats.default(new Ajv({ strict: false, allErrors: true, validateFormats: true }));
const validators = new Map<string, ValidateFunction>();
const exercised = new Set<string>();
/**
 * The successful calls as account A's key of the operations that change something (`x-outpost-permission`
 * write, admin or owner; not GET), in order: each must leave one audit-log entry (docs/teams.md, "Audit log").
 */
const changes: { method: string; path: string }[] = [];
const templates: { method: string; path: string; pattern: RegExp }[] = [];

beforeAll(async () => {
  // A custom domain on the allow-list is verified without a DNS lookup (status-page-domains.test.ts does those).
  // A real OpenID provider on loopback for PUT /v1/sso, which discovers it (the policy allows 127.0.0.1).
  provider = await startTestProvider({
    redirectUris: ['http://localhost:3000/auth/sso/callback'],
    clientSecret: 'conformance-client-secret',
  });
  svc = await testService({
    customDomains: { allowList: ['.conformance.example'] },
    outbound: { allow: ['127.0.0.1/32'] },
  });
  doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  ajv.addSchema(doc as object, 'doc');
  for (const [path, item] of Object.entries(doc.paths)) {
    const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    for (const method of Object.keys(item)) templates.push({ method: method.toUpperCase(), path, pattern });
  }
  // Static segments first, so /v1/status-pages/services is not taken for /v1/status-pages/{id}.
  templates.sort((a, b) =>
    (b.path.match(/\{/g)?.length ?? 0) < (a.path.match(/\{/g)?.length ?? 0) ? 1 : -1,
  );
});
afterAll(async () => {
  await svc.close();
  await provider.close();
});

function validatorFor(method: string, path: string, status: number): ValidateFunction | null {
  const key = `${method} ${path} ${status}`;
  if (!validators.has(key)) {
    const response = doc.paths[path]?.[method.toLowerCase()]?.responses?.[String(status)];
    const schema = response?.content?.['application/json']?.schema;
    if (!schema) return null;
    const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'));
    validators.set(key, ajv.compile(rebased));
  }
  return validators.get(key)!;
}

/** Calls the service and checks the answer against the document; returns the JSON body. */
async function call(
  method: string,
  url: string,
  payload?: unknown,
  headers: Record<string, string> = {},
): Promise<any> {
  const res = await svc.app.inject({
    method: method as 'GET',
    url,
    headers: { ...svc.auth(), ...headers },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  const bare = url.split('?')[0]!;
  const template = templates.find((t) => t.method === method && t.pattern.test(bare));
  expect(template, `${method} ${bare} is in the OpenAPI document`).toBeDefined();
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  exercised.add(`${method} ${template!.path}`);
  const permission = (doc.paths[template!.path]?.[method.toLowerCase()] as Record<string, unknown>)?.[
    'x-outpost-permission'
  ];
  const asAccountA = (headers.authorization ?? svc.auth().authorization) === svc.auth().authorization;
  // A person of account A changing their own sign-in (`self`) is in account A's log too.
  const audited = ['write', 'admin', 'owner', 'self'].includes(String(permission));
  if (method !== 'GET' && audited && (asAccountA || permission === 'self')) {
    changes.push({ method, path: template!.path });
  }
  if (res.statusCode === 204) {
    expect(res.body).toBe('');
    return null;
  }
  if (String(res.headers['content-type']).startsWith('application/octet-stream')) {
    const documented = doc.paths[template!.path]?.[method.toLowerCase()]?.responses?.[String(res.statusCode)];
    expect(
      documented?.content?.['application/octet-stream'],
      `${method} ${template!.path} documents its binary ${res.statusCode} response`,
    ).toBeDefined();
    return res.rawPayload;
  }
  const validate = validatorFor(method, template!.path, res.statusCode);
  expect(validate, `${method} ${template!.path} documents its ${res.statusCode} response`).not.toBeNull();
  const body = res.json();
  expect(validate!(body), `${method} ${template!.path}: ${ajv.errorsText(validate!.errors)}`).toBe(true);
  return body;
}

describe('responses conform to /openapi.json', () => {
  it('exercises every operation and every answer validates', async () => {
    // Checks of every type.
    const icmp = await call('POST', '/v1/checks/icmp', icmpBody({ activated: false, tags: ['conf'] }));
    const dnsCheck = await call('POST', '/v1/checks/dns', {
      name: 'dns',
      activated: false,
      request: { recordType: 'A', query: 'a.test' },
    });
    const tcpCheck = await call('POST', '/v1/checks/tcp', {
      name: 'tcp',
      activated: false,
      request: { hostname: '127.0.0.1', port: 9 },
    });
    const grpcCheck = await call('POST', '/v1/checks/grpc', {
      name: 'grpc',
      activated: false,
      request: { url: '127.0.0.1', port: 9, grpcConfig: { mode: 'HEALTH' } },
    });
    const urlCheck = await call('POST', '/v1/checks/url', {
      name: 'url',
      activated: false,
      request: { url: 'http://127.0.0.1:9/' },
    });
    const sslCheck = await call('POST', '/v1/checks/ssl', {
      name: 'ssl',
      activated: false,
      request: { sslConfig: { hostname: '127.0.0.1', port: 9 } },
    });
    const tracerouteCheck = await call('POST', '/v1/checks/traceroute', {
      name: 'traceroute',
      activated: false,
      request: { url: '127.0.0.1' },
    });
    const apiCheck = await call('POST', '/v1/checks/api', {
      name: 'api',
      activated: false,
      request: {
        url: '{{BASE_URL}}/health',
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
      },
    });
    const browserCheck = await call('POST', '/v1/checks/browser', {
      name: 'browser',
      activated: false,
      script: 'await page.goto("about:blank")',
    });
    const multistepCheck = await call('POST', '/v1/checks/multistep', {
      name: 'multistep',
      activated: false,
      script: "test('t', async ({ request }) => { await request.get('http://127.0.0.1:9/'); });",
    });
    const playwrightCheck = await call('POST', '/v1/checks/playwright', {
      name: 'playwright',
      activated: false,
      dependencies: [
        { path: 'package.json', content: '{}' },
        { path: 'playwright.config.ts', content: 'export default {};' },
        { path: 't.spec.ts', content: '' },
      ],
      scriptPath: 't.spec.ts',
    });
    const agenticCheck = await call('POST', '/v1/checks/agentic', {
      name: 'agentic',
      activated: false,
      prompt: 'Open {{BASE_URL}} and check the page says "Outpost"',
      repairMode: 'REVIEW',
      script: 'await page.goto(process.env.BASE_URL);',
    });
    await call('GET', '/v1/checks');
    await call('GET', `/v1/checks/${icmp.id}`);
    await call('PUT', `/v1/checks/${icmp.id}`, { heartbeat: {}, script: '', name: 'renamed' });
    // The routes the hosted API's clients use: per-type updates and the deprecated generic create.
    const byType: [string, { id: string }][] = [
      ['icmp', icmp],
      ['dns', dnsCheck],
      ['tcp', tcpCheck],
      ['url', urlCheck],
      ['grpc', grpcCheck],
      ['api', apiCheck],
      ['browser', browserCheck],
      ['multistep', multistepCheck],
      ['playwright', playwrightCheck],
      ['ssl', sslCheck],
      ['traceroute', tracerouteCheck],
      ['agentic', agenticCheck],
    ];
    for (const [path, check] of byType)
      await call('PUT', `/v1/checks/${path}/${check.id}`, { name: `${path} 2` });
    await call('GET', '/v1/checks?limit=2&page=1&checkType=API&tag=conf&search=api');
    await call('POST', '/v1/checks', {
      checkType: 'TCP',
      name: 'generic',
      activated: false,
      request: { hostname: '127.0.0.1', port: 9 },
    });

    // A session run through the agent protocol, failing so an error group appears.
    const started = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [icmp.id] } });
    const sessionId = started.sessions[0].checkSessionId;
    const agent = { 'x-agent-id': randomUUID() };
    const claim = await call(
      'POST',
      '/v1/agent/jobs/claim',
      {
        agentVersion: 't',
        protocolVersion: PROTOCOL_VERSION,
        checkTypes: ['ICMP'],
        runtimes: [],
        freeSlots: { uptime: 1, main: 0 },
        waitSeconds: 0,
        acknowledges: true,
        hostName: 'conformance',
      },
      agent,
    );
    const job = claim.jobs[0];
    await call('POST', '/v1/agent/jobs/ack', { jobIds: [job.jobId] }, agent);
    await call('POST', `/v1/agent/jobs/${job.jobId}/lease`, undefined, agent);
    const trace = Buffer.from('a trace');
    await call('PUT', `/v1/agent/jobs/${job.jobId}/artifacts/trace.txt`, trace, {
      ...agent,
      'content-type': 'application/octet-stream',
    });
    const now = new Date().toISOString();
    const agentResult = {
      status: 'FAILED',
      hasFailures: true,
      hasErrors: false,
      isDegraded: false,
      overMaxResponseTime: false,
      responseTime: 0,
      startedAt: now,
      stoppedAt: now,
      errorMessage: '100% packet loss to 10.0.0.1',
      assertions: [],
      logs: [],
      runLocation: job.runLocation,
      attempts: 1,
      resultType: 'FINAL',
      artifacts: [{ name: 'trace.txt', sizeBytes: trace.length }],
    };
    await call('POST', `/v1/agent/jobs/${job.jobId}/result`, agentResult, agent);
    // The same result again in a batch: answered as a duplicate.
    const batch = await call(
      'POST',
      '/v1/agent/results',
      { results: [{ jobId: job.jobId, result: agentResult }] },
      agent,
    );
    expect(batch.results[0]).toMatchObject({ jobId: job.jobId, stored: true, duplicate: true });
    await call(
      'POST',
      '/v1/agent/events',
      { message: 'm', agentVersion: 't', platform: 'linux', runtimeVersion: 'v20' },
      agent,
    );
    // The agent that ran it, with its error report.
    const agents = await call('GET', '/v1/agents');
    expect(agents.map((x: { id: string }) => x.id)).toContain(agent['x-agent-id']);
    await call('GET', `/v1/agents/${agent['x-agent-id']}`);
    // Two AGENTIC runs, each reporting a verified repair a person then rejects or applies (REVIEW mode).
    for (const decision of ['reject', 'apply']) {
      await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [agenticCheck.id] } });
      const agenticClaim = await call(
        'POST',
        '/v1/agent/jobs/claim',
        {
          agentVersion: 't',
          protocolVersion: PROTOCOL_VERSION,
          checkTypes: ['AGENTIC'],
          runtimes: ['2026.04'],
          freeSlots: { uptime: 0, main: 1 },
          waitSeconds: 0,
        },
        agent,
      );
      const agenticJob = agenticClaim.jobs[0];
      const at = new Date().toISOString();
      await call(
        'POST',
        `/v1/agent/jobs/${agenticJob.jobId}/result`,
        {
          status: 'PASSED',
          hasFailures: false,
          hasErrors: false,
          isDegraded: false,
          overMaxResponseTime: false,
          responseTime: 900,
          startedAt: at,
          stoppedAt: at,
          errorMessage: null,
          assertions: [],
          logs: [],
          runLocation: agenticJob.runLocation,
          attempts: 1,
          resultType: 'FINAL',
          artifacts: [],
          agenticCheckResult: {
            mode: 'REPAIR',
            summary: 'the page says Outpost',
            assertions: [
              { condition: 'the page says "Outpost"', passed: true, actual: 'Outpost', expected: 'Outpost' },
            ],
            steps: [],
            suggestions: [],
            errors: [],
            modelUsage: { model: 'm', calls: 2, durationMs: 10, promptTokens: 5, completionTokens: 1 },
            scriptVersion: agenticJob.check.request.scriptVersion,
            scriptChange: {
              kind: 'REPAIRED',
              baseVersion: agenticJob.check.request.scriptVersion,
              script: `await page.goto(process.env.BASE_URL); // ${decision}`,
              diff: '',
              reason: 'r',
              verified: true,
            },
          },
        },
        agent,
      );
      const [pending] = await call('GET', `/v1/checks/${agenticCheck.id}/agentic-repairs?limit=10`);
      await call('POST', `/v1/checks/${agenticCheck.id}/agentic-repairs/${pending.id}/${decision}`);
    }
    await call('GET', '/v1/agentic-usage?month=2026-01');
    const reports = await call('GET', `/v1/agents/${agent['x-agent-id']}/error-reports?limit=5`);
    expect(reports).toHaveLength(1);
    await call('GET', `/v1/checks/${icmp.id}/expired-runs`);
    const session = await call('GET', `/v1/check-sessions/${sessionId}`);
    const artifact = await call(
      'GET',
      `/v1/check-results/${icmp.id}/${session.results[0].id}/artifacts/trace.txt`,
    );
    expect(artifact).toEqual(trace);
    // The run's result in the check's results list and on its own (scheduled runs read the same way).
    const results = await call('GET', `/v1/check-results/${icmp.id}?resultType=ALL&hasFailures=true&limit=5`);
    expect(results.map((r: { id: string }) => r.id)).toEqual([session.results[0].id]);
    await call('GET', `/v1/check-results/${icmp.id}/${session.results[0].id}`);
    // The checks page's figures: every check's latest final result and last 24 hours, and one check's.
    const statuses = await call('GET', '/v1/check-statuses');
    expect(statuses.find((x: { checkId: string }) => x.checkId === icmp.id)).toMatchObject({
      hasFailures: true,
    });
    await call('GET', `/v1/check-statuses/${icmp.id}`);
    await call('GET', `/v1/check-sessions/${sessionId}/completion?maxWaitSeconds=1`);
    // A final session is left as it is (session-cancel.test.ts cancels running ones).
    await call('POST', `/v1/check-sessions/${sessionId}/cancel`);
    // Error groups are built by the result outbox's worker, shortly after the result.
    await expect
      .poll(async () => (await svc.request('GET', `/v1/error-groups/checks/${icmp.id}`)).json().length)
      .toBe(1);
    const groups = await call('GET', `/v1/error-groups/checks/${icmp.id}`);
    await call('GET', `/v1/error-groups/${groups[0].id}`);
    expect((await call('GET', '/v1/error-groups')).map((g: { id: string }) => g.id)).toContain(groups[0].id);
    await call('PATCH', `/v1/error-groups/${groups[0].id}`, { archivedUntilNextEvent: true });

    // Check groups, alert channels, snippets.
    const group = await call('POST', '/v1/check-groups', {
      name: 'g',
      activated: true,
      concurrency: 2,
      apiCheckDefaults: {},
    });
    await call('GET', '/v1/check-groups');
    await call('GET', `/v1/check-groups/${group.id}`);
    await call('PUT', `/v1/check-groups/${group.id}`, { name: 'g2' });
    const member = await call('POST', '/v1/checks/tcp', {
      name: 'in group',
      activated: false,
      groupId: group.id,
      request: { hostname: '127.0.0.1', port: 9 },
    });
    await call('GET', `/v1/check-groups/${group.id}/checks`);
    await call('GET', `/v1/check-groups/${group.id}/checks/${member.id}`);
    await call('DELETE', `/v1/checks/${member.id}`);
    const channel = await call('POST', '/v1/alert-channels', {
      type: 'EMAIL',
      config: { address: 'ops@example.test' },
    });
    await call('GET', '/v1/alert-channels');
    await call('GET', `/v1/alert-channels/${channel.id}`);
    await call('PUT', `/v1/alert-channels/${channel.id}`, {
      type: 'EMAIL',
      config: { address: 'oncall@example.test' },
    });
    // Alerting: the account's settings, the alert the failed ICMP run above raised, a channel test
    // (EMAIL without SMTP configured: its attempt fails with the reason), the notifications.
    await call('GET', '/v1/alert-settings');
    await call('PUT', '/v1/alert-settings', { reminders: { amount: 1, interval: 5 } });
    const alerts = await call('GET', `/v1/check-alerts?checkId=${icmp.id}`);
    expect(alerts.map((a: { alertType: string }) => a.alertType)).toEqual(['ALERT_FAILURE']);
    await call('GET', `/v1/check-alerts/${icmp.id}`);
    const tested = await call('POST', `/v1/alert-channels/${channel.id}/test`);
    await call('GET', '/v1/alert-notifications');
    await call('GET', `/v1/alert-notifications/${tested.id}`);
    // A heartbeat monitor and its pings (none yet).
    const heartbeat = await call('POST', '/v1/checks/heartbeat', {
      name: 'nightly backup',
      heartbeat: { period: 1, periodUnit: 'days', grace: 30, graceUnit: 'minutes' },
    });
    await call('GET', `/v1/checks/${heartbeat.id}/heartbeat-pings`);
    await call('PUT', `/v1/checks/heartbeat/${heartbeat.id}`, { name: 'nightly backup 2' });
    const snippet = await call('POST', '/v1/snippets', { name: 's', script: 'console.log(1)' });
    await call('GET', '/v1/snippets');
    await call('GET', `/v1/snippets/${snippet.id}`);
    await call('PUT', `/v1/snippets/${snippet.id}`, { name: 's2', script: 'console.log(2)' });
    const window = await call('POST', '/v1/maintenance-windows', {
      name: 'w',
      startsAt: '2026-01-01T02:00:00Z',
      endsAt: '2026-01-01T04:00:00Z',
      repeatUnit: 'WEEK',
    });
    await call('GET', '/v1/maintenance-windows');
    await call('GET', `/v1/maintenance-windows/${window.id}`);
    await call('PUT', `/v1/maintenance-windows/${window.id}`, { timezone: 'Europe/Berlin' });
    await call('DELETE', `/v1/maintenance-windows/${window.id}`);

    // Single sign-on.
    await call('GET', '/v1/sso');
    await call('PUT', '/v1/sso', {
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
      defaultRole: 'READ_ONLY',
      groupsClaim: 'groups',
      groupRoles: { ops: 'ADMIN' },
      allowedDomains: ['conformance.example'],
      ssoOnly: false,
    });
    await call('DELETE', '/v1/sso');

    // Private locations and their keys.
    const location = await call('POST', '/v1/private-locations', { name: 'Lab', slugName: 'lab-conf' });
    await call('GET', '/v1/private-locations');
    await call('GET', `/v1/private-locations/${location.id}`);
    await call('PUT', `/v1/private-locations/${location.id}`, { name: 'Lab 2' });
    const key = await call('POST', `/v1/private-locations/${location.id}/keys`);
    await call('DELETE', `/v1/private-locations/${location.id}/keys/${key.id ?? key.keys?.at(-1)?.id}`);

    // Status pages, services, incidents.
    const service = await call('POST', '/v1/status-pages/services', { name: 'API' });
    await call('GET', '/v1/status-pages/services');
    await call('GET', `/v1/status-pages/services/${service.id}`);
    await call('PUT', `/v1/status-pages/services/${service.id}`, { name: 'API 2' });
    const page = await call('POST', '/v1/status-pages', {
      name: 'Status',
      url: 'conf-status',
      cards: [{ name: 'Core', services: [{ id: service.id }] }],
    });
    await call('GET', '/v1/status-pages');
    await call('GET', `/v1/status-pages/${page.id}`);
    await call('PUT', `/v1/status-pages/${page.id}`, {
      name: 'Status 2',
      url: 'conf-status',
      cards: [],
      customDomain: 'status.conformance.example',
    });
    await call('POST', `/v1/status-pages/${page.id}/custom-domain/verify`);
    // A private page's access keys: a second one for rotation, then the first deleted.
    const privatePage = await call('POST', '/v1/status-pages', {
      name: 'Private',
      url: 'conf-private',
      cards: [],
      isPrivate: true,
    });
    const pageKey = await call('POST', `/v1/status-pages/${privatePage.id}/keys`);
    await call('DELETE', `/v1/status-pages/${privatePage.id}/keys/${pageKey.id}`);
    // A subscriber (through the public form), listed and removed.
    const subscribed = await svc.app.inject({
      method: 'POST',
      url: '/status/conf-status/subscribe',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'email=reader%40example.test&all=1',
    });
    expect(subscribed.statusCode, subscribed.body).toBeLessThan(300);
    const subscribers = await call('GET', `/v1/status-pages/${page.id}/subscribers`);
    expect(subscribers).toHaveLength(1);
    await call('DELETE', `/v1/status-pages/${page.id}/subscribers/${subscribers[0].id}`);
    const incident = await call('POST', '/v1/incidents', {
      name: 'Outage',
      impact: 'MAJOR',
      services: [{ id: service.id }],
    });
    await call('GET', '/v1/incidents');
    await call('GET', `/v1/incidents/${incident.id}?includeAllIncidentUpdates=true`);
    await call('PUT', `/v1/incidents/${incident.id}`, { name: 'Outage', impact: 'MINOR' });
    await call('POST', `/v1/incidents/${incident.id}/updates`, { status: 'RESOLVED', description: 'fixed' });
    // The hosted API's status-page incident routes (the CLI's).
    const pageIncident = await call('POST', '/v1/status-pages/incidents', {
      name: 'Slow',
      severity: 'MEDIUM',
      services: [{ id: service.id, name: service.name, accountId: service.accountId }],
      incidentUpdates: [{ description: 'Looking into it' }],
    });
    await call('GET', '/v1/status-pages/incidents?limit=5');
    await call('GET', `/v1/status-pages/incidents/${pageIncident.id}`);
    await call('PUT', `/v1/status-pages/incidents/${pageIncident.id}`, {
      ...pageIncident,
      severity: 'CRITICAL',
    });
    await call('PATCH', `/v1/status-pages/incidents/${pageIncident.id}`, { severity: 'MINOR' });
    const pageUpdates = `/v1/status-pages/incidents/${pageIncident.id}/incident-updates`;
    const pageUpdate = await call('POST', pageUpdates, { description: 'Fixed', status: 'RESOLVED' });
    await call('GET', pageUpdates);
    await call('GET', `${pageUpdates}/${pageUpdate.id}`);
    await call('PUT', `${pageUpdates}/${pageUpdate.id}`, { description: 'Fixed for good' });
    await call('DELETE', `${pageUpdates}/${pageUpdate.id}`);
    await call('DELETE', `/v1/status-pages/incidents/${pageIncident.id}`);

    // Runtimes, variables, client certificates.
    const runtimes = await call('GET', '/v1/runtimes');
    await call('GET', `/v1/runtimes/${runtimes[0].name}`);
    await call('POST', '/v1/variables', { key: 'BASE_URL', value: 'https://example.test' });
    await call('GET', '/v1/variables');
    await call('GET', '/v1/variables/BASE_URL');
    await call('PUT', '/v1/variables/BASE_URL', { value: 'https://example.test/v2' });
    const ca = createTestCa();
    try {
      const pair = ca.issue({ commonName: 'client.example.test', altNames: ['DNS:client.example.test'] });
      const cert = await call('POST', '/v1/client-certificates', {
        host: '*.example.test',
        cert: pair.cert,
        key: pair.key,
        ca: ca.caCert,
      });
      await call('GET', '/v1/client-certificates');
      await call('GET', `/v1/client-certificates/${cert.id}`);
      await call('DELETE', `/v1/client-certificates/${cert.id}`);
    } finally {
      ca.destroy();
    }
    if (doc.paths['/v1/analytics/api-checks/{id}']) {
      const url = await call('POST', '/v1/checks/url', {
        name: 'url2',
        activated: false,
        request: { url: 'http://127.0.0.1:9/' },
      });
      await call('GET', `/v1/analytics/api-checks/${url.id}?metrics=responseTime,availability`);
      await call('POST', '/v1/analytics/checks?quickRange=last7Days', { checkIds: [url.id] });
    }

    // API keys: one made, listed, revoked.
    const apiKey = await call('POST', '/v1/api-keys', { name: 'ci' });
    await call('GET', '/v1/api-keys');
    await call('DELETE', `/v1/api-keys/${apiKey.id}`);
    // People (docs/teams.md): a person signed in by password makes a key of theirs for the /v1/users/me routes.
    const password = 'conformance password';
    const person = await new Users(svc.context.db).create(
      svc.accountA.id,
      { email: 'conformance@example.test', role: 'ADMIN', password },
      Date.now(),
    );
    const signedIn = await svc.app.inject({
      method: 'POST',
      url: '/auth/session',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: 'conformance@example.test', password }),
    });
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    const setCookie = [signedIn.headers['set-cookie']].flat()[0]!;
    const madeKey = await svc.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: {
        'content-type': 'application/json',
        cookie: setCookie.split(';')[0]!,
        'x-csrf-token': signedIn.json().csrfToken,
      },
      payload: JSON.stringify({ name: 'mine' }),
    });
    expect(madeKey.statusCode, madeKey.body).toBe(201);
    const asPerson = { authorization: `Bearer ${madeKey.json().rawKey}` };
    await call('GET', '/v1/users');
    const invited = await call('POST', '/v1/users/invitations', {
      email: 'invitee@example.test',
      role: 'READ_ONLY',
    });
    await call('PUT', `/v1/users/${invited.id}`, { name: 'Invitee' });
    await call('POST', `/v1/users/${invited.id}/sessions/revoke`);
    await call('GET', '/v1/users/me', undefined, asPerson);
    const mySessions = await call('GET', '/v1/users/me/sessions', undefined, asPerson);
    const enrol = async () => {
      const setup = await call('POST', '/v1/users/me/two-factor', undefined, asPerson);
      const totp = new TOTP({
        secret: Secret.fromBase32(setup.secret),
        algorithm: 'SHA1',
        digits: 6,
        period: 30,
      });
      return call('POST', '/v1/users/me/two-factor/confirm', { code: totp.generate() }, asPerson);
    };
    const { recoveryCodes } = await enrol();
    await call('DELETE', '/v1/users/me/two-factor', { password, code: recoveryCodes[0] }, asPerson);
    await enrol();
    await call('DELETE', `/v1/users/${person.id}/two-factor`);
    await call('DELETE', `/v1/users/me/sessions/${mySessions[0].id}`, undefined, asPerson);
    await call(
      'PUT',
      '/v1/users/me/password',
      { currentPassword: password, newPassword: 'a new password!' },
      asPerson,
    );
    await call('DELETE', `/v1/users/${invited.id}`);
    // Test runs ("Run before saving") of every type an agent runs, while the agent above is connected.
    const testRunBodies: Record<string, Record<string, unknown>> = {
      icmp: icmpBody(),
      dns: { name: 'dns', request: { recordType: 'A', query: 'a.test' } },
      tcp: { name: 'tcp', request: { hostname: '127.0.0.1', port: 9 } },
      url: { name: 'url', request: { url: 'http://127.0.0.1:9/' } },
      grpc: { name: 'grpc', request: { url: '127.0.0.1', port: 9, grpcConfig: { mode: 'HEALTH' } } },
      api: { name: 'api', request: { url: 'http://127.0.0.1:9/' } },
      ssl: { name: 'ssl', request: { sslConfig: { hostname: '127.0.0.1', port: 9 } } },
      traceroute: { name: 'traceroute', request: { url: '127.0.0.1' } },
      browser: { name: 'browser', script: 'await page.goto("about:blank")' },
      multistep: { name: 'multistep', script: "test('t', async () => {});" },
      agentic: { name: 'agentic', prompt: 'Open http://127.0.0.1:9/ and check it answers' },
      playwright: {
        name: 'playwright',
        dependencies: [
          { path: 'package.json', content: '{}' },
          { path: 'playwright.config.ts', content: 'export default {};' },
          { path: 't.spec.ts', content: '' },
        ],
        scriptPath: 't.spec.ts',
      },
    };
    for (const [type, body] of Object.entries(testRunBodies)) {
      await call('POST', `/v1/check-sessions/test/${type}`, { ...body, locations: ['us-east-1'] });
    }
    // The agent says it stopped (last: it is then shown disconnected).
    await call('POST', '/v1/agent/stopped', undefined, agent);

    // Dashboards and the triggers of a check and a group.
    const dashboard = await call('POST', '/v1/dashboards', { header: 'Ops', customUrl: 'conformance-board' });
    await call('GET', '/v1/dashboards');
    await call('GET', `/v1/dashboards/${dashboard.dashboardId}`);
    await call('PUT', `/v1/dashboards/${dashboard.dashboardId}`, { header: 'Ops 2' });
    await call('DELETE', `/v1/dashboards/${dashboard.dashboardId}`);
    await call('POST', `/v1/triggers/checks/${icmp.id}`);
    await call('GET', `/v1/triggers/checks/${icmp.id}`);
    await call('DELETE', `/v1/triggers/checks/${icmp.id}`);
    await call('POST', `/v1/triggers/check-groups/${group.id}`);
    await call('GET', `/v1/triggers/check-groups/${group.id}`);
    await call('DELETE', `/v1/triggers/check-groups/${group.id}`);

    // Accounts, and a monitoring-as-code project deployed and deleted (projects.test.ts goes further).
    await call('GET', '/v1/accounts/me');
    await call('GET', '/v1/accounts');
    await call('GET', `/v1/accounts/${svc.accountA.id}`);
    await call('GET', '/next/accounts');
    await call('GET', `/next/accounts/${svc.accountA.id}`);
    await call('GET', '/v1/accounts/me/entitlements');
    await call('GET', '/next/users/me');
    await call('POST', '/next/checkly-storage/upload-code-bundle', Buffer.from('zip'), {
      'content-type': 'application/octet-stream',
    });
    await call('POST', '/next/projects', { logicalId: 'conformance-project', name: 'Conformance' });
    await call('POST', '/next-v2/projects/deploy?dryRun=false', {
      project: { logicalId: 'conformance-project', name: 'Conformance', repoUrl: null },
      resources: [
        {
          logicalId: 'mail',
          type: 'alert-channel',
          member: true,
          payload: { type: 'EMAIL', config: { address: 'a@example.com' } },
        },
      ],
    });
    await call('GET', '/next/projects');
    await call('GET', '/next/projects/conformance-project');
    await call('DELETE', '/next/projects/conformance-project');

    // Deletes last.
    await call('DELETE', '/v1/variables/BASE_URL');
    await call('DELETE', `/v1/incidents/${incident.id}`);
    await call('DELETE', `/v1/status-pages/${page.id}`);
    await call('DELETE', `/v1/status-pages/${privatePage.id}`);
    await call('DELETE', `/v1/status-pages/services/${service.id}`);
    await call('DELETE', `/v1/private-locations/${location.id}`);
    await call('DELETE', `/v1/snippets/${snippet.id}`);
    await call('DELETE', `/v1/alert-channels/${channel.id}`);
    await call('DELETE', `/v1/check-groups/${group.id}`);
    await call('DELETE', `/v1/checks/${heartbeat.id}`);
    await call('DELETE', `/v1/checks/${agenticCheck.id}`);
    await call('DELETE', `/v1/checks/${icmp.id}`);

    // Every change above left one audit-log entry, in the order of the changes (written after each answer).
    await call('GET', '/v1/audit-log?limit=100');
    const entries: { action: string; resourceType: string; after: unknown }[] = [];
    await expect
      .poll(
        async () => {
          entries.length = 0;
          let url: string | null = '/v1/audit-log?limit=100';
          while (url !== null) {
            const res: { json(): any; headers: Record<string, unknown> } = await svc.app.inject({
              method: 'GET',
              url,
              headers: svc.auth(),
            });
            entries.push(...res.json());
            const next: unknown = res.headers['x-next-id'];
            url = typeof next === 'string' ? `/v1/audit-log?limit=100&nextId=${next}` : null;
          }
          return entries.length;
        },
        { timeout: 10_000 },
      )
      .toBeGreaterThanOrEqual(changes.length);
    // Oldest first; a project deploy's own changes (its resources, made through /v1) come before its entry.
    const changed = entries.reverse().filter((entry) => entry.resourceType !== 'session');
    let next = 0;
    const extra: string[] = [];
    for (const change of changes) {
      const { action } = resourceOf(change.method, change.path.replace(/\{([^}]+)\}/g, ':$1'), {}, null);
      while (next < changed.length && changed[next]!.action !== action) extra.push(changed[next++]!.action);
      expect(next, `${change.method} ${change.path} left an entry ${action}`).toBeLessThan(changed.length);
      next += 1;
    }
    extra.push(...changed.slice(next).map((entry) => entry.action));
    // Not among the calls above: the key the person made in their web session, and a project deploy's channel.
    expect(extra).toEqual(['api-key.create', 'alert-channel.create', 'alert-channel.delete']);
    const changing = templates.filter(
      (t) =>
        t.method !== 'GET' &&
        ['write', 'admin', 'owner', 'self'].includes(
          String(
            (doc.paths[t.path]?.[t.method.toLowerCase()] as Record<string, unknown>)?.[
              'x-outpost-permission'
            ],
          ),
        ),
    );
    expect(changing.length).toBeGreaterThan(60);
    const audited = new Set(changes.map((c) => `${c.method} ${c.path}`));
    expect(changing.map((t) => `${t.method} ${t.path}`).filter((op) => !audited.has(op))).toEqual([]);

    const all = templates.map((t) => `${t.method} ${t.path}`).filter((op) => op !== 'GET /openapi.json');
    expect(all.filter((op) => !exercised.has(op))).toEqual([]);
  });
});

describe('every error answer carries its code', () => {
  const json = { 'content-type': 'application/json' };
  it.each([
    ['a schema failure', 'POST', '/v1/checks/icmp', { payload: { name: 1 } }, 'OUTPOST_ERR_VALIDATION'],
    [
      'a body that is not JSON',
      'POST',
      '/v1/variables',
      { payload: '{"key":', headers: json },
      'OUTPOST_ERR_MALFORMED_REQUEST',
    ],
    [
      // No body (the hosted API's clients send DELETEs so): a route that needs one says so like any schema failure.
      'an empty JSON body where one is needed',
      'POST',
      '/v1/variables',
      { payload: '', headers: json },
      'OUTPOST_ERR_VALIDATION',
    ],
    ['a URL that does not decode', 'GET', '/v1/checks/%E0%A4%A', {}, 'OUTPOST_ERR_MALFORMED_REQUEST'],
    ['no key', 'GET', '/v1/checks', { auth: false }, 'OUTPOST_ERR_UNAUTHORIZED'],
    ['an id of no check', 'GET', '/v1/checks/nope', {}, 'OUTPOST_ERR_NOT_FOUND'],
    ['an unknown route', 'GET', '/v1/nowhere', {}, 'OUTPOST_ERR_NOT_FOUND'],
    [
      'a body over 1 MB',
      'POST',
      '/v1/variables',
      { payload: `"${'x'.repeat(1024 * 1024 + 1)}"`, headers: json },
      'OUTPOST_ERR_PAYLOAD_TOO_LARGE',
    ],
    [
      'a path parameter over 256 characters',
      'GET',
      `/v1/checks/${'x'.repeat(300)}`,
      {},
      'OUTPOST_ERR_URI_TOO_LONG',
    ],
    [
      'a body that is not JSON at all',
      'POST',
      '/v1/variables',
      { payload: '<key>A</key>', headers: { 'content-type': 'application/xml' } },
      'OUTPOST_ERR_UNSUPPORTED_MEDIA_TYPE',
    ],
  ] as const)('%s: %s %s', async (_what, method, url, options, code) => {
    const {
      payload,
      headers = {},
      auth = true,
    } = options as {
      payload?: unknown;
      headers?: Record<string, string>;
      auth?: boolean;
    };
    const res = await svc.app.inject({
      method,
      url,
      headers: { ...(auth ? svc.auth() : {}), ...headers },
      ...(payload === undefined ? {} : { payload: payload as string }),
    });
    expect(res.json()).toMatchObject({
      statusCode: SERVICE_ERROR_CODES[code].status,
      attributes: { code },
    });
    expect(res.statusCode).toBe(SERVICE_ERROR_CODES[code].status);
  });
});
