// @ts-nocheck: typechecked by the Checkly CLI, which brings the `checkly` package (test/compat/checkly-cli.test.ts).
import {
  ApiCheck,
  AssertionBuilder,
  BrowserCheck,
  CheckGroupV2,
  DnsAssertionBuilder,
  DnsMonitor,
  EmailAlertChannel,
  Frequency,
  HeartbeatMonitor,
  IcmpMonitor,
  MaintenanceWindow,
  StatusPage,
  StatusPageService,
  TcpAssertionBuilder,
  TcpMonitor,
  UrlAssertionBuilder,
  UrlMonitor,
  WebhookAlertChannel,
} from 'checkly/constructs';

// Every construct the Outpost deploy maps; names read from OUTPOST_FIXTURE_* so the test can change them.
const renamed = process.env.OUTPOST_FIXTURE_RENAME === '1';
const withDns = process.env.OUTPOST_FIXTURE_DROP_DNS !== '1';

export const email = new EmailAlertChannel('fixture-email', {
  address: 'oncall@example.com',
  sendFailure: true,
  sendRecovery: true,
  sendDegraded: false,
});

export const webhook = new WebhookAlertChannel('fixture-webhook', {
  name: 'Fixture webhook',
  method: 'POST',
  url: new URL('https://hooks.example.com/outpost'),
  template: '{"check":"{{CHECK_NAME}}"}',
  webhookSecret: 'fixture-webhook-secret-PLANTED-7f3a',
});

export const group = new CheckGroupV2('fixture-group', {
  name: 'Fixture group',
  activated: true,
  locations: ['eu-west-1'],
  tags: ['fixture'],
  alertChannels: [email],
});

new ApiCheck('fixture-api', {
  name: renamed ? 'Fixture API (renamed)' : 'Fixture API',
  group,
  alertChannels: [webhook],
  degradedResponseTime: 5000,
  maxResponseTime: 10000,
  request: {
    method: 'GET',
    url: 'https://api.example.com/health',
    assertions: [AssertionBuilder.statusCode().equals(200)],
  },
});

new BrowserCheck('fixture-browser', {
  name: 'Fixture browser',
  frequency: Frequency.EVERY_10M,
  code: { content: "await page.goto('https://example.com');" },
});

new UrlMonitor('fixture-url', {
  name: 'Fixture URL',
  frequency: Frequency.EVERY_5M,
  request: { url: 'https://example.com', assertions: [UrlAssertionBuilder.statusCode().equals(200)] },
});

new TcpMonitor('fixture-tcp', {
  name: 'Fixture TCP',
  request: {
    hostname: 'example.com',
    port: 443,
    assertions: [TcpAssertionBuilder.responseTime().lessThan(2000)],
  },
});

if (withDns) {
  new DnsMonitor('fixture-dns', {
    name: 'Fixture DNS',
    request: {
      recordType: 'A',
      query: 'example.com',
      assertions: [DnsAssertionBuilder.responseCode().equals('NOERROR')],
    },
  });
}

new IcmpMonitor('fixture-icmp', {
  name: 'Fixture ICMP',
  request: { hostname: 'example.com' },
});

new HeartbeatMonitor('fixture-heartbeat', {
  name: 'Fixture heartbeat',
  period: 1,
  periodUnit: 'hours',
  grace: 10,
  graceUnit: 'minutes',
});

new MaintenanceWindow('fixture-maintenance', {
  name: 'Fixture maintenance',
  tags: ['fixture'],
  startsAt: new Date('2030-01-01T00:00:00Z'),
  endsAt: new Date('2030-01-01T02:00:00Z'),
});

const service = new StatusPageService('fixture-service', { name: 'Fixture service' });

new StatusPage('fixture-status-page', {
  name: 'Fixture status',
  url: 'outpost-cli-fixture',
  cards: [{ name: 'Fixture card', services: [service] }],
});
