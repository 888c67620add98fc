import type { ComponentProps } from 'preact';
import { render, screen } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { ResultView } from '../../../app/src/results/view.js';
// The harness unmounts what a test rendered after it.
import '../dom.js';

// The result view of gRPC monitors in a real DOM, fed stored results of the shape the agent reports
// (docs/checks.md, "gRPC"): the call, its status, the phases, the certificate, the message and metadata.

type Result = ComponentProps<typeof ResultView>['result'];
type GrpcPart = NonNullable<Result['grpcCheckResult']>;

const GRPC: GrpcPart = {
  grpcStatusCode: 0,
  healthStatus: null,
  timingPhases: { dns: 2, connect: 11, tls: 19, ready: 33, reflection: 8, firstResponse: 12, total: 61 },
  requestError: null,
  request: {
    url: 'grpc.example.com',
    port: 443,
    grpcMode: 'BEHAVIOR',
    grpcMethod: 'outpost.test.Users/GetUser',
  },
  response: {
    grpcMode: 'BEHAVIOR',
    host: 'grpc.example.com',
    resolvedIp: '203.0.113.7',
    ipFamily: 'IPv4',
    resolver: 'dns',
    port: 443,
    grpcMethod: 'outpost.test.Users/GetUser',
    responseMessage: '{"id":"42","name":"Ada"}',
    responseTruncated: false,
    grpcStatusCode: 0,
    grpcStatusMessage: 'OK',
    healthStatus: null,
    healthStatusLabel: null,
    metadata: [{ key: 'x-served-by', value: 'outpost-test' }],
    discoveredMethods: ['outpost.test.Users/GetUser', 'outpost.test.Users/Slow'],
    descriptorSource: 'reflection',
    tls: {
      protocol: 'TLSv1.3',
      certificate: {
        subject: { commonName: 'grpc.example.com', organization: null },
        issuer: { commonName: 'Example CA', organization: 'Example' },
        subjectAltNames: ['DNS:grpc.example.com'],
        validFrom: '2026-01-01T00:00:00.000Z',
        validTo: '2026-06-01T00:00:00.000Z',
        daysRemaining: 80,
        fingerprint256: 'AA:BB',
        serialNumber: '1000',
        authorized: true,
        authorizationError: null,
      },
    },
    requestError: null,
  },
};

function result(fields: Partial<Result> = {}): Result {
  return {
    status: 'PASSED',
    hasFailures: false,
    hasErrors: false,
    isDegraded: false,
    responseTime: 61,
    startedAt: '2026-03-01T10:00:00.000Z',
    stoppedAt: '2026-03-01T10:00:00.061Z',
    runLocation: 'us-east-1',
    attempts: 1,
    resultType: 'FINAL',
    errorMessage: null,
    assertions: [],
    logs: [],
    artifacts: [],
    ...fields,
  };
}

const renderResult = (r: Result) =>
  render(<ResultView result={r} checkId="chk-1" resultId="res-1" level={2} />);

describe('a gRPC result', () => {
  it('shows the call, its status, where the types came from, the phases, certificate, message and metadata', () => {
    renderResult(result({ grpcCheckResult: GRPC }));
    expect(screen.getByRole('heading', { name: 'gRPC call' })).toBeTruthy();
    expect(screen.getByText('outpost.test.Users/GetUser on grpc.example.com:443')).toBeTruthy();
    expect(screen.getByText('0 OK')).toBeTruthy();
    expect(screen.getByText('The server’s reflection')).toBeTruthy();
    const timing = screen.getByRole('table', { name: 'Timing of the gRPC run, by phase' });
    expect(timing.textContent).toContain('TLS handshake19 ms');
    expect(timing.textContent).toContain('First response12 ms');
    expect(screen.getByRole('heading', { name: 'Certificate' })).toBeTruthy();
    expect(screen.getByText(/"name":"Ada"/)).toBeTruthy();
    expect(screen.getByText('outpost-test')).toBeTruthy();
    // The assertions section says when there are none, as for the other uptime types.
    expect(screen.getByText('The check has no assertions.')).toBeTruthy();
  });

  it('says why there was no status, and the health status of a health check', () => {
    renderResult(
      result({
        status: 'FAILED',
        grpcCheckResult: {
          ...GRPC,
          grpcStatusCode: null,
          requestError: 'cannot resolve grpc.example.com: ENOTFOUND',
          response: { ...GRPC.response, grpcStatusCode: null, responseMessage: '', metadata: [], tls: null },
        },
      }),
    );
    expect(screen.getByText('No status: cannot resolve grpc.example.com: ENOTFOUND')).toBeTruthy();
    expect(screen.getByText('No response message.')).toBeTruthy();
    expect(screen.getByText('No metadata came back.')).toBeTruthy();
  });

  it('shows a NOT_SERVING health answer as a failure', () => {
    renderResult(
      result({
        status: 'FAILED',
        grpcCheckResult: {
          ...GRPC,
          healthStatus: 2,
          response: {
            ...GRPC.response,
            grpcMode: 'HEALTH',
            grpcMethod: 'grpc.health.v1.Health/Check',
            healthStatus: 2,
            healthStatusLabel: 'NOT_SERVING',
            descriptorSource: 'builtIn',
          },
        },
      }),
    );
    expect(screen.getByText('NOT_SERVING')).toBeTruthy();
    expect(screen.getByText('Health check')).toBeTruthy();
  });
});
